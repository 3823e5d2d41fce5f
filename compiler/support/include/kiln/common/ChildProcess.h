//===- ChildProcess.h - run a program to completion -----------------------===//
//
// This file declares runChildProcess(): spawn a program with its output in a
// log file and wait for it, with an optional time limit. The compiler runs
// the linker this way and kilnd the TorchScript importer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// How a child process ended.
struct ChildExit {
  /// True when it exited (`code` is its status); false when a signal
  /// (`signal`) ended it.
  bool exited = false;
  int code = 0;
  int signal = 0;
  /// CPU seconds (user + system) the child used, from wait4's rusage.
  double cpuSeconds = 0;

  bool succeeded() const { return exited && code == 0; }
  /// "exited with status 3", "was killed by signal 11 (Segmentation fault)".
  std::string describe() const;
};

/// Resource limits set in the child before it runs its program; 0: none.
struct ChildLimits {
  /// RLIMIT_CPU: SIGXCPU at this many seconds of CPU, SIGKILL a second later.
  int64_t cpuSeconds = 0;
  /// RLIMIT_AS: allocations past this address-space size fail.
  int64_t addressSpaceBytes = 0;
};

struct ChildOptions {
  /// A child still running after this is killed (DEADLINE_EXCEEDED).
  std::optional<std::chrono::milliseconds> timeout;
  /// "NAME=value" entries: the child's whole environment instead of this
  /// process's.
  std::optional<std::vector<std::string>> environment;
  ChildLimits limits;
  /// The child's working directory ("": this process's).
  std::filesystem::path workingDirectory;
};

/// Runs `args` (args[0] is the program's path) with stdout and stderr
/// written to `logPath`, and waits for it to end. The child starts with no
/// signal blocked. INTERNAL naming the program when it cannot be started
/// (missing, not executable, a bad working directory).
absl::StatusOr<ChildExit> runChildProcess(std::vector<std::string> args,
                                          const std::filesystem::path &logPath,
                                          const ChildOptions &options);

/// runChildProcess with only a timeout.
absl::StatusOr<ChildExit>
runChildProcess(std::vector<std::string> args,
                const std::filesystem::path &logPath,
                std::optional<std::chrono::milliseconds> timeout = std::nullopt);

} // namespace kiln
