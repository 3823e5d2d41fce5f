//===- ChildProcess.cpp - run a program to completion ---------------------===//
//
// This file implements runChildProcess() with fork, execve and wait4. The
// child sets its limits, output and working directory between fork and
// execve using async-signal-safe calls only; a close-on-exec pipe tells the
// parent when execve itself failed.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/ChildProcess.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kiln {
namespace {

ChildExit fromWaitStatus(int status, const rusage &usage) {
  ChildExit exit;
  auto seconds = [](const timeval &t) { return t.tv_sec + t.tv_usec / 1e6; };
  exit.cpuSeconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  exit.exited = WIFEXITED(status);
  exit.code = exit.exited ? WEXITSTATUS(status) : 0;
  exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return exit;
}

/// What went wrong in the child before execve, sent through the pipe.
struct ChildFailure {
  int step; // 0 log, 1 chdir, 2 setrlimit, 3 execve
  int error;
};

[[noreturn]] void failInChild(int pipeFd, int step) {
  ChildFailure failure{step, errno};
  (void)!::write(pipeFd, &failure, sizeof(failure));
  ::_exit(127);
}

/// In the child, between fork and execve: async-signal-safe calls only.
[[noreturn]] void execChild(char *const *argv, char *const *envp,
                            const char *logPath, const char *directory,
                            const ChildLimits &limits, int pipeFd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int log = ::open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log < 0 || ::dup2(log, STDOUT_FILENO) < 0 ||
      ::dup2(log, STDERR_FILENO) < 0)
    failInChild(pipeFd, 0);
  if (*directory && ::chdir(directory) != 0)
    failInChild(pipeFd, 1);
  if (limits.cpuSeconds > 0) {
    rlimit cpu{static_cast<rlim_t>(limits.cpuSeconds),
               static_cast<rlim_t>(limits.cpuSeconds + 1)};
    if (::setrlimit(RLIMIT_CPU, &cpu) != 0)
      failInChild(pipeFd, 2);
  }
  if (limits.addressSpaceBytes > 0) {
    rlimit space{static_cast<rlim_t>(limits.addressSpaceBytes),
                 static_cast<rlim_t>(limits.addressSpaceBytes)};
    if (::setrlimit(RLIMIT_AS, &space) != 0)
      failInChild(pipeFd, 2);
  }
  ::execve(argv[0], argv, envp);
  failInChild(pipeFd, 3);
}

} // namespace

std::string ChildExit::describe() const {
  if (exited)
    return absl::StrCat("exited with status ", code);
  return absl::StrCat("was killed by signal ", signal, " (", strsignal(signal),
                      ")");
}

absl::StatusOr<ChildExit> runChildProcess(std::vector<std::string> args,
                                          const std::filesystem::path &logPath,
                                          const ChildOptions &options) {
  if (args.empty())
    return absl::InvalidArgumentError("runChildProcess needs a program");
  // Everything the child touches is made before fork.
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment =
      options.environment.value_or(std::vector<std::string>{});
  std::vector<char *> envp;
  for (std::string &entry : environment)
    envp.push_back(entry.data());
  envp.push_back(nullptr);
  char *const *childEnv = options.environment ? envp.data() : environ;
  std::string log = logPath.string();
  std::string directory = options.workingDirectory.string();

  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  pid_t pid = ::fork();
  if (pid < 0) {
    int error = errno;
    ::close(pipeFds[0]);
    ::close(pipeFds[1]);
    return absl::InternalError(
        absl::StrCat("cannot run ", args[0], ": fork: ", std::strerror(error)));
  }
  if (pid == 0) {
    ::close(pipeFds[0]);
    execChild(argv.data(), childEnv, log.c_str(), directory.c_str(),
              options.limits, pipeFds[1]);
  }
  ::close(pipeFds[1]);
  ChildFailure failure{};
  ssize_t got = 0;
  do {
    got = ::read(pipeFds[0], &failure, sizeof(failure));
  } while (got < 0 && errno == EINTR);
  ::close(pipeFds[0]);
  int status = 0;
  rusage usage{};
  if (got == static_cast<ssize_t>(sizeof(failure))) {
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    static const char *kSteps[] = {"cannot open its log", "cannot enter its "
                                   "working directory", "cannot set its limits",
                                   "cannot execute it"};
    return absl::InternalError(absl::StrCat(
        "cannot run ", args[0], ": ", kSteps[failure.step], ": ",
        std::strerror(failure.error)));
  }

  if (!options.timeout) {
    while (::wait4(pid, &status, 0, &usage) < 0) {
      if (errno != EINTR)
        return absl::InternalError(absl::StrCat("wait4: ", std::strerror(errno)));
    }
    return fromWaitStatus(status, usage);
  }
  auto deadline = std::chrono::steady_clock::now() + *options.timeout;
  while (true) {
    pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid)
      return fromWaitStatus(status, usage);
    if (done < 0 && errno != EINTR)
      return absl::InternalError(absl::StrCat("wait4: ", std::strerror(errno)));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
      }
      return absl::DeadlineExceededError(absl::StrCat(
          args[0], " ran past its limit of ", options.timeout->count(),
          " ms and was killed"));
    }
    // Polling the exit: the programs run this way take a second or so.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

absl::StatusOr<ChildExit>
runChildProcess(std::vector<std::string> args,
                const std::filesystem::path &logPath,
                std::optional<std::chrono::milliseconds> timeout) {
  ChildOptions options;
  options.timeout = timeout;
  return runChildProcess(std::move(args), logPath, options);
}

} // namespace kiln
