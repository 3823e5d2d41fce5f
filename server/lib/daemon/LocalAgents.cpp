//===- LocalAgents.cpp - agents kilnd runs as child processes -------------===//
//
// This file implements LocalAgents: posix_spawn, restart with exponential
// backoff, and SIGTERM-then-SIGKILL on shutdown.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/LocalAgents.h"

#include "kiln/common/FramedSocket.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kiln::server {

namespace {
constexpr std::chrono::seconds kMaxBackoff{30};
// A child that ran this long before dying starts again from the first step.
constexpr std::chrono::seconds kStableRun{60};

std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "stopped";
}
} // namespace

std::vector<LocalAgentSpec>
LocalAgents::plan(const std::vector<std::string> &kinds,
                  const std::filesystem::path &binDir,
                  const std::string &daemonAddress,
                  const std::filesystem::path &cacheDir) {
  std::vector<LocalAgentSpec> specs;
  for (const std::string &kind : kinds)
    specs.push_back(LocalAgentSpec{
        kind, binDir / ("kiln-agent-" + kind),
        {"--daemon", daemonAddress, "--cache-dir",
         (cacheDir / ("agent-" + kind)).string(), "--agent-id",
         localAgentId(kind)}, {}});
  return specs;
}

LocalAgents::LocalAgents(std::vector<LocalAgentSpec> specs, LinkFn onLink)
    : onLink(std::move(onLink)) {
  for (LocalAgentSpec &spec : specs)
    children.push_back(Child{std::move(spec)});
}

LocalAgents::~LocalAgents() { stop(); }

void LocalAgents::spawn(Child &child) {
  std::vector<std::string> args = {child.spec.binary.string()};
  args.insert(args.end(), child.spec.arguments.begin(),
              child.spec.arguments.end());
  // The local link: the child's end becomes its fd 3 (dup2 clears
  // close-on-exec there); both ends are close-on-exec here.
  std::optional<std::pair<UniqueFd, UniqueFd>> link;
  if (onLink) {
    absl::StatusOr<std::pair<UniqueFd, UniqueFd>> made = FramedSocket::pair();
    // dup2 onto the same number would keep close-on-exec: never use fd 3.
    if (made.ok() && made->second.get() == 3)
      made->second = UniqueFd(::fcntl(3, F_DUPFD_CLOEXEC, 4));
    if (made.ok() && made->second.valid()) {
      link = *std::move(made);
      args.insert(args.end(), {"--local-link-fd", "3"});
    } else {
      spdlog::warn("local agent '{}': no local link ({}); tasks go over "
                   "Agent.Connect",
                   child.spec.kind, std::string(made.status().message()));
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (link) {
    posix_spawn_file_actions_adddup2(&actions, link->second.get(), 3);
    // Before the child runs, so it can never register ahead of its link
    // (a failed spawn closes the child's end: the link then ends).
    onLink(child.spec.agentId(), std::move(link->first));
  }
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  // kilnd blocks SIGTERM/SIGINT for sigwait(); the child gets them back. It
  // stays in kilnd's process group, so whoever kills that group (a test
  // harness, a service manager) reaches the agents too.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> environment;
  for (char **entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    bool overridden = false;
    for (const std::string &extra : child.spec.environment)
      overridden = overridden ||
                   text.substr(0, text.find('=') + 1) ==
                       std::string_view(extra).substr(0, extra.find('=') + 1);
    if (!overridden)
      environment.emplace_back(text);
  }
  environment.insert(environment.end(), child.spec.environment.begin(),
                     child.spec.environment.end());
  std::vector<char *> envp;
  for (std::string &entry : environment)
    envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int error =
      posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  child.startedAt = Clock::now();
  if (error != 0) {
    spdlog::error("local agent '{}': cannot start {}: {}; retrying in {} s",
                  child.spec.kind, argv[0], std::strerror(error),
                  child.backoff.count());
    child.pid = 0;
    child.restartAt = Clock::now() + child.backoff;
    child.backoff = std::min(child.backoff * 2, kMaxBackoff);
    return;
  }
  child.pid = pid;
  spdlog::info("local agent '{}' started: pid {} ({}){}", child.spec.kind, pid,
               argv[0], link ? " with a local link" : "");
}

void LocalAgents::start() {
  std::lock_guard<std::mutex> lock(mutex);
  if (started)
    return;
  started = true;
  for (Child &child : children) {
    if (::access(child.spec.binary.c_str(), X_OK) != 0) {
      spdlog::error("local agent '{}': {} is missing or not executable; no "
                    "local '{}' devices (see --agent-bin-dir, --local-agents)",
                    child.spec.kind, child.spec.binary.string(),
                    child.spec.kind);
      child.disabled = true;
      continue;
    }
    spawn(child);
  }
  supervisor = std::thread([this] { supervise(); });
}

void LocalAgents::supervise() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    // A polling timer for waitpid(WNOHANG); nothing waits on it.
    wakeup.wait_for(lock, std::chrono::milliseconds(200));
    if (stopping)
      break;
    Clock::time_point now = Clock::now();
    for (Child &child : children) {
      if (child.disabled)
        continue;
      if (child.pid > 0) {
        int status = 0;
        if (::waitpid(child.pid, &status, WNOHANG) != child.pid)
          continue;
        if (now - child.startedAt >= kStableRun)
          child.backoff = std::chrono::seconds(1);
        spdlog::warn("local agent '{}' (pid {}) {}; restarting in {} s",
                     child.spec.kind, child.pid, describeExit(status),
                     child.backoff.count());
        child.pid = 0;
        child.restartAt = now + child.backoff;
        child.backoff = std::min(child.backoff * 2, kMaxBackoff);
      } else if (now >= child.restartAt) {
        spawn(child);
      }
    }
  }
}

void LocalAgents::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!started || stopping)
      return;
    stopping = true;
  }
  wakeup.notify_all();
  supervisor.join();
  for (Child &child : children)
    if (child.pid > 0)
      ::kill(child.pid, SIGTERM);
  auto giveUp = Clock::now() + std::chrono::seconds(5);
  for (Child &child : children) {
    if (child.pid <= 0)
      continue;
    int status = 0;
    while (::waitpid(child.pid, &status, WNOHANG) == 0) {
      if (Clock::now() >= giveUp) {
        spdlog::warn("local agent '{}' ignored SIGTERM; killing it",
                     child.spec.kind);
        ::kill(child.pid, SIGKILL);
        ::waitpid(child.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    spdlog::info("local agent '{}' stopped", child.spec.kind);
    child.pid = 0;
  }
}

} // namespace kiln::server
