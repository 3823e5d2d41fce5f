//===- RunnerProcess.h - one simulated riscv64 device ---------------------===//
//
// This file declares RunnerProcess: qemu-riscv64 running the Kiln guest
// runner with the instruction-counting plugin, its shared arena, and the
// request/reply exchange over its stdin/stdout. qemu's stderr (its own
// messages and the guest's) goes to a memfd whose last lines a failure
// reports. One per device; not thread-safe (the backend serialises calls
// per device).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/qemu/SharedArena.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace kiln::agent::qemu {

/// How to start a simulated device.
struct RunnerConfig {
  /// qemu-riscv64 (user mode), its -L sysroot and -cpu model string.
  std::string qemu;
  std::string sysroot;
  std::string cpuModel;
  /// The guest runner (a riscv64 Linux executable) and the TCG plugin.
  std::string runner;
  std::string plugin;
  /// A call running longer than this kills the device (DEADLINE_EXCEEDED).
  std::chrono::seconds runTimeout{300};
};

class RunnerProcess {
public:
  explicit RunnerProcess(RunnerConfig config) : config(std::move(config)) {}
  RunnerProcess(const RunnerProcess &) = delete;
  RunnerProcess &operator=(const RunnerProcess &) = delete;
  ~RunnerProcess();

  /// Starts qemu if it is not running (first use, or after a crash).
  absl::Status ensureStarted();

  /// Makes sure executable `handle` (the shared object at `path`) is loaded;
  /// a no-op when this process already loaded it. At most kMaxLoaded stay
  /// loaded: the least recently used is unloaded first (and reloaded when
  /// it runs again).
  absl::Status ensureLoaded(uint64_t handle, const std::string &path);
  /// Forgets `handle` if loaded.
  void unload(uint64_t handle);

  /// Grows the arena to at least `bytes`, telling the guest to remap.
  absl::Status reserve(uint64_t bytes);
  SharedArena &arena() { return *arena_; }

  /// Calls `handle` with buffers at `offsets`; returns instructions retired.
  absl::StatusOr<uint64_t> call(uint64_t handle,
                                const std::vector<uint64_t> &offsets);

  bool running() const { return pid > 0; }
  /// Executables loaded in the guest right now.
  size_t loadedCount() const { return loaded.size(); }

  static constexpr size_t kMaxLoaded = 64;

private:
  absl::StatusOr<std::string> exchange(uint32_t op, uint64_t arg,
                                       const void *payload, uint64_t size,
                                       uint64_t *instructions);
  absl::Status readReply(void *buffer, size_t size,
                         std::chrono::steady_clock::time_point deadline);
  /// Stops the child and returns `why` with how the child ended and the
  /// last lines it wrote to stderr appended.
  absl::Status fail(absl::Status why);
  /// The last lines of the child's stderr (a few hundred bytes at most),
  /// on one line; empty when it wrote nothing.
  std::string stderrTail() const;
  /// Truncates the stderr memfd and rewinds the offset the child writes at.
  bool emptyStderr();
  /// Closes the pipes, reaps (or kills) the child; says how it ended.
  std::string stop();

  RunnerConfig config;
  std::optional<SharedArena> arena_;
  pid_t pid = 0;
  int toChild = -1;
  int fromChild = -1;
  /// The child's stderr: a memfd, emptied whenever a child starts.
  int stderrFile = -1;
  /// Loaded handles, most recently used first.
  std::list<uint64_t> loaded;
};

} // namespace kiln::agent::qemu
