//===- AgentConnection.cpp - one connected agent and its tasks ---------------===//
//
// This file implements AgentConnection: dispatching tasks on an agent's link and
// matching TaskResults (or the agent's loss) to the waiting callers.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/AgentConnection.h"

#include "absl/strings/str_cat.h"

namespace kiln::server {

AgentLink::~AgentLink() = default;

std::future_status
AgentLink::await(std::future<TaskOutcome> &outcome,
                 std::chrono::steady_clock::time_point deadline) {
  return outcome.wait_until(deadline);
}

AgentConnection::AgentConnection(std::string agentId, std::shared_ptr<AgentLink> link)
    : id(std::move(agentId)), link(std::move(link)) {}

absl::StatusOr<std::future<TaskOutcome>>
AgentConnection::dispatch(const v1::Task &task, const TaskRecord &record,
                          const TensorFiles &inputFiles,
                          const LinkExtras &extras,
                          std::chrono::steady_clock::time_point deadline) {
  std::future<TaskOutcome> future;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (isClosed)
      return absl::UnavailableError(
          absl::StrCat("agent '", id, "' is disconnected"));
    auto [it, inserted] = pending.try_emplace(task.task_id());
    if (!inserted)
      return absl::InternalError(
          absl::StrCat("task id '", task.task_id(), "' is already in flight"));
    future = it->second.get_future();
  }
  // Send outside our mutex: the link serialises writers itself, and a slow
  // stream must not block results arriving for other tasks.
  if (absl::Status sent = link->send(task, record, inputFiles, extras, deadline);
      !sent.ok()) {
    abandon(task.task_id());
    if (absl::IsDeadlineExceeded(sent))
      return absl::DeadlineExceededError(absl::StrCat(
          "agent '", id, "' did not take task ", task.task_id(),
          " before the deadline: ", sent.message()));
    return absl::UnavailableError(absl::StrCat(
        "cannot send task to agent '", id, "': ", sent.message()));
  }
  return future;
}

bool AgentConnection::complete(AgentAnswer answer) {
  std::promise<TaskOutcome> promise;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = pending.find(answer.result.task_id());
    if (it == pending.end())
      return false;
    promise = std::move(it->second);
    pending.erase(it);
  }
  promise.set_value(std::move(answer));
  return true;
}

void AgentConnection::abandon(const std::string &taskId) {
  std::lock_guard<std::mutex> lock(mutex);
  pending.erase(taskId);
}

void AgentConnection::close(const absl::Status &reason) {
  absl::flat_hash_map<std::string, std::promise<TaskOutcome>> orphans;
  {
    std::lock_guard<std::mutex> lock(mutex);
    isClosed = true;
    orphans.swap(pending);
  }
  for (auto &[taskId, promise] : orphans)
    promise.set_value(reason);
}

bool AgentConnection::closed() const {
  std::lock_guard<std::mutex> lock(mutex);
  return isClosed;
}

size_t AgentConnection::pendingCount() const {
  std::lock_guard<std::mutex> lock(mutex);
  return pending.size();
}

} // namespace kiln::server
