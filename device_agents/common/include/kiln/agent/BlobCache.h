//===- BlobCache.h - the agent's local content-addressed blob cache -------===//
//
// This file declares BlobCache: blobs (artifacts, weights) kept on local disk
// under their SHA-256, written atomically and verified on every read, with
// misses fetched from the daemon.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AlignedBuffer.h"
#include "kiln/agent/DaemonBlobs.h"

#include "kiln/v1/tensor.pb.h"

#include "absl/status/statusor.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <string_view>

namespace kiln {
class VerifiedFileWriter;
} // namespace kiln

namespace kiln::agent {

/// A directory of blobs laid out like a CAS:
///   <dir>/sha256/<first two hex chars>/<hash>   complete, verified blobs
///   <dir>/tmp/                                  writes in progress
/// A blob is complete or absent: it is written to tmp/, fsynced, renamed.
/// Safe to use from several threads (and several processes sharing a dir).
class BlobCache {
public:
  /// Creates the directory layout under `dir` if needed.
  static absl::StatusOr<std::unique_ptr<BlobCache>>
  open(const std::filesystem::path &dir);

  const std::filesystem::path &directory() const { return root; }

  /// Where the blob `digest` lives (or would live).
  std::filesystem::path pathFor(const v1::Digest &digest) const;

  /// Stores `bytes` as `digest`; INVALID_ARGUMENT when they do not match.
  absl::Status put(const v1::Digest &digest, std::string_view bytes);

  /// The path of a verified local copy of `digest`, fetching it from
  /// `source` when it is absent or corrupt. `fetched`, when given, is set to
  /// whether bytes had to be fetched.
  absl::StatusOr<std::filesystem::path>
  ensure(const v1::Digest &digest, DaemonBlobs &source,
         bool *fetched = nullptr);

  /// Reads the local copy of `digest` into an aligned buffer, verifying it.
  /// NOT_FOUND when absent; DATA_LOSS (and the file is removed) when corrupt.
  absl::StatusOr<AlignedBuffer> readLocal(const v1::Digest &digest);

  /// Reads `digest` into an aligned buffer, verified: the local copy, or,
  /// when it is absent or corrupt, one fetched from `source` first.
  absl::StatusOr<AlignedBuffer> read(const v1::Digest &digest,
                                     DaemonBlobs &source);

  /// OK when the local file of `digest` has its size and SHA-256; NOT_FOUND
  /// when absent; DATA_LOSS (and the file is removed) when corrupt.
  absl::Status verifyLocal(const v1::Digest &digest);

private:
  explicit BlobCache(std::filesystem::path root) : root(std::move(root)) {}

  /// Streams `source`'s bytes of `digest` into the cache.
  absl::Status fetch(const v1::Digest &digest, DaemonBlobs &source);
  /// A writer publishing the blob `digest` at its cache path.
  absl::StatusOr<std::unique_ptr<VerifiedFileWriter>>
  startWrite(const v1::Digest &digest);

  std::filesystem::path root;
  std::atomic<uint64_t> tempCounter{0};
};

/// Fetches `digest` from `source` straight into memory, verifying size and
/// SHA-256 (for one-off blobs such as large inputs, which are not cached).
absl::StatusOr<AlignedBuffer> fetchToMemory(const v1::Digest &digest,
                                            DaemonBlobs &source);

} // namespace kiln::agent
