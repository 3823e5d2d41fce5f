//===- HeldTensorIndex.cpp - which device holds which kept tensor --------===//
//
// This file implements HeldTensorIndex.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/HeldTensorIndex.h"

#include "absl/strings/str_cat.h"

namespace kiln::server {

void HeldTensorIndex::add(const std::string &handle,
                          const std::string &deviceId, const std::string &kind,
                          const v1::TensorType &type) {
  std::lock_guard<std::mutex> lock(mutex);
  held[handle] = Entry{deviceId, kind, type};
}

absl::StatusOr<HeldTensorIndex::Entry>
HeldTensorIndex::find(const std::string &handle) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = held.find(handle);
  if (it == held.end())
    return absl::FailedPreconditionError(absl::StrCat(
        "held tensor '", handle,
        "' is not held by any device of this kilnd (released, never kept "
        "here, or its device left)"));
  return it->second;
}

bool HeldTensorIndex::release(const std::string &handle) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = held.find(handle);
  if (it == held.end())
    return false;
  pending[it->second.deviceId].push_back(handle);
  held.erase(it);
  return true;
}

void HeldTensorIndex::returnReleases(const std::string &deviceId,
                                     const v1::Task &task) {
  if (task.release().empty())
    return;
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> &queue = pending[deviceId];
  queue.insert(queue.end(), task.release().begin(), task.release().end());
}

void HeldTensorIndex::takeReleases(const std::string &deviceId,
                                   v1::Task &task) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = pending.find(deviceId);
  if (it == pending.end())
    return;
  for (std::string &handle : it->second)
    task.add_release(std::move(handle));
  pending.erase(it);
}

size_t HeldTensorIndex::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return held.size();
}

} // namespace kiln::server
