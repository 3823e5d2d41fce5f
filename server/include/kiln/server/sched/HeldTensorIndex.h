//===- HeldTensorIndex.h - which device holds which kept tensor ----------===//
//
// This file declares HeldTensorIndex: kilnd's record of the tensors devices
// hold for callers (ExecuteRequest.keep_outputs), so that a call naming one
// runs on its device, and releases reach that device with its next task.
// An agent that reconnects keeps what it held, so nothing is dropped when a
// device leaves: a call naming its tensors fails with FAILED_PRECONDITION
// while it is gone, and its agent's answer decides once it is back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/agent.pb.h"
#include "kiln/v1/tensor.pb.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <mutex>
#include <string>
#include <vector>

namespace kiln::server {

/// Thread-safe.
class HeldTensorIndex {
public:
  struct Entry {
    std::string deviceId;
    /// The device's kind (the target of the executable that made it).
    std::string kind;
    v1::TensorType type;
  };

  /// An output `deviceId` (of `kind`) kept under `handle`.
  void add(const std::string &handle, const std::string &deviceId,
           const std::string &kind, const v1::TensorType &type);

  /// Where `handle` is held; FAILED_PRECONDITION naming it when kilnd knows
  /// no such handle (never issued, released, or its device left).
  absl::StatusOr<Entry> find(const std::string &handle) const;

  /// Forgets `handle`; its device drops the tensor with the next task it
  /// runs (takeReleases). Returns false for an unknown handle (ignored).
  bool release(const std::string &handle);

  /// Adds the releases waiting for `deviceId` to `task` and clears them.
  void takeReleases(const std::string &deviceId, v1::Task &task);

  /// Puts a task's releases back for `deviceId` (the task did not run).
  void returnReleases(const std::string &deviceId, const v1::Task &task);

  size_t size() const;

private:
  mutable std::mutex mutex;
  absl::flat_hash_map<std::string, Entry> held;                  // by handle
  absl::flat_hash_map<std::string, std::vector<std::string>> pending; // by device
};

} // namespace kiln::server
