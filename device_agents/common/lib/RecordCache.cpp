//===- RecordCache.cpp - executable records parsed once per link ----------===//
#include "kiln/agent/RecordCache.h"

namespace kiln::agent {

absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>>
RecordCache::get(const std::string &bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = kept.find(bytes); it != kept.end())
      return it->second;
  }
  auto record = std::make_shared<v1::ExecutableRecord>();
  if (!record->ParseFromString(bytes))
    return absl::InvalidArgumentError(
        "the task's executable record does not parse");
  std::lock_guard<std::mutex> lock(mutex);
  ++parsed;
  if (kept.size() >= kKept)
    kept.clear();
  kept.emplace(bytes, record);
  return record;
}

size_t RecordCache::parses() const {
  std::lock_guard<std::mutex> lock(mutex);
  return parsed;
}

} // namespace kiln::agent
