//===- ParameterSetCache.h - the parameter sets Execute names -------------===//
//
// This file declares ParameterSetCache, which keeps the parsed ParameterSets
// (ExecuteRequest.parameter_set) that recent calls named, so a model's
// hundreds of parameter digests are read, hashed and parsed once, not on
// every call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/store/ParsedBlobCache.h"
#include "kiln/v1/executor.pb.h"

#include <memory>

namespace kiln::server {

/// Up to `capacity` sets. A set is content-addressed, so a cached one never
/// goes stale; every hit marks its blob used in the store's LRU index, as
/// reading it would. When full, the cache starts over.
class ParameterSetCache {
public:
  explicit ParameterSetCache(const ContentStore &store, size_t capacity = 256);

  /// The set stored under `digest`, every digest in it well formed: cached,
  /// or read and verified from the store. NOT_FOUND when the store lacks the
  /// blob; INVALID_ARGUMENT when it is over kMaxParameterSetBytes, is not a ParameterSet, or
  /// names a malformed digest; DATA_LOSS when it is corrupt.
  absl::StatusOr<std::shared_ptr<const v1::ParameterSet>>
  get(const v1::Digest &digest);

private:
  const ContentStore &store;
  ParsedBlobCache<v1::ParameterSet> sets;
};

} // namespace kiln::server
