//===- RunnerProcess.cpp - one simulated riscv64 device -------------------===//
//
// This file implements RunnerProcess: posix_spawn of qemu-riscv64 with the
// plugin and the runner, the arena handed down as a fixed descriptor, its
// stderr kept in a memfd, and the framed exchange with a deadline on every
// reply.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/qemu/RunnerProcess.h"

#include "kiln/agent/qemu/RunnerProtocol.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kiln::agent::qemu {
namespace {

/// The descriptor number the arena has in the child.
constexpr int kChildArenaFd = 100;
/// Handshake replies (map, load, unload) must come well within this.
constexpr std::chrono::seconds kControlTimeout{60};
/// What a failure quotes of the child's stderr: from its last this many
/// bytes, this many lines at most.
constexpr size_t kStderrTailBytes = 2048;
constexpr size_t kStderrTailLines = 3;
/// The stderr memfd is emptied before a request once it holds more than
/// this: a chatty guest cannot grow it without bound over a long-lived
/// runner, and a failure still quotes what the failing request wrote.
constexpr off_t kStderrKeptBytes = 64 << 10;

std::string describeExit(int status) {
  if (WIFEXITED(status))
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  return "stopped";
}

bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

RunnerProcess::~RunnerProcess() {
  (void)stop();
  if (stderrFile >= 0)
    ::close(stderrFile);
}

absl::Status RunnerProcess::ensureStarted() {
  if (pid > 0)
    return absl::OkStatus();
  loaded.clear();
  if (!arena_) {
    auto arena = SharedArena::create(1 << 20);
    if (!arena.ok())
      return arena.status();
    arena_.emplace(std::move(*arena));
  }
  if (stderrFile < 0)
    stderrFile = ::memfd_create("kiln-qemu-stderr", MFD_CLOEXEC);
  if (stderrFile < 0)
    return absl::InternalError(
        absl::StrCat("memfd_create: ", std::strerror(errno)));
  // A new child: only what it writes is reported.
  if (!emptyStderr())
    return absl::InternalError(absl::StrCat(
        "cannot empty the simulator's stderr file: ", std::strerror(errno)));
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::string arenaFd = absl::StrCat(kChildArenaFd);
  std::vector<std::string> args = {
      config.qemu,   "-L",     config.sysroot,
      "-cpu",        config.cpuModel,
      "-plugin",     absl::StrCat(config.plugin, ",counter_fd=", arenaFd),
      config.runner, arenaFd};
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, stderrFile, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, arena_->fd(), kChildArenaFd);
  pid_t child = 0;
  int error = ::posix_spawnp(&child, config.qemu.c_str(), &actions, nullptr,
                             argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (error != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start ", config.qemu, ": ", std::strerror(error)));
  }
  pid = child;
  toChild = in[1];
  fromChild = out[0];
  // The guest maps the arena; this also proves qemu, the plugin and the
  // runner all started.
  return exchange(KILN_RUNNER_MAP, arena_->size(), nullptr, 0, nullptr)
      .status();
}

absl::Status RunnerProcess::ensureLoaded(uint64_t handle,
                                         const std::string &path) {
  if (auto started = ensureStarted(); !started.ok())
    return started;
  if (auto it = std::find(loaded.begin(), loaded.end(), handle);
      it != loaded.end()) {
    loaded.splice(loaded.begin(), loaded, it);
    return absl::OkStatus();
  }
  while (loaded.size() >= kMaxLoaded)
    unload(loaded.back());
  auto reply = exchange(KILN_RUNNER_LOAD, handle, path.data(), path.size(),
                        nullptr);
  if (!reply.ok())
    return reply.status();
  loaded.push_front(handle);
  return absl::OkStatus();
}

void RunnerProcess::unload(uint64_t handle) {
  auto it = std::find(loaded.begin(), loaded.end(), handle);
  if (pid <= 0 || it == loaded.end())
    return;
  loaded.erase(it);
  (void)exchange(KILN_RUNNER_UNLOAD, handle, nullptr, 0, nullptr);
}

absl::Status RunnerProcess::reserve(uint64_t bytes) {
  if (auto started = ensureStarted(); !started.ok())
    return started;
  if (bytes <= arena_->size())
    return absl::OkStatus();
  if (auto grown = arena_->grow(bytes); !grown.ok())
    return grown;
  return exchange(KILN_RUNNER_MAP, arena_->size(), nullptr, 0, nullptr)
      .status();
}

absl::StatusOr<uint64_t>
RunnerProcess::call(uint64_t handle, const std::vector<uint64_t> &offsets) {
  uint64_t instructions = 0;
  auto reply = exchange(KILN_RUNNER_RUN, handle, offsets.data(),
                        offsets.size() * sizeof(uint64_t), &instructions);
  if (!reply.ok())
    return reply.status();
  return instructions;
}

absl::StatusOr<std::string>
RunnerProcess::exchange(uint32_t op, uint64_t arg, const void *payload,
                        uint64_t size, uint64_t *instructions) {
  if (pid <= 0)
    return absl::UnavailableError("the simulated device is not running");
  struct stat info {};
  if (::fstat(stderrFile, &info) == 0 && info.st_size > kStderrKeptBytes)
    (void)emptyStderr(); // the child is idle between requests
  kiln_runner_request request{KILN_RUNNER_MAGIC, op, arg, size};
  if (!writeAll(toChild, &request, sizeof request) ||
      (size && !writeAll(toChild, payload, size)))
    return fail(absl::UnavailableError("cannot write to the simulator"));
  // A call may run as long as --run-timeout allows; control requests
  // (map, load, unload) answer quickly or the device is wedged.
  auto deadline = std::chrono::steady_clock::now() +
                  (op == KILN_RUNNER_RUN ? config.runTimeout : kControlTimeout);
  kiln_runner_reply reply{};
  if (auto read = readReply(&reply, sizeof reply, deadline); !read.ok())
    return fail(read);
  if (reply.magic != KILN_RUNNER_MAGIC)
    return fail(absl::InternalError("the simulator answered garbage"));
  std::string text(reply.size, '\0');
  if (reply.size) {
    if (auto read = readReply(text.data(), text.size(), deadline); !read.ok())
      return fail(read);
  }
  if (instructions)
    *instructions = reply.instructions;
  if (reply.status != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("the riscv64 runner refused: ", text));
  return text;
}

absl::Status
RunnerProcess::readReply(void *buffer, size_t size,
                         std::chrono::steady_clock::time_point deadline) {
  auto started = std::chrono::steady_clock::now();
  char *p = static_cast<char *>(buffer);
  while (size > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return absl::DeadlineExceededError(absl::StrCat(
          "the simulated device did not answer within ",
          std::chrono::duration_cast<std::chrono::seconds>(
              deadline - started).count(),
          " s (--run-timeout); it was restarted"));
    pollfd poller{fromChild, POLLIN, 0};
    int ready = ::poll(&poller, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      continue; // the deadline check above reports it
    ssize_t n = ::read(fromChild, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return absl::InternalError("the simulator exited");
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status RunnerProcess::fail(absl::Status why) {
  std::string exit = stop();
  std::string said = stderrTail();
  if (exit.empty() && said.empty())
    return why;
  std::string message(why.message());
  if (!exit.empty())
    absl::StrAppend(&message, " (qemu ", exit, ")");
  if (!said.empty())
    absl::StrAppend(&message, "; its stderr ended: ", said);
  return absl::Status(why.code(), message);
}

bool RunnerProcess::emptyStderr() {
  // The child shares the file's offset: rewinding it here rewinds its writes.
  return ::ftruncate(stderrFile, 0) == 0 && ::lseek(stderrFile, 0, SEEK_SET) == 0;
}

std::string RunnerProcess::stderrTail() const {
  struct stat info {};
  if (stderrFile < 0 || ::fstat(stderrFile, &info) != 0 || info.st_size <= 0)
    return "";
  size_t size = static_cast<size_t>(info.st_size);
  size_t length = std::min(size, kStderrTailBytes);
  std::string bytes(length, '\0');
  ssize_t got = ::pread(stderrFile, bytes.data(), length,
                        static_cast<off_t>(size - length));
  if (got <= 0)
    return "";
  bytes.resize(static_cast<size_t>(got));
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(bytes, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty())
      lines.emplace_back(line);
  }
  // The first line may be cut by the window; the last ones say the most.
  if (lines.size() > kStderrTailLines)
    lines.erase(lines.begin(), lines.end() - kStderrTailLines);
  return absl::StrJoin(lines, " | ");
}

std::string RunnerProcess::stop() {
  std::string exit;
  if (toChild >= 0)
    ::close(toChild);
  if (fromChild >= 0)
    ::close(fromChild);
  toChild = fromChild = -1;
  if (pid > 0) {
    int status = 0;
    // Closing stdin ends a healthy runner; a wedged one is killed.
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exit = describeExit(status);
        pid = 0;
        break;
      }
      if (i == 10)
        ::kill(pid, SIGKILL);
      ::usleep(10000);
    }
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      exit = "was killed";
    }
  }
  pid = 0;
  loaded.clear();
  return exit;
}

} // namespace kiln::agent::qemu
