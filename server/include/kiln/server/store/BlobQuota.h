//===- BlobQuota.h - stored bytes per caller --------------------*- C++ -*-===//
//
// This file declares BlobQuota: how many bytes of blobs each authenticated
// user may keep in kilnd's store (--blob-quota-bytes). A blob counts against
// whoever uploaded it first, while it is stored; eviction and garbage
// collection give the room back. Blobs already stored cost nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/store/ContentStore.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"

#include <cstdint>
#include <mutex>
#include <string>

namespace kiln::server {

class BlobQuota {
public:
  /// `limitBytes` 0: no limit.
  BlobQuota(const ContentStore &store, int64_t limitBytes);

  /// OK when `caller` may store `digest` (not yet stored: the caller checks
  /// that, since it needs the answer too) within the limit;
  /// RESOURCE_EXHAUSTED naming the caller, its usage and the flag.
  absl::Status admit(const std::string &caller, const v1::Digest &digest);

  /// Counts `digest`, which `caller` just stored, against `caller`.
  void charge(const std::string &caller, const v1::Digest &digest);

  /// Bytes of `caller`'s blobs still stored.
  int64_t usage(const std::string &caller);

private:
  struct Owned {
    absl::flat_hash_map<std::string, v1::Digest> blobs;
    int64_t bytes = 0;
  };
  /// Drops what the store no longer holds; lock held.
  void prune(Owned &owned);

  const ContentStore &store;
  int64_t limit;
  std::mutex mutex;
  absl::flat_hash_map<std::string, Owned> callers;
};

} // namespace kiln::server
