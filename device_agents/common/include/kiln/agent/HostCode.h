//===- HostCode.h - what agents that load host machine code share ---------===//
//
// This file declares the helpers of agents that dlopen machine code for this
// host (the cpu agent's artifacts, the simulated acap array's host part):
// the host's architecture, whether a triple runs here, and dlerror's text.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace kiln::agent {

/// This machine's architecture as uname reports it ("x86_64", "aarch64").
std::string hostArch();

/// Whether code for LLVM triple `triple` runs on this machine: its
/// architecture is the host's (arm64 is aarch64).
bool tripleRunsHere(std::string_view triple);

/// dlerror()'s message, or a generic one when it has none.
std::string dlerrorText();

} // namespace kiln::agent
