//===- AgentProtocol.h - the version of the agent protocol ----------------===//
//
// This file declares the agent protocol version that kilnd and the agents
// exchange on Agent.Connect (RegisterAgent/AgentRegistered.protocol_version).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace kiln {

/// Version 2: tasks carry kilnd's Ed25519 signature, registrations a
/// session token. Version 1 never existed on the wire; 0 is any build from
/// before versioning. kilnd accepts exactly its own version.
inline constexpr uint32_t kAgentProtocolVersion = 2;

/// The device property listing the kernel libraries an agent installs in
/// the artifacts it loads, comma separated ("onednn"): kilnd sends an
/// executable whose manifest names a kernel_library only to devices that
/// list it.
inline constexpr const char *kKernelLibrariesProperty = "kernel_libraries";

} // namespace kiln
