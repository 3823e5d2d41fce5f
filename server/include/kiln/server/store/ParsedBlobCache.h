//===- ParsedBlobCache.h - parsed forms of content-addressed blobs --------===//
//
// This file declares ParsedBlobCache, the bounded map RecordCache and
// ParameterSetCache keep their parsed messages in: a blob's parsed form is
// made once, and a hit marks the blob used in the store's LRU index, as
// reading it would.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/store/ContentStore.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <memory>
#include <mutex>
#include <string>

namespace kiln::server {

/// Up to `capacity` parsed blobs by hash. A blob is content-addressed, so a
/// kept form never goes stale; when full, the cache starts over.
template <typename Parsed> class ParsedBlobCache {
public:
  ParsedBlobCache(const ContentStore &store, size_t capacity)
      : store(store), capacity(capacity < 1 ? 1 : capacity) {}

  /// The kept form of `digest`, or `parse(digest)`'s (kept when it is OK;
  /// an error is returned and not kept). `parse` runs without the lock.
  template <typename Parse>
  absl::StatusOr<std::shared_ptr<const Parsed>> get(const v1::Digest &digest,
                                                    Parse &&parse) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto it = kept.find(digest.hash()); it != kept.end()) {
        store.markUsed(digest);
        return it->second;
      }
    }
    absl::StatusOr<std::shared_ptr<const Parsed>> made = parse(digest);
    if (!made.ok())
      return made.status();
    std::lock_guard<std::mutex> lock(mutex);
    if (kept.size() >= capacity)
      kept.clear();
    kept.emplace(digest.hash(), *made);
    return made;
  }

private:
  const ContentStore &store;
  size_t capacity;
  std::mutex mutex;
  absl::flat_hash_map<std::string, std::shared_ptr<const Parsed>>
      kept; // guarded by mutex
};

} // namespace kiln::server
