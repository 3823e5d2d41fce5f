//===- RecordCache.cpp - the records of recently executed executables -----===//
//
// This file implements RecordCache over readExecutableRecord.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/RecordCache.h"

#include "kiln/server/store/CompileCache.h"

namespace kiln::server {

RecordCache::RecordCache(const ContentStore &store, size_t capacity)
    : store(store), records(store, capacity) {}

absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>>
RecordCache::get(const v1::Digest &executable) {
  return records.get(executable, [this](const v1::Digest &digest)
                                     -> absl::StatusOr<std::shared_ptr<
                                         const v1::ExecutableRecord>> {
    absl::StatusOr<v1::ExecutableRecord> read =
        readExecutableRecord(store, digest);
    if (!read.ok())
      return read.status();
    // What Execute and the agents use: not the dumps or the cost report.
    auto record = std::make_shared<v1::ExecutableRecord>();
    *record->mutable_manifest() = std::move(*read->mutable_manifest());
    *record->mutable_artifact() = std::move(*read->mutable_artifact());
    return record;
  });
}

} // namespace kiln::server
