//===- ContentStore.h - content-addressed blob store on disk ----*- C++ -*-===//
//
// This file declares ContentStore, kilnd's local CAS: every blob lives under
// <root>/<hash[0:2]>/<hash> and is verified against its SHA-256 on read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/store/BlobWriter.h"
#include "kiln/server/store/StoreIndex.h"
#include "kiln/server/store/TransitBlobs.h"
#include "kiln/v1/tensor.pb.h"

#include "kiln/common/UniqueFd.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

namespace kiln::server {

/// A content-addressed store of immutable blobs on local disk. Thread-safe:
/// concurrent writers of the same blob each write their own temporary file
/// and rename it over the same (identical) final file. An in-memory
/// StoreIndex (rebuilt by scanning at open, ordered by file mtime, which
/// reads refresh) tracks sizes and LRU order; with a capacity, writes that
/// push the store past it evict least-recently-used unpinned blobs.
///
/// With a transit budget, in-transit blobs (uploads marked in transit,
/// agents' output files) are held in memory as sealed memfds (TransitBlobs)
/// rather than written to disk; every read below serves them too, and
/// disk takes them only when pinned ones leave no room.
class ContentStore {
public:
  /// Opens (creating if needed) a store rooted at `root`, capped at
  /// `capacityBytes` (0: unlimited), and indexes the blobs already there.
  /// Up to `transitBytes` of in-transit blobs stay in memory (0: none).
  static absl::StatusOr<std::unique_ptr<ContentStore>>
  open(const std::filesystem::path &root, int64_t capacityBytes = 0,
       int64_t transitBytes = 0);

  /// Stores `bytes`, whose digest must equal `digest` (INVALID_ARGUMENT
  /// otherwise).
  absl::Status write(const v1::Digest &digest, std::string_view bytes);

  /// Stores `bytes` and returns their digest (hashed once; a blob already
  /// held is only marked used).
  absl::StatusOr<v1::Digest> put(std::string_view bytes,
                                 Durability durability = Durability::kDurable);

  /// Stores the `size` bytes of the file `fd` (an agent's output memfd) and
  /// returns their digest; FAILED_PRECONDITION when the file holds another
  /// size or is not sealed against writes and shrinking (F_SEAL_WRITE,
  /// F_SEAL_SHRINK). The file is mapped, not read into memory; in transit,
  /// the memory tier keeps the file itself (no copy).
  absl::StatusOr<v1::Digest> putFile(int fd, int64_t size,
                                     Durability durability);

  /// The blob's file, opened read-only, without hashing it (it was verified
  /// when written): for handing to a local agent. NOT_FOUND when absent or
  /// not of the digest's size.
  absl::StatusOr<UniqueFd> openBlob(const v1::Digest &digest) const;

  /// Starts a chunked write of the blob `digest`; an in-transit blob (an
  /// Execute input or output) is not fsynced.
  absl::StatusOr<std::unique_ptr<BlobWriter>>
  beginWrite(const v1::Digest &digest,
             Durability durability = Durability::kDurable);

  /// Starts a chunked in-transit write of `size` bytes that nobody hashed:
  /// the store hashes them as they arrive and names the blob (the writer's
  /// digest() after commit). Only into memory, in room reserved now:
  /// FAILED_PRECONDITION when the memory tier has none (the uploader then
  /// sends the blob by its digest), INVALID_ARGUMENT for a negative size.
  absl::StatusOr<std::unique_ptr<BlobWriter>> beginNamingWrite(int64_t size);

  /// Reads and verifies a blob. NOT_FOUND when absent; INVALID_ARGUMENT when
  /// the blob is intact but `digest.size_bytes` is not its size (nothing
  /// changes); DATA_LOSS when its bytes do not match the hash, in which case
  /// the corrupt file is moved to <root>/quarantine/<hash>.corrupt-<time>.
  absl::StatusOr<std::string> read(const v1::Digest &digest) const;

  using ChunkSink = std::function<absl::Status(std::string_view)>;

  /// Like read(), but hands the blob to `sink` in chunks of up to 1 MiB as
  /// it is read and hashed (memory stays bounded, whatever the blob's size),
  /// stopping at the first error `sink` returns. The verdict comes at the
  /// end: when it is not OK (DATA_LOSS: the file was damaged), what `sink`
  /// got must be discarded. A file whose size is not the digest's is never
  /// handed out.
  absl::Status stream(const v1::Digest &digest, const ChunkSink &sink) const;

  /// Like read() but keeps nothing: OK when the blob is present and intact.
  absl::Status verify(const v1::Digest &digest) const;

  /// An Execute handed the blob to its gRPC client as an output: held in
  /// memory, it waits for that client's full read (readOut).
  void handOut(const v1::Digest &digest);
  /// The blob was streamed out in full to a reader (Blobs.Read): held in
  /// memory as an output whose every client has now read it, it is dropped
  /// now unless pinned, else the first to go when room is needed.
  void readOut(const v1::Digest &digest);
  /// An Execute ran with the blob as an input: held in memory (and owed to
  /// no reader), it is dropped rather than spilled when room is needed.
  void consumed(const v1::Digest &digest);

  /// Whether the blob is in the store to stay, for a digest named as a
  /// parameter or parameter set: one held only in memory (the same bytes
  /// as an in-transit blob) is written to disk, fsynced, first; a copy on
  /// disk already counts as it is (as put() takes it, even one spilled
  /// without an fsync). False when absent or that write fails.
  bool keep(const v1::Digest &digest);

  /// True when a file of the right size exists for `digest` (cheap: does not
  /// hash). read() and verify() are the integrity checks.
  bool contains(const v1::Digest &digest) const;

  /// Whether the store's index of blobs on disk lists it: no filesystem access (a
  /// `stat` per parameter per Execute added up), so a file deleted behind
  /// the store's back still counts until it is read. For blobs a reader
  /// holds anyway (an agent's resident parameters); contains() otherwise.
  bool indexed(const v1::Digest &digest) const;

  /// Marks the blob most recently used in the LRU index (not on disk: the
  /// file's mtime, which carries the order across restarts, is left), as
  /// using a copy read earlier should.
  void markUsed(const v1::Digest &digest) const;

  /// The digests among `digests` that the store lacks, in the given order,
  /// each listed once. Invalid digests count as missing.
  std::vector<v1::Digest>
  findMissing(const std::vector<v1::Digest> &digests) const;

  /// Where the blob with hex hash `hash` lives.
  std::filesystem::path blobPath(const std::string &hash) const;

  const std::filesystem::path &root() const { return rootDir; }

  /// Where corrupt blobs are moved, under the root.
  static constexpr const char *kQuarantineDir = "quarantine";

  /// Pins `digests` against eviction until the returned set is destroyed.
  BlobPins pin(const std::vector<v1::Digest> &digests = {}) const;

  /// Evicts least-recently-used unpinned blobs until at most `targetBytes`
  /// remain; `targetBytes` 0 means the capacity (nothing when unlimited).
  StoreIndex::Evicted collectGarbage(int64_t targetBytes = 0);

  /// The size cap (0: unlimited).
  int64_t capacityBytes() const { return capacity; }

  /// The index: sizes, LRU order, pins, eviction counters.
  const StoreIndex &index() const { return *blobIndex; }

  /// The in-transit blobs held in memory (none without a transit budget).
  TransitBlobs::Stats transitStats() const;

private:
  ContentStore(std::filesystem::path root, int64_t capacityBytes,
               int64_t transitBytes);

  /// Hands the blob held in memory to `sink` and `bytes` as readVerified
  /// does, hashing it only when `check`; NOT_FOUND when it is not held.
  absl::Status readTransit(const v1::Digest &digest, const ChunkSink *sink,
                           std::string *bytes, bool check) const;
  /// Holds the sealed `file` in memory in `room`, or else writes its bytes
  /// to disk.
  absl::Status publishTransit(const v1::Digest &digest, UniqueFd file,
                              TransitBlobs::Reservation room);
  /// Whether the blob's file is on disk with the digest's size (contains()
  /// without the memory tier); `digest` valid.
  bool onDisk(const v1::Digest &digest) const;
  /// writeHashed of the first `digest.size_bytes()` bytes of the file `fd`
  /// (mapped, not read).
  absl::Status writeHashedFile(const v1::Digest &digest, int fd,
                               Durability durability);
  /// Writes an in-transit blob leaving memory to disk; whether it is there.
  bool spillTransit(const std::string &hash, int64_t size, int fd);
  /// putFile's in-transit path: hashes the sealed file and holds it.
  absl::StatusOr<v1::Digest> putTransitFile(int fd, int64_t size);

  /// Indexes the blobs on disk, oldest mtime first.
  void scan();
  /// Marks a blob just read as most recently used (index and file mtime).
  void touch(const std::string &hash) const;
  /// Indexes a committed blob and evicts down to the capacity.
  void committed(const v1::Digest &digest);
  /// Writes `bytes`, which hash to `digest`, to disk and indexes them.
  absl::Status writeHashed(const v1::Digest &digest, std::string_view bytes,
                           Durability durability);

  /// Reads the blob, hashing it; hands each chunk to `sink` and appends it
  /// to `bytes`, each when non-null.
  absl::Status readVerified(const v1::Digest &digest, const ChunkSink *sink,
                            std::string *bytes) const;
  /// Moves the corrupt blob file `path` into the quarantine directory if it
  /// is still the file `opened` describes; returns where it went ("" when it
  /// changed meanwhile, "(deleted)" when it could not be moved).
  std::string quarantine(const std::filesystem::path &path,
                         const struct stat &opened,
                         const std::string &hash) const;

  std::filesystem::path rootDir;
  mutable std::atomic<uint64_t> tempCounter{0};
  int64_t capacity = 0;
  std::unique_ptr<StoreIndex> blobIndex;
  std::unique_ptr<TransitBlobs> transit;
};

} // namespace kiln::server
