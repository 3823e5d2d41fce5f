//===- BlobQuota.cpp - stored bytes per caller ----------------------------===//
//
// This file implements BlobQuota: per-caller sets of uploaded digests with a
// running total, pruned against the store when the total would pass the
// limit.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/BlobQuota.h"

#include "kiln/common/Digest.h"

#include "absl/strings/str_cat.h"

namespace kiln::server {

BlobQuota::BlobQuota(const ContentStore &store, int64_t limitBytes)
    : store(store), limit(limitBytes) {}

void BlobQuota::prune(Owned &owned) {
  for (auto it = owned.blobs.begin(); it != owned.blobs.end();) {
    if (store.contains(it->second)) {
      ++it;
      continue;
    }
    owned.bytes -= it->second.size_bytes();
    owned.blobs.erase(it++);
  }
}

absl::Status BlobQuota::admit(const std::string &caller,
                              const v1::Digest &digest) {
  if (limit <= 0)
    return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mutex);
  Owned &owned = callers[caller];
  if (owned.bytes + digest.size_bytes() > limit)
    prune(owned);
  if (owned.bytes + digest.size_bytes() <= limit)
    return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "'", caller, "' keeps ", owned.bytes, " bytes of blobs in this kilnd; ",
      describeBlob(digest), " would take it past its quota of ", limit,
      " bytes (--blob-quota-bytes). Room comes back as its blobs are "
      "evicted or collected (kiln cache gc, an admin's)"));
}

void BlobQuota::charge(const std::string &caller, const v1::Digest &digest) {
  if (limit <= 0)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  Owned &owned = callers[caller];
  if (owned.blobs.emplace(digest.hash(), digest).second)
    owned.bytes += digest.size_bytes();
}

int64_t BlobQuota::usage(const std::string &caller) {
  std::lock_guard<std::mutex> lock(mutex);
  Owned &owned = callers[caller];
  prune(owned);
  return owned.bytes;
}

} // namespace kiln::server
