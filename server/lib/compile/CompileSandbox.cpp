//===- CompileSandbox.cpp - the limits compiles and imports run under -----===//
//
// This file implements the sandbox options and the statuses of its limits.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/compile/CompileSandbox.h"

#include "absl/strings/str_cat.h"

#include <csignal>
#include <cstdlib>

namespace kiln::server {

ChildOptions sandboxedChild(const CompileLimits &limits,
                            const std::filesystem::path &dir) {
  const char *path = std::getenv("PATH");
  ChildOptions options;
  options.timeout = limits.wallTimeout;
  options.environment = std::vector<std::string>{
      absl::StrCat("PATH=", path && *path ? path : "/usr/bin:/bin"),
      "LANG=C.UTF-8", absl::StrCat("TMPDIR=", dir.string()),
      absl::StrCat("HOME=", dir.string())};
  options.limits.cpuSeconds = limits.cpuSeconds;
  options.limits.addressSpaceBytes = limits.memoryBytes;
  options.workingDirectory = dir;
  return options;
}

std::optional<absl::Status> limitFailure(const ChildExit &exit,
                                         const CompileLimits &limits,
                                         int outOfMemoryExit,
                                         const std::string &what) {
  if (exit.exited && exit.code == outOfMemoryExit)
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ran out of its memory limit of ", limits.memoryBytes,
        " bytes (--compile-memory-bytes)"));
  // SIGXCPU at the soft limit; SIGKILL at the hard limit one second later
  // (a SIGKILL with CPU time to spare came from elsewhere, the kernel's OOM
  // killer say, and is no CPU-time limit).
  bool cpuLimit =
      limits.cpuSeconds > 0 &&
      (exit.signal == SIGXCPU ||
       (exit.signal == SIGKILL &&
        exit.cpuSeconds >= static_cast<double>(limits.cpuSeconds)));
  if (!exit.exited && cpuLimit)
    return absl::DeadlineExceededError(absl::StrCat(
        what, ": used up its CPU-time limit of ", limits.cpuSeconds,
        " s (--compile-cpu-seconds)"));
  return std::nullopt;
}

absl::Status wallClockFailure(const CompileLimits &limits,
                              const std::string &what) {
  return absl::DeadlineExceededError(absl::StrCat(
      what, ": ran past its wall-clock limit of ", limits.wallTimeout.count(),
      " s (--compile-timeout-s) and was killed"));
}

} // namespace kiln::server
