//===- AgentConnection.h - one connected agent and its tasks -------*- C++ -*-===//
//
// This file declares AgentLink, the write side of an agent's stream, and
// AgentConnection, which tracks the tasks in flight on one agent connection.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/UniqueFd.h"
#include "kiln/server/sched/TaskRecord.h"
#include "kiln/v1/agent.pb.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kiln::server {

/// Tensors whose bytes are in files instead of in the message: an index into
/// a task's inputs or a result's outputs (ascending) and its file.
using TensorFiles = std::vector<std::pair<int, UniqueFd>>;

/// What goes with a task beside its message, over a link that passes files.
struct LinkExtras {
  /// The caller takes output files itself (kilnd's local socket): the agent
  /// may then return mid-size outputs in files too.
  bool callerMapsOutputs = false;
  /// One end of a socket pair (-1: none) on which the agent is to serve the
  /// task's direct channel (kiln.worker.LocalTask.direct_channel). The
  /// link sends a duplicate; the caller keeps and closes its descriptor.
  int directChannel = -1;
};

/// What an agent answered: its result, and the files of the outputs that
/// came back in files (a local link's large outputs; those have no payload
/// in `result`).
struct AgentAnswer {
  v1::TaskResult result;
  TensorFiles outputFiles;
  /// The agent serves the direct channel the task brought.
  bool directChannelOpen = false;
};

/// The outcome of one task: the agent's answer, or UNAVAILABLE when the
/// agent went away before answering.
using TaskOutcome = absl::StatusOr<AgentAnswer>;

/// Sends tasks to one agent. gRPC sync streams allow one Write at a time,
/// so implementations serialise send() themselves.
class AgentLink {
public:
  virtual ~AgentLink();
  /// Sends `task` completed by `record` (its record and signature, which
  /// `task` lacks) with the files of the task's inputs that have no
  /// payload. UNAVAILABLE when the stream is gone, or when there are files
  /// and the link cannot pass them; DEADLINE_EXCEEDED when the agent took
  /// none of the task by `deadline` (a link that can bound its send), or
  /// took part of it, which ends the link. A link that passes only
  /// messages ignores `extras`.
  virtual absl::Status send(const v1::Task &task, const TaskRecord &record,
                            const TensorFiles &inputFiles,
                            const LinkExtras &extras,
                            std::chrono::steady_clock::time_point deadline) = 0;
  /// Whether send() passes files (a local link) or only messages.
  virtual bool passesFiles() const { return false; }
  /// Waits until `outcome`, that of a task sent over this link, is ready
  /// or `deadline` passes. A link may read its answers on the waiting
  /// thread (a local link does): then no other thread has to wake to hand
  /// them over.
  virtual std::future_status
  await(std::future<TaskOutcome> &outcome,
        std::chrono::steady_clock::time_point deadline);
};

/// One agent connection: its id, its link, and the tasks sent to it that
/// await a TaskResult. Thread-safe.
class AgentConnection {
public:
  AgentConnection(std::string agentId, std::shared_ptr<AgentLink> link);

  const std::string &agentId() const { return id; }

  /// Sends `task` completed by `record` (with the files of its
  /// payload-less inputs) to the agent and returns a future for its
  /// outcome. UNAVAILABLE when the session is closed or the send fails;
  /// DEADLINE_EXCEEDED when the agent did not take it by `deadline`.
  absl::StatusOr<std::future<TaskOutcome>>
  dispatch(const v1::Task &task, const TaskRecord &record,
           const TensorFiles &inputFiles = {}, const LinkExtras &extras = {},
           std::chrono::steady_clock::time_point deadline =
               std::chrono::steady_clock::time_point::max());

  /// Whether the agent's link passes tensors in files.
  bool passesFiles() const { return link->passesFiles(); }

  /// Waits for the outcome of a task dispatch() sent, until `deadline`
  /// (AgentLink::await).
  std::future_status await(std::future<TaskOutcome> &outcome,
                           std::chrono::steady_clock::time_point deadline) {
    return link->await(outcome, deadline);
  }

  /// Delivers the agent's answer; false when no such task is pending (late
  /// result after a deadline, or an id the daemon never sent).
  bool complete(AgentAnswer answer);
  bool complete(v1::TaskResult result) {
    return complete(AgentAnswer{std::move(result), {}});
  }

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
