//===- RecordCache.cpp - the records of recently executed executables -----===//
//
// This file implements RecordCache over readExecutableRecord.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/RecordCache.h"

#include "kiln/server/store/CompileCache.h"

namespace kiln::server {

RecordCache::RecordCache(const ContentStore &store, size_t capacity)
    : store(store), capacity(capacity < 1 ? 1 : capacity) {}

absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>>
RecordCache::get(const v1::Digest &executable) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = records.find(executable.hash()); it != records.end()) {
      store.markUsed(executable);
      return it->second;
    }
  }
  absl::StatusOr<v1::ExecutableRecord> read =
      readExecutableRecord(store, executable);
  if (!read.ok())
    return read.status();
  // What Execute and the agents use: not the dumps or the cost report.
  auto record = std::make_shared<v1::ExecutableRecord>();
  *record->mutable_manifest() = std::move(*read->mutable_manifest());
  *record->mutable_artifact() = std::move(*read->mutable_artifact());
  std::lock_guard<std::mutex> lock(mutex);
  if (records.size() >= capacity)
    records.clear();
  records.emplace(executable.hash(), record);
  return std::shared_ptr<const v1::ExecutableRecord>(record);
}

} // namespace kiln::server
