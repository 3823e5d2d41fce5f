//===- RecordCache.h - the records of recently executed executables -------===//
//
// This file declares RecordCache, which keeps the parsed ExecutableRecords
// Execute needs (manifest and artifact digest), so a call does not read,
// hash and parse its record from the store every time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/store/ParsedBlobCache.h"
#include "kiln/v1/executable.pb.h"

#include <memory>

namespace kiln::server {

/// Up to `capacity` records, each without its stage dumps and op report.
/// A record is content-addressed, so a cached one never goes stale; every
/// hit marks the record's blob used in the store's LRU index, as reading it
/// would. When full, the cache starts over.
class RecordCache {
public:
  explicit RecordCache(const ContentStore &store, size_t capacity = 256);

  /// The record of `executable` (the caller checks it is an executable):
  /// cached, or read and verified from the store (NOT_FOUND when absent,
  /// DATA_LOSS when corrupt, as readExecutableRecord).
  absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>>
  get(const v1::Digest &executable);

private:
  const ContentStore &store;
  ParsedBlobCache<v1::ExecutableRecord> records;
};

} // namespace kiln::server
