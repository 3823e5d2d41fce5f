//===- StreamAgentLink.cpp - tasks on a remote agent's Connect stream -----===//
//
// This file implements StreamAgentLink: a writer thread writes the queued
// tasks on the stream in order, and each caller waits for its own task no
// longer than its deadline.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/StreamAgentLink.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace kiln::server {

StreamAgentLink::StreamAgentLink(WriteFn write, CancelFn cancel)
    : write(std::move(write)), cancel(std::move(cancel)) {}

StreamAgentLink::~StreamAgentLink() { detach(); }

bool StreamAgentLink::waitUntil(std::unique_lock<std::mutex> &lock,
                                std::chrono::steady_clock::time_point deadline,
                                const std::function<bool()> &done) {
  if (deadline == std::chrono::steady_clock::time_point::max()) {
    changed.wait(lock, done);
    return true;
  }
  return changed.wait_until(lock, deadline, done);
}

absl::Status
StreamAgentLink::send(const v1::Task &task, const TaskRecord &record,
                      const TensorFiles &inputFiles, const LinkExtras &,
                      std::chrono::steady_clock::time_point deadline) {
  if (!inputFiles.empty())
    return absl::UnavailableError("a remote agent's stream takes no files");
  auto outgoing = std::make_shared<Outgoing>();
  v1::Task &sent = *outgoing->message.mutable_task();
  sent = task;
  record.fill(sent);
  std::unique_lock<std::mutex> lock(mutex);
  if (detached)
    return absl::UnavailableError("stream closed");
  // An idle writer begins this task at once, however little time is left:
  // only a task behind another's Write is withdrawn (the agent not reading).
  bool idle = !writing && queue.empty();
  queue.push_back(outgoing);
  if (!writer.joinable())
    writer = std::thread([this] { writeLoop(); });
  changed.notify_all();
  auto begun = [&] { return outgoing->stage != Stage::Queued; };
  if (!waitUntil(lock, idle ? Clock::time_point::max() : deadline, begun)) {
    queue.erase(std::find(queue.begin(), queue.end(), outgoing));
    return absl::DeadlineExceededError(
        "the agent's stream was still writing an earlier task (the agent is "
        "not reading it)");
  }
  auto ended = [&] { return outgoing->stage != Stage::Writing; };
  // Still being written at the deadline: the writer finishes it (the
  // file comment says why), and the call's await ends at its deadline.
  if (!waitUntil(lock, deadline, ended))
    return absl::OkStatus();
  return outgoing->stage == Stage::Written
             ? absl::OkStatus()
             : absl::UnavailableError("stream closed");
}

size_t StreamAgentLink::queuedTasks() {
  std::lock_guard<std::mutex> lock(mutex);
  return queue.size();
}

void StreamAgentLink::writeLoop() {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    changed.wait(lock, [this] { return detached || !queue.empty(); });
    if (detached)
      return;
    std::shared_ptr<Outgoing> next = std::move(queue.front());
    queue.pop_front();
    next->stage = Stage::Writing;
    writing = true;
    changed.notify_all();
    lock.unlock();
    bool ok = write(next->message);
    lock.lock();
    writing = false;
    next->stage = ok ? Stage::Written : Stage::Failed;
    changed.notify_all();
  }
}

absl::Status
StreamAgentLink::greet(const v1::DaemonMessage &greeting,
                       const std::function<absl::Status()> &registerAgent) {
  std::lock_guard<std::mutex> lock(mutex);
  absl::Status status = registerAgent();
  if (status.ok() && !detached)
    write(greeting);
  return status;
}

void StreamAgentLink::detach() {
  std::unique_lock<std::mutex> lock(mutex);
  if (!detached) {
    detached = true;
    for (const std::shared_ptr<Outgoing> &queued : queue)
      queued->stage = Stage::Failed;
    queue.clear();
    changed.notify_all();
  }
  // A Write blocked on a full window returns once the call is cancelled.
  if (writing && cancel)
    cancel();
  std::thread finished = std::move(writer);
  lock.unlock();
  if (finished.joinable())
    finished.join();
}

} // namespace kiln::server
