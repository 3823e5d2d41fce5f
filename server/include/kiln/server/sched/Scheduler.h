//===- Scheduler.h - placing tasks on devices -------------------*- C++ -*-===//
//
// This file declares Scheduler: it leases the least-loaded ready device of a
// target kind, sends the task to its agent and waits for the result, with a
// deadline and one retry when the agent is lost.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/sched/DeviceRegistry.h"
#include "kiln/server/sched/HeldTensorIndex.h"
#include "kiln/server/sched/TaskRecord.h"
#include "kiln/v1/agent.pb.h"

#include "absl/status/statusor.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace kiln::server {

/// What a scheduled task produced.
struct ScheduledResult {
  /// The agent's answer (its code may be non-zero: the caller decides).
  v1::TaskResult result;
  /// Outputs the agent passed in files (over a local link).
  TensorFiles outputFiles;
  /// Device that answered.
  std::string deviceId;
  /// Its agent serves the direct channel FileInputs::directChannel.
  bool directChannelOpen = false;
  /// Time from run() to the final dispatch, in microseconds.
  int64_t queueUs = 0;
};

/// Runs tasks on devices from a DeviceRegistry. Thread-safe.
/// A task's inputs whose bytes are in files (a co-located client's memfds).
struct FileInputs {
  TensorFiles files;
  /// For a device whose link passes only messages: stores the files as
  /// blobs and names those in the task's payload-less inputs.
  std::function<absl::Status(v1::Task &, const TensorFiles &)> storeAsBlobs;
  /// The caller maps output files itself (kilnd's local socket).
  bool callerMapsOutputs = false;
  /// One end of a socket pair for the agent to serve the task's direct
  /// channel on (-1: none; owned by the caller). It goes only to an agent
  /// whose link passes files.
  int directChannel = -1;
};

class Scheduler {
public:
  using Clock = std::chrono::steady_clock;

  /// An agent that takes none of a task in this long or more (the time
  /// the call had left when it was sent) is stalled in the registry
  /// (DeviceRegistry::markStalled); a call that had less says little.
  static constexpr std::chrono::milliseconds kStallEvidence{100};

  /// `deviceWait` bounds how long run() waits for a device of the kind to
  /// register (the local agent needs a moment at startup).
  Scheduler(DeviceRegistry &registry, std::chrono::milliseconds deviceWait);

  /// Sends `task` (task_id and device_id are filled in here), completed by
  /// its executable's `record`, to a device of `kind` and waits for its
  /// TaskResult until `deadline`.
  /// Only devices that report every CPU feature the record's manifest lists
  /// are leased: FAILED_PRECONDITION naming the missing ones when the kind's
  /// devices lack them. UNAVAILABLE when no device of the kind appears
  /// within the device wait,
  /// or when its agent is lost and no other device can take the task;
  /// DEADLINE_EXCEEDED when no answer arrives in time.
  /// `fileInputs` (may be null) go with the task as files where the
  /// device's link passes them, else as blobs.
  /// A non-empty `pinnedDevice` (it holds the task's held inputs) is the
  /// only device the task may run on: FAILED_PRECONDITION when it is gone.
  /// Releases of held tensors waiting for the chosen device (`held`, may be
  /// null) go with the task.
  absl::StatusOr<ScheduledResult> run(const std::string &kind, v1::Task task,
                                      const TaskRecord &record,
                                      Clock::time_point deadline,
                                      FileInputs *fileInputs = nullptr,
                                      const std::string &pinnedDevice = "",
                                      HeldTensorIndex *held = nullptr);

private:
  DeviceRegistry &registry;
  std::chrono::milliseconds deviceWait;
  std::atomic<uint64_t> nextTaskId{1};
};

} // namespace kiln::server
