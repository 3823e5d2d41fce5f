//===- DeviceBackend.cpp - the interface every device backend implements --===//
//
// This file anchors the DeviceBackend and LoadedExecutable vtables.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/DeviceBackend.h"

namespace kiln::agent {

LoadedExecutable::~LoadedExecutable() = default;
DeviceBackend::~DeviceBackend() = default;

} // namespace kiln::agent
