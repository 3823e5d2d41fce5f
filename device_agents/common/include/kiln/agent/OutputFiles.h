//===- OutputFiles.h - a result's output memfds, sealed for the caller -*- C++ -*-===//
//
// This file declares sealOutputFiles: what the local link and a direct
// channel do with the memfds a task's outputs were written into before
// passing them on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/TaskRunner.h"

#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <vector>

namespace kiln::agent {

/// Seals every output file of `files` (the executable's mapping is gone by
/// then: the receiver keeps the bytes it checks, and refuses an unsealed
/// file), naming each output in `indices` and its descriptor in `fds`. When
/// one cannot be sealed, `result` becomes INTERNAL without outputs and
/// `indices` and `fds` are left empty.
void sealOutputFiles(const LocalFiles &files, v1::TaskResult &result,
                     google::protobuf::RepeatedField<uint32_t> &indices,
                     std::vector<int> &fds);

} // namespace kiln::agent
