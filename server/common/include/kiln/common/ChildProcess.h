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

  bool succeeded() const { return exited && code == 0; }
  /// "exited with status 3", "was killed by signal 11 (Segmentation fault)".
  std::string describe() const;
};

/// Runs `args` (args[0] is the program's path) with stdout and stderr
/// written to `logPath`, and waits for it to end. With `timeout`, a child
/// still running after it is killed and DEADLINE_EXCEEDED returned. INTERNAL
/// naming the program when it cannot be started. With `environment`
/// ("NAME=value" entries) the child gets exactly that environment instead of
/// this process's.
absl::StatusOr<ChildExit>
runChildProcess(std::vector<std::string> args,
                const std::filesystem::path &logPath,
                std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                std::optional<std::vector<std::string>> environment = std::nullopt);

} // namespace kiln
