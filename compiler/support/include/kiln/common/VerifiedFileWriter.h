//===- VerifiedFileWriter.h - write a blob, publish it if it matches -*- C++ -*-===//
//
// This file declares VerifiedFileWriter: the bytes of a blob stream into an
// AtomicFileWriter while a DigestVerifier checks them; the file is published
// only when size and SHA-256 match. The daemon's store and the agents' blob
// caches both write blobs this way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Digest.h"

#include "absl/status/statusor.h"

#include <filesystem>
#include <memory>

namespace kiln {

class VerifiedFileWriter {
public:
  /// Starts writing the blob `digest` to `finalPath` (through `tempPath`, or
  /// a temporary name beside it).
  static absl::StatusOr<std::unique_ptr<VerifiedFileWriter>>
  create(v1::Digest digest, std::filesystem::path finalPath,
         std::filesystem::path tempPath = {});

  /// DATA_LOSS once more bytes than the digest's size arrive (the file is
  /// then discarded); I/O errors as AtomicFileWriter reports them.
  absl::Status append(std::string_view bytes);
  /// DATA_LOSS on a size or hash mismatch (nothing is published).
  absl::Status commit(Durability durability = Durability::kDurable);
  void discard() { file->discard(); }

  int64_t bytesSeen() const { return verifier.bytesSeen(); }

private:
  VerifiedFileWriter(v1::Digest digest, std::unique_ptr<AtomicFileWriter> file)
      : file(std::move(file)), verifier(std::move(digest)) {}

  std::unique_ptr<AtomicFileWriter> file;
  DigestVerifier verifier;
};

} // namespace kiln
