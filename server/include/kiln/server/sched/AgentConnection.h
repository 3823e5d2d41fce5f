//===- AgentConnection.h - one connected agent and its tasks -------*- C++ -*-===//
//
// This file declares AgentLink, the write side of an agent's stream, and
// AgentConnection, which tracks the tasks in flight on one agent connection.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/agent.pb.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <future>
#include <memory>
#include <mutex>
#include <string>

namespace kiln::server {

/// Sends messages to one agent. gRPC sync streams allow one Write at a time,
/// so implementations serialise send() themselves.
class AgentLink {
public:
  virtual ~AgentLink();
  /// Sends `message` (taken: a link may move its task out); false when the
  /// stream is gone.
  virtual bool send(v1::DaemonMessage &&message) = 0;
};

/// The result of one task: the agent's TaskResult, or UNAVAILABLE when the
/// agent went away before answering.
using TaskOutcome = absl::StatusOr<v1::TaskResult>;

/// One agent connection: its id, its link, and the tasks sent to it that
/// await a TaskResult. Thread-safe.
class AgentConnection {
public:
  AgentConnection(std::string agentId, std::shared_ptr<AgentLink> link);

  const std::string &agentId() const { return id; }

  /// Sends `task` to the agent and returns a future for its outcome.
  /// UNAVAILABLE when the session is closed or the send fails.
  absl::StatusOr<std::future<TaskOutcome>> dispatch(const v1::Task &task);

  /// Delivers the agent's result; false when no such task is pending (late
  /// result after a deadline, or an id the daemon never sent).
  bool complete(v1::TaskResult result);

  /// Forgets a task nobody waits for any more (its deadline passed).
  void abandon(const std::string &taskId);

  /// Fails every pending task with `reason` and refuses new ones.
  void close(const absl::Status &reason);

  bool closed() const;

  /// Tasks sent and not yet answered.
  size_t pendingCount() const;

private:
  mutable std::mutex mutex;
  std::string id;
  std::shared_ptr<AgentLink> link;
  bool isClosed = false;
  absl::flat_hash_map<std::string, std::promise<TaskOutcome>> pending;
};

} // namespace kiln::server
