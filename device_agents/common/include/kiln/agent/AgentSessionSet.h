//===- AgentSessionSet.h - one agent, several kilnd replicas ----*- C++ -*-===//
//
// This file declares AgentSessionSet, the sessions of one agent process with
// each kilnd it serves: a fixed list (--daemon A,B) or the addresses a
// headless Service resolves to (--daemon-service), re-resolved so that
// replicas that come and go are joined and left. All sessions share the
// backend and the AgentStores.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AgentSession.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::agent {

/// Every address `hostPort` ("name:port", "[v6]:port") resolves to, as
/// "ip:port" / "[ip]:port", sorted and without duplicates. UNAVAILABLE when
/// the name does not resolve; INVALID_ARGUMENT when it is not host:port.
absl::StatusOr<std::vector<std::string>> resolveDaemons(const std::string &hostPort);

class AgentSessionSet {
public:
  /// Sessions made from `options` (their daemonAddress replaced) over
  /// `backend` and `stores`, which must outlive the set.
  AgentSessionSet(AgentOptions options, DeviceBackend &backend,
                  std::shared_ptr<AgentStores> stores);
  ~AgentSessionSet();

  /// Serves exactly `addresses`: starts a session (on a thread of its own)
  /// for each new one, stops and joins those no longer listed. A session
  /// that cannot be created (a bad credential file) is an error.
  absl::Status serve(const std::vector<std::string> &addresses);

  /// serve(every address `service` resolves to), again every `refresh`,
  /// until stop(). A failed resolution keeps the current sessions.
  absl::Status followService(const std::string &service,
                             std::chrono::milliseconds refresh);

  /// Blocks until stop(), or until a session ends on its own (with an error,
  /// such as a refused registration, or because its local link to the kilnd
  /// that started the agent closed), then stops and joins every session;
  /// that error, or OK.
  absl::Status wait();
  /// Stops every session and wakes wait() and followService(). Thread-safe.
  void stop();

  /// The addresses served now.
  std::vector<std::string> addresses() const;

private:
  struct Served {
    std::unique_ptr<AgentSession> session;
    std::thread thread;
  };

  AgentOptions options;
  DeviceBackend &backend;
  std::shared_ptr<AgentStores> stores;
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, Served> sessions;
  bool stopping = false;
  /// A session's run() returned without the set stopping it.
  bool sessionEnded = false;
  absl::Status failure;
};

} // namespace kiln::agent
