//===- BlobCache.cpp - the agent's local content-addressed blob cache -----===//
//
// This file implements BlobCache: blobs written through VerifiedFileWriter
// (atomic, checked against their digest), SHA-256 verification on read, and
// fetching misses.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/BlobCache.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"
#include "kiln/common/VerifiedFileWriter.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <utility>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kiln::agent {
namespace {

/// Copies chunks into a preallocated buffer while hashing them.
class VerifyingSink {
public:
  VerifyingSink(const v1::Digest &digest, uint8_t *out)
      : verifier(digest), out(out) {}

  absl::Status operator()(std::string_view chunk) {
    int64_t offset = verifier.bytesSeen();
    RETURN_IF_ERROR(verifier.update(chunk));
    if (out && !chunk.empty())
      std::memcpy(out + offset, chunk.data(), chunk.size());
    return absl::OkStatus();
  }

  absl::Status finish() { return verifier.finish(); }

private:
  DigestVerifier verifier;
  uint8_t *out;
};

/// Reads the cached blob at `path` (into `out` when non-null) and checks it
/// against `digest`; a corrupt file is removed, so the next fetch replaces it.
absl::Status readVerified(const fs::path &path, const v1::Digest &digest,
                          uint8_t *out) {
  VerifyingSink verifier(digest, out);
  absl::Status status = readFileInChunks(path, std::ref(verifier));
  if (status.ok())
    status = verifier.finish();
  if (absl::IsDataLoss(status)) {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
  return status;
}

} // namespace

absl::StatusOr<std::unique_ptr<BlobCache>>
BlobCache::open(const fs::path &dir) {
  if (dir.empty())
    return absl::InvalidArgumentError("the blob cache directory is empty");
  std::error_code error;
  for (const fs::path &sub : {dir / "sha256", dir / "tmp"}) {
    fs::create_directories(sub, error);
    if (error)
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create cache directory '", sub.string(),
                       "': ", error.message()));
  }
  return std::unique_ptr<BlobCache>(new BlobCache(fs::absolute(dir)));
}

fs::path BlobCache::pathFor(const v1::Digest &digest) const {
  const std::string &hash = digest.hash();
  return root / "sha256" / hash.substr(0, 2) / hash;
}

absl::StatusOr<std::unique_ptr<VerifiedFileWriter>>
BlobCache::startWrite(const v1::Digest &digest) {
  RETURN_IF_ERROR(validateDigest(digest));
  fs::path finalPath = pathFor(digest);
  RETURN_IF_ERROR(createParentDirectory(finalPath));
  return VerifiedFileWriter::create(
      digest, finalPath,
      root / "tmp" /
          absl::StrCat(digest.hash(), ".", ::getpid(), ".",
                       tempCounter.fetch_add(1)));
}

absl::Status BlobCache::put(const v1::Digest &digest, std::string_view bytes) {
  ASSIGN_OR_RETURN(std::unique_ptr<VerifiedFileWriter> writer,
                   startWrite(digest));
  absl::Status status = writer->append(bytes);
  if (status.ok())
    status = writer->commit();
  // The caller handed us bytes that are not the blob: its error.
  if (absl::IsDataLoss(status))
    return absl::InvalidArgumentError(status.message());
  return status;
}

absl::Status BlobCache::fetch(const v1::Digest &digest, DaemonBlobs &source) {
  ASSIGN_OR_RETURN(std::unique_ptr<VerifiedFileWriter> writer,
                   startWrite(digest));
  RETURN_IF_ERROR(source.read(
      digest, [&](std::string_view chunk) { return writer->append(chunk); }));
  return writer->commit();
}

absl::Status BlobCache::verifyLocal(const v1::Digest &digest) {
  RETURN_IF_ERROR(validateDigest(digest));
  return readVerified(pathFor(digest), digest, nullptr);
}

absl::StatusOr<AlignedBuffer> BlobCache::read(const v1::Digest &digest,
                                              DaemonBlobs &source) {
  absl::StatusOr<AlignedBuffer> local = readLocal(digest);
  if (local.ok() ||
      (!absl::IsNotFound(local.status()) && !absl::IsDataLoss(local.status())))
    return local;
  RETURN_IF_ERROR(ensure(digest, source).status());
  return readLocal(digest);
}

absl::StatusOr<AlignedBuffer> BlobCache::readLocal(const v1::Digest &digest) {
  RETURN_IF_ERROR(validateDigest(digest));
  ASSIGN_OR_RETURN(AlignedBuffer buffer,
                   AlignedBuffer::allocate(digest.size_bytes()));
  RETURN_IF_ERROR(readVerified(pathFor(digest), digest, buffer.data()));
  return buffer;
}

absl::StatusOr<fs::path> BlobCache::ensure(const v1::Digest &digest,
                                           DaemonBlobs &source, bool *fetched) {
  if (fetched)
    *fetched = false;
  absl::Status local = verifyLocal(digest);
  if (local.ok())
    return pathFor(digest);
  if (!absl::IsNotFound(local) && !absl::IsDataLoss(local))
    return local;
  if (fetched)
    *fetched = true;
  RETURN_IF_ERROR(fetch(digest, source));
  return pathFor(digest);
}

absl::StatusOr<AlignedBuffer> fetchToMemory(const v1::Digest &digest,
                                            DaemonBlobs &source) {
  RETURN_IF_ERROR(validateDigest(digest));
  ASSIGN_OR_RETURN(AlignedBuffer buffer,
                   AlignedBuffer::allocate(digest.size_bytes()));
  VerifyingSink verifier(digest, buffer.data());
  RETURN_IF_ERROR(source.read(digest, std::ref(verifier)));
  RETURN_IF_ERROR(verifier.finish());
  return buffer;
}

} // namespace kiln::agent
