//===- BlobWriter.h - streaming writes into the content store ---*- C++ -*-===//
//
// This file declares BlobWriter, which receives one blob in chunks, hashes it
// as it goes and makes it visible in the store only once it is verified.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/UniqueFd.h"
#include "kiln/common/VerifiedFileWriter.h"
#include "kiln/server/store/TransitBlobs.h"
#include "kiln/v1/tensor.pb.h"

#include "absl/status/status.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

namespace kiln::server {

/// Writes one blob: append() chunks in order, then commit(). The bytes go to
/// a temporary file beside the final path; commit() checks size and SHA-256
/// against the expected digest, fsyncs (unless the blob is in transit) and
/// renames. A writer destroyed
/// without a successful commit() removes its temporary file, so a blob is
/// either complete in the store or absent. An in-transit blob the store
/// holds in memory goes to a TransitDraft instead, and commit() hands the
/// sealed file and its digest to `publish`; an upload kilnd names (a draft
/// without a hash) gets its digest then.
class BlobWriter {
public:
  /// Publishes the sealed file as the blob `digest`; true when the store
  /// held that blob already (its uploader then added nothing).
  using Publish =
      std::function<absl::StatusOr<bool>(const v1::Digest &, UniqueFd)>;

  /// Use ContentStore::beginWrite() rather than constructing directly.
  BlobWriter(v1::Digest expected, std::unique_ptr<VerifiedFileWriter> file,
             Durability durability = Durability::kDurable);
  BlobWriter(v1::Digest expected, std::unique_ptr<TransitDraft> draft,
             Publish publish);
  BlobWriter(const BlobWriter &) = delete;
  BlobWriter &operator=(const BlobWriter &) = delete;

  /// Appends the next chunk. INVALID_ARGUMENT once more bytes arrive than the
  /// expected digest's size; INTERNAL on I/O failure.
  absl::Status append(std::string_view bytes);

  /// Verifies and publishes the blob. INVALID_ARGUMENT on a size or hash
  /// mismatch (the temporary file is removed).
  absl::Status commit();

  /// Bytes appended so far.
  int64_t bytesWritten() const {
    return file ? file->bytesSeen() : draft->bytesSeen();
  }

  /// The digest this writer expects; for an upload kilnd names, the hash is
  /// set once commit() succeeded.
  const v1::Digest &digest() const { return expected; }

  /// After a commit to the memory tier: whether the store held the blob
  /// already (for one kilnd names, known only then).
  bool alreadyStored() const { return heldBefore; }

  /// Runs `hook` after a successful commit (the store indexes the new blob).
  void setOnCommit(std::function<void()> hook) { onCommit = std::move(hook); }

private:
  v1::Digest expected;
  std::unique_ptr<VerifiedFileWriter> file;
  std::unique_ptr<TransitDraft> draft;
  Publish publish;
  Durability durability = Durability::kInTransit;
  bool done = false;
  bool heldBefore = false;
  std::function<void()> onCommit;
};

} // namespace kiln::server
