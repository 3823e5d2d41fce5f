//===- ChildProcess.cpp - run a program to completion ---------------------===//
//
// This file implements runChildProcess() with posix_spawn and waitpid.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/ChildProcess.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kiln {
namespace {

ChildExit fromWaitStatus(int status) {
  ChildExit exit;
  exit.exited = WIFEXITED(status);
  exit.code = exit.exited ? WEXITSTATUS(status) : 0;
  exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return exit;
}

} // namespace

std::string ChildExit::describe() const {
  if (exited)
    return absl::StrCat("exited with status ", code);
  return absl::StrCat("was killed by signal ", signal, " (", strsignal(signal),
                      ")");
}

absl::StatusOr<ChildExit>
runChildProcess(std::vector<std::string> args,
                const std::filesystem::path &logPath,
                std::optional<std::chrono::milliseconds> timeout,
                std::optional<std::vector<std::string>> environment) {
  if (args.empty())
    return absl::InvalidArgumentError("runChildProcess needs a program");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char *> envp;
  if (environment) {
    for (std::string &entry : *environment)
      envp.push_back(entry.data());
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(),
                          environment ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0)
    return absl::InternalError(
        absl::StrCat("cannot run ", args[0], ": ", std::strerror(error)));

  int status = 0;
  if (!timeout) {
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR)
        return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    }
    return fromWaitStatus(status);
  }
  auto deadline = std::chrono::steady_clock::now() + *timeout;
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid)
      return fromWaitStatus(status);
    if (done < 0 && errno != EINTR)
      return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return absl::DeadlineExceededError(absl::StrCat(
          args[0], " ran past its limit of ",
          std::chrono::duration_cast<std::chrono::seconds>(*timeout).count(),
          " s and was killed"));
    }
    // Polling the exit: the programs run this way take a second or so.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

} // namespace kiln
