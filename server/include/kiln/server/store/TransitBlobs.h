//===- TransitBlobs.h - in-transit blobs held in memory ---------*- C++ -*-===//
//
// This file declares TransitBlobs, the content store's memory tier for blobs
// that only pass through kilnd (Execute inputs uploaded with
// WriteRequest.in_transit, agents' outputs on their way to a gRPC client),
// and TransitDraft, which receives one such upload.
//
// Each blob is a sealed memfd: hashed once as it arrived, then immutable.
// On disk, every such blob went into fresh page-cache pages that stayed
// until eviction; on a VM whose free memory the host reclaims, those first
// touches ran at ~250 MB/s and took most of a 256 MiB gRPC round trip
// (docs/architecture.md, "In-transit blobs in memory"). Here a blob read
// out in full goes first when room is needed, so its pages are freed and
// reused by the next call's blobs; an unread one goes to disk.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/Digest.h"
#include "kiln/common/UniqueFd.h"
#include "kiln/server/store/StoreIndex.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace kiln::server {

/// Receives one in-transit upload into a memfd, checking its size and
/// SHA-256 as TransitBlobs' counterpart of VerifiedFileWriter.
class TransitDraft {
public:
  static absl::StatusOr<std::unique_ptr<TransitDraft>> create(v1::Digest digest);

  /// DATA_LOSS once more bytes than the digest's size arrive; INTERNAL on a
  /// failed write.
  absl::Status append(std::string_view bytes);
  /// The blob, sealed (requiredTensorFileSeals); DATA_LOSS on a size or
  /// hash mismatch.
  absl::StatusOr<UniqueFd> finish();

  int64_t bytesSeen() const { return verifier.bytesSeen(); }

private:
  TransitDraft(v1::Digest digest, UniqueFd file)
      : file(std::move(file)), verifier(std::move(digest)) {}

  UniqueFd file;
  DigestVerifier verifier;
};

/// Sealed in-transit blobs by hash, at most `budgetBytes` of them. Making
/// room takes unpinned blobs, those read out in full first (dropped: their
/// reader has them), then the least recently used, which are spilled
/// (written to the disk store) before they leave memory: a blob nobody has
/// read yet (an output its client is about to fetch, an input it may send
/// again by digest) is never lost for room. Thread-safe.
class TransitBlobs {
public:
  /// kilnd's default (--transit-memory-bytes).
  static constexpr int64_t kDefaultBudgetBytes = int64_t{1} << 30;

  struct Stats {
    int64_t blobs = 0;
    int64_t bytes = 0;
    /// Since construction: blobs read out and dropped to make room, and
    /// unread ones spilled to disk to make room.
    int64_t dropped = 0;
    int64_t spilled = 0;
  };

  /// Writes an unread blob leaving memory to the disk store (its hash,
  /// size and sealed file); false when it could not, and it stays.
  using Spill = std::function<bool(const std::string &hash, int64_t size, int fd)>;

  /// `pins` are the store's: a pinned blob never leaves memory.
  TransitBlobs(int64_t budgetBytes, StoreIndex &pins, Spill spill)
      : budget(budgetBytes), pins(pins), spill(std::move(spill)) {}

  int64_t budgetBytes() const { return budget; }

  /// Whether a blob of `size` bytes may be held here at all.
  bool fits(int64_t size) const { return size > 0 && size <= budget; }

  /// Holds `file` (sealed, `size` bytes, hashing to `hash`) as that blob,
  /// taking it only on success,
  /// dropping unpinned blobs to make room. False, with nothing dropped,
  /// when pinned blobs leave no room: the caller stores it on disk. A blob
  /// held already stays (the new file is closed).
  bool add(const std::string &hash, int64_t size, UniqueFd &&file);

  /// Whether the blob is held with `size` bytes.
  bool holds(const std::string &hash, int64_t size) const;
  /// Its file (a new descriptor, read-only use), marked used; NOT_FOUND
  /// when not held with `size` bytes.
  absl::StatusOr<UniqueFd> open(const std::string &hash, int64_t size) const;
  /// Marks the blob most recently used.
  void touch(const std::string &hash) const;
  /// The blob was read out in full (its reader has it): dropped now unless
  /// pinned (an Execute in flight reads it), else the first to go when
  /// room is needed.
  void readOut(const std::string &hash);

  Stats stats() const;

private:
  struct Entry {
    int64_t size = 0;
    UniqueFd file;
    uint64_t tick = 0;
    bool readOut = false;
  };
  /// Moves `entry` to the back of its queue.
  void requeue(const std::string &hash, Entry &entry) const;
  /// Takes unpinned blobs out, read-out ones first (dropped), then unread
  /// ones (spilled), until `size` more bytes fit; false when they cannot
  /// (nothing leaves when pins stand in the way; a failed spill stops).
  bool makeRoom(int64_t size);

  const int64_t budget;
  StoreIndex &pins;
  const Spill spill;
  mutable std::mutex mutex;
  mutable absl::flat_hash_map<std::string, Entry> entries;
  /// Drop order: read-out blobs, then the rest, each oldest tick first.
  mutable std::map<uint64_t, std::string> readOutQueue;
  mutable std::map<uint64_t, std::string> usedQueue;
  mutable uint64_t nextTick = 1;
  int64_t totalBytes = 0;
  int64_t dropped = 0;
  int64_t spilled = 0;
};

} // namespace kiln::server
