//===- Scheduler.cpp - placing tasks on devices ---------------------------===//
//
// This file implements Scheduler::run: lease, dispatch, wait, retry once on
// agent loss.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/Scheduler.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kiln::server {

Scheduler::Scheduler(DeviceRegistry &registry,
                     std::chrono::milliseconds deviceWait)
    : registry(registry), deviceWait(deviceWait) {}

absl::StatusOr<ScheduledResult>
Scheduler::run(const std::string &kind, v1::Task task,
               const TaskRecord &record, Clock::time_point deadline, FileInputs *fileInputs,
               const std::string &pinnedDevice, HeldTensorIndex *held) {
  const Clock::time_point start = Clock::now();
  const std::string baseId = absl::StrCat("task-", nextTaskId.fetch_add(1));
  absl::flat_hash_set<const AgentConnection *> excluded;
  // Keeps excluded sessions alive so their addresses cannot be reused.
  std::vector<std::shared_ptr<AgentConnection>> lostSessions;
  absl::Status lost;
  constexpr int kAttempts = 2; // the first try and one retry on agent loss
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // The first attempt may wait for a device to register; the retry takes
    // another device only if one is there now.
    Clock::time_point waitUntil =
        attempt == 0 ? std::min(start + deviceWait, deadline) : Clock::now();
    // Only devices with every CPU feature the code may use can take it.
    absl::StatusOr<DeviceLease> lease =
        registry.acquire(kind, excluded, waitUntil, record.requiredFeatures(),
                         record.manifest().kernel_library(), pinnedDevice);
    if (!lease.ok()) {
      if (attempt > 0)
        return absl::UnavailableError(
            absl::StrCat(lost.message(), "; no other device of kind '", kind,
                         "' to retry on"));
      if (Clock::now() >= deadline)
        return absl::DeadlineExceededError(
            absl::StrCat("deadline passed while waiting for a device: ",
                         lease.status().message()));
      return lease.status();
    }
    task.set_task_id(attempt == 0 ? baseId : absl::StrCat(baseId, ".", attempt));
    task.set_device_id(lease->deviceId);
    int64_t queueUs = std::chrono::duration_cast<std::chrono::microseconds>(
                          Clock::now() - start)
                          .count();
    bool withFiles = fileInputs && !fileInputs->files.empty();
    if (withFiles && !lease->session->passesFiles()) {
      // A remote agent: the files become blobs it fetches, once.
      if (absl::Status stored = fileInputs->storeAsBlobs(task, fileInputs->files);
          !stored.ok()) {
        registry.release(*lease);
        return stored;
      }
      fileInputs->files.clear();
      withFiles = false;
    }
    if (held)
      held->takeReleases(lease->deviceId, task);
    static const TensorFiles kNoFiles;
    LinkExtras extras;
    if (fileInputs) {
      extras.callerMapsOutputs = fileInputs->callerMapsOutputs;
      // Never on a retry: the lost agent may be serving the channel.
      if (attempt == 0 && lease->session->passesFiles())
        extras.directChannel = fileInputs->directChannel;
    }
    const Clock::time_point sentAt = Clock::now();
    absl::StatusOr<std::future<TaskOutcome>> future = lease->session->dispatch(
        task, record, withFiles ? fileInputs->files : kNoFiles, extras, deadline);
    // Releases go back to their device's queue whenever the task may not
    // have run there (a repeated release is harmless), and never ride a
    // retry to another device.
    auto returnReleases = [&] {
      if (held)
        held->returnReleases(lease->deviceId, task);
      task.clear_release();
    };
    if (absl::IsDeadlineExceeded(future.status())) {
      // The agent took none of the task by the deadline (it is not
      // reading, or another task's frame still goes): this call is over,
      // and the agent stays in service, behind the others of its kind
      // until it heartbeats, when it had kStallEvidence or more to take
      // it (not a call whose time was all but spent before the send).
      returnReleases();
      if (deadline - sentAt >= kStallEvidence)
        registry.markStalled(*lease);
      registry.release(*lease);
      return absl::DeadlineExceededError(absl::StrCat(
          "device ", lease->deviceId, ": ", future.status().message()));
    }
    if (!future.ok()) {
      returnReleases();
      registry.release(*lease);
      excluded.insert(lease->session.get());
      lostSessions.push_back(lease->session);
      lost = absl::UnavailableError(absl::StrCat(
          "device ", lease->deviceId, ": ", future.status().message()));
      spdlog::warn("task {} could not be sent: {}", task.task_id(),
                   std::string(lost.message()));
      continue;
    }
    if (lease->session->await(*future, deadline) ==
        std::future_status::timeout) {
      returnReleases();
      lease->session->abandon(task.task_id());
      registry.release(*lease);
      return absl::DeadlineExceededError(
          absl::StrCat("device ", lease->deviceId, " did not finish task ",
                       task.task_id(), " before the deadline"));
    }
    TaskOutcome outcome = future->get();
    registry.release(*lease);
    if (!outcome.ok()) {
      returnReleases();
      excluded.insert(lease->session.get());
      lostSessions.push_back(lease->session);
      lost = absl::UnavailableError(absl::StrCat(
          "device ", lease->deviceId, " was lost while running task ",
          task.task_id(), ": ", outcome.status().message()));
      spdlog::warn("{}", std::string(lost.message()));
      continue;
    }
    return ScheduledResult{std::move(outcome->result),
                           std::move(outcome->outputFiles), lease->deviceId,
                           outcome->directChannelOpen, queueUs};
  }
  return lost;
}

} // namespace kiln::server
