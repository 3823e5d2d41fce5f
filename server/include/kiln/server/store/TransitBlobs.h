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
// (docs/architecture.md, "In-transit blobs in memory"). Here an output read
// out by its client is dropped at once, so its pages are freed and reused
// by the next call's blobs; an unread blob goes to disk to make room.
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
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::server {

/// Receives one in-transit upload into a memfd, checking its size and
/// SHA-256 as TransitBlobs' counterpart of VerifiedFileWriter, or, for an
/// upload kilnd names, its size while hashing it.
class TransitDraft {
public:
  static absl::StatusOr<std::unique_ptr<TransitDraft>> create(v1::Digest digest);
  static absl::StatusOr<std::unique_ptr<TransitDraft>>
  create(DigestVerifier::Unnamed blob);

  /// DATA_LOSS once more bytes than the digest's size arrive;
  /// RESOURCE_EXHAUSTED when memory takes no more.
  absl::Status append(std::string_view bytes);
  /// The blob, sealed (requiredTensorFileSeals); DATA_LOSS on a size or
  /// hash mismatch.
  absl::StatusOr<UniqueFd> finish();

  int64_t bytesSeen() const { return verifier.bytesSeen(); }
  /// The blob's digest; an unnamed upload's has its hash once finish()
  /// succeeded.
  const v1::Digest &digest() const { return verifier.expected(); }

private:
  template <typename Expected>
  TransitDraft(Expected expected, UniqueFd file)
      : file(std::move(file)), verifier(std::move(expected)) {}
  /// A new memfd that can be sealed.
  static absl::StatusOr<UniqueFd> newFile();

  UniqueFd file;
  DigestVerifier verifier;
};

/// Sealed in-transit blobs by hash, at most `budgetBytes` of them, counting
/// uploads still arriving (reserve()). Making room takes unpinned blobs:
/// spent ones first (dropped: outputs every client they were handed to has
/// read, inputs an Execute has run with), then the least recently used,
/// which are spilled (written to the disk store, outside the lock, pinned
/// meanwhile) before they leave memory: a blob nobody has used yet (an
/// output its client is about to fetch, an input on its way to its
/// Execute) is never lost for room. Spent is per blob, not per upload: an
/// input uploaded again for one call is spent when another call sharing
/// it ends, and may be dropped before the first call pins it (that call
/// is then FAILED_PRECONDITION naming it). Thread-safe.
class TransitBlobs {
public:
  /// kilnd's default (--transit-memory-bytes).
  static constexpr int64_t kDefaultBudgetBytes = int64_t{1} << 30;

  struct Stats {
    int64_t blobs = 0;
    int64_t bytes = 0;
    /// Since construction: spent blobs dropped (read-out outputs at once,
    /// or any to make room), and unused blobs spilled to disk to make room.
    int64_t dropped = 0;
    int64_t spilled = 0;
  };

  /// Writes an unread blob leaving memory to the disk store (its hash,
  /// size and sealed file); false when it could not, and it stays.
  using Spill = std::function<bool(const std::string &hash, int64_t size, int fd)>;

  /// Room for one blob, counted in the budget from reserve() until add()
  /// takes it or it is destroyed. Movable.
  class Reservation {
  public:
    Reservation(Reservation &&other) noexcept
        : owner(std::exchange(other.owner, nullptr)), bytes(other.bytes) {}
    Reservation &operator=(Reservation &&) = delete;
    ~Reservation();

  private:
    friend class TransitBlobs;
    Reservation(TransitBlobs *owner, int64_t bytes) : owner(owner), bytes(bytes) {}
    TransitBlobs *owner;
    int64_t bytes;
  };

  /// `pins` are the store's: a pinned blob never leaves memory.
  TransitBlobs(int64_t budgetBytes, StoreIndex &pins, Spill spill)
      : budget(budgetBytes), pins(pins), spill(std::move(spill)) {}

  int64_t budgetBytes() const { return budget; }

  /// Whether a blob of `size` bytes may be held here at all.
  bool fits(int64_t size) const { return size > 0 && size <= budget; }

  /// Room for the blob `hash` of `size` bytes: none (an empty reservation)
  /// when it is held already, else made as above (dropping and spilling)
  /// and held. nullopt when pinned blobs leave no room or a spill failed
  /// (what was dropped or spilled before that stays gone from memory): the
  /// caller stores the blob on disk.
  std::optional<Reservation> reserve(const std::string &hash, int64_t size);

  /// Holds `file` (sealed, `size` bytes, hashing to `hash`) as that blob in
  /// the room `room` reserved (released either way), taking the file only
  /// on success. A blob held already stays (the new file is closed, and
  /// the blob counts as published again: not spent). False when it is
  /// held with another size, or `room` is not its size (it left memory
  /// since an empty reservation).
  bool add(const std::string &hash, int64_t size, UniqueFd &&file,
           Reservation room);

  /// Whether the blob is held with `size` bytes.
  bool holds(const std::string &hash, int64_t size) const;
  /// Its file (a new descriptor, read-only use), marked used; NOT_FOUND
  /// when not held with `size` bytes.
  absl::StatusOr<UniqueFd> open(const std::string &hash, int64_t size) const;
  /// Marks the blob most recently used.
  void touch(const std::string &hash) const;
  /// An Execute handed the blob to its client as an output: one more full
  /// read (readOut) is owed before it may be dropped.
  void handOut(const std::string &hash);
  /// The blob was read out in full. When that was the last read owed for
  /// an output, the output is spent: dropped now unless pinned (an Execute
  /// in flight reads it), else the first to go when room is needed. Reads
  /// of a blob never handed out (an input a remote agent fetches) only
  /// mark it used.
  void readOut(const std::string &hash);
  /// An Execute has run with the blob as an input: unless it still owes
  /// reads as an output, it is spent, among the first to go (dropped, not
  /// spilled) when room is needed. It stays until then, so that a client
  /// sending it again by digest need not upload it again; one that finds
  /// it gone is told which blob is missing (FAILED_PRECONDITION).
  void consumed(const std::string &hash);

  Stats stats() const;

private:
  struct Entry {
    int64_t size = 0;
    UniqueFd file;
    uint64_t tick = 0;
    /// Full reads still owed to clients it was handed to as an output.
    int owed = 0;
    /// Nobody needs it any more: an output read by every client it was
    /// handed to, or an input an Execute has run with.
    bool spent = false;
    /// Being spilled by some makeRoom: no one else takes it.
    bool leaving = false;
  };
  using Entries = absl::flat_hash_map<std::string, Entry>;

  /// Marks `entry` most recently used.
  void requeue(const std::string &hash, Entry &entry) const;
  /// Removes the entry from memory (dropped or spilled).
  void erase(Entries::iterator it);
  /// Reserves `size` bytes under `lock`, taking unpinned blobs out as the
  /// class comment says: spent ones are dropped at once, the rest are
  /// pinned, spilled with `lock` released, then erased. False, with the
  /// reservation undone, when they cannot be.
  bool makeRoom(std::unique_lock<std::mutex> &lock, int64_t size);
  void release(int64_t bytes);

  const int64_t budget;
  StoreIndex &pins;
  const Spill spill;
  mutable std::mutex mutex;
  mutable Entries entries;
  /// Blobs by tick, least recently used first.
  mutable std::map<uint64_t, std::string> used;
  mutable uint64_t nextTick = 1;
  int64_t totalBytes = 0;
  int64_t reservedBytes = 0;
  int64_t dropped = 0;
  int64_t spilled = 0;
};

} // namespace kiln::server
