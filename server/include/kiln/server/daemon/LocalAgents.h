//===- LocalAgents.h - agents kilnd runs as child processes -----*- C++ -*-===//
//
// This file declares LocalAgents, which spawns kiln-agent-<kind> processes
// next to the daemon, restarts those that die (with backoff) and stops them
// on shutdown, so one command gives a working service.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/UniqueFd.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <filesystem>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace kiln::server {

/// One agent process to keep running.
/// The id the local agent of `kind` registers under ("local-cpu").
inline std::string localAgentId(const std::string &kind) { return "local-" + kind; }

struct LocalAgentSpec {
  std::string kind;
  std::filesystem::path binary;
  std::vector<std::string> arguments; // argv[1..]
  /// NAME=value entries set on top of kilnd's environment (secrets such as
  /// the agent's token go here, where ps does not show them).
  std::vector<std::string> environment;
  /// The id the agent registers under.
  std::string agentId() const { return localAgentId(kind); }
};

/// Supervises local agent processes. start() once, stop() once (or let the
/// destructor do it).
class LocalAgents {
public:
  /// `<binDir>/kiln-agent-<kind> --daemon <daemonAddress>
  ///  --cache-dir <cacheDir>/agent-<kind> --agent-id local-<kind>` per kind.
  static std::vector<LocalAgentSpec>
  plan(const std::vector<std::string> &kinds,
       const std::filesystem::path &binDir, const std::string &daemonAddress,
       const std::filesystem::path &cacheDir);

  /// Called with kilnd's end of a new agent process's local link.
  using LinkFn = std::function<void(const std::string &agentId, UniqueFd)>;

  /// With `onLink`, each agent process starts with a local link: one end of
  /// a socketpair as its fd 3 (--local-link-fd 3), the other to `onLink`.
  explicit LocalAgents(std::vector<LocalAgentSpec> specs,
                       LinkFn onLink = nullptr);
  ~LocalAgents();
  LocalAgents(const LocalAgents &) = delete;
  LocalAgents &operator=(const LocalAgents &) = delete;

  /// Spawns every agent whose binary exists (logging those that do not) and
  /// starts the supervisor thread.
  void start();

  /// Stops supervising, sends SIGTERM, waits a few seconds, then SIGKILLs.
  void stop();

private:
  using Clock = std::chrono::steady_clock;
  struct Child {
    LocalAgentSpec spec;
    pid_t pid = 0;
    bool disabled = false;
    Clock::time_point startedAt;
    Clock::time_point restartAt;
    std::chrono::seconds backoff{1};
  };

  void spawn(Child &child);
  void supervise();

  std::vector<Child> children;
  LinkFn onLink;
  std::mutex mutex;
  std::condition_variable wakeup;
  bool stopping = false;
  bool started = false;
  std::thread supervisor;
};

} // namespace kiln::server
