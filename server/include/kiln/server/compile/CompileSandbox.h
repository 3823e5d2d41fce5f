//===- CompileSandbox.h - the limits compiles and imports run under --*- C++ -*-===//
//
// This file declares the process sandbox shared by compile workers and the
// TorchScript importer: kilnd's --compile-cpu-seconds, --compile-memory-bytes
// and --compile-timeout-s, a minimal environment and a private working
// folder; and how a process that hit a limit becomes a status.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/ChildProcess.h"

#include "absl/status/status.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kiln::server {

struct CompileLimits {
  /// RLIMIT_CPU (--compile-cpu-seconds).
  int64_t cpuSeconds = 600;
  /// RLIMIT_AS (--compile-memory-bytes).
  int64_t memoryBytes = int64_t{8} << 30;
  /// Wall clock (--compile-timeout-s): a process still running is killed.
  std::chrono::seconds wallTimeout{900};
};

/// How to run a sandboxed process in `dir`: the limits, `dir` as working
/// folder, TMPDIR and HOME, and an environment of PATH and LANG only, so
/// none of kilnd's settings or credentials reach it.
ChildOptions sandboxedChild(const CompileLimits &limits,
                            const std::filesystem::path &dir);

/// The status for a sandboxed process that hit a limit: DEADLINE_EXCEEDED
/// for CPU time (SIGXCPU, or SIGKILL with the CPU time used up),
/// RESOURCE_EXHAUSTED
/// when it exited with `outOfMemoryExit`; each names `what` (which graph, in
/// which stage) and the flag. nullopt when no limit explains `exit`.
std::optional<absl::Status> limitFailure(const ChildExit &exit,
                                         const CompileLimits &limits,
                                         int outOfMemoryExit,
                                         const std::string &what);

/// The status for a sandboxed process killed at the wall-clock limit.
absl::Status wallClockFailure(const CompileLimits &limits,
                              const std::string &what);

} // namespace kiln::server
