//===- HeldTensors.h - outputs an agent keeps for later tasks -------------===//
//
// This file declares HeldTensors: tensors a task's caller asked the device
// to keep (ExecuteRequest.keep_outputs), by an unguessable handle, under a
// byte budget, until released.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AlignedBuffer.h"

#include "kiln/v1/tensor.pb.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::agent {

/// Thread-safe. Unlike ResidentSet nothing is evicted: a handle stays valid
/// until released, because only its caller has the tensor.
class HeldTensors {
public:
  using Buffer = std::shared_ptr<const AlignedBuffer>;
  struct Held {
    Buffer buffer;
    v1::TensorType type;
  };

  explicit HeldTensors(int64_t budgetBytes) : budget(budgetBytes) {}

  /// The tensor held under `handle`; FAILED_PRECONDITION naming it when
  /// none is (released, or held by an agent that has since restarted).
  absl::StatusOr<Held> find(const std::string &handle) const;

  /// Holds every tensor of `tensors`, or none: RESOURCE_EXHAUSTED when they
  /// would take the held bytes past the budget. Returns their new handles,
  /// in order.
  absl::StatusOr<std::vector<std::string>>
  holdAll(std::vector<std::pair<AlignedBuffer, v1::TensorType>> tensors);

  /// Drops `handle` (a task still using the tensor keeps its buffer alive
  /// until it ends); unknown handles are ignored.
  void release(const std::string &handle);

  int64_t heldBytes() const;
  size_t size() const;
  int64_t budgetBytes() const { return budget; }

private:
  const int64_t budget;
  mutable std::mutex mutex;
  std::unordered_map<std::string, Held> held; // guarded by mutex
  int64_t bytes = 0;                          // guarded by mutex
};

} // namespace kiln::agent
