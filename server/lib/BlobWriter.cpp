//===- BlobWriter.cpp - streaming writes into the content store -----------===//
//
// This file implements BlobWriter: incremental hashing into a temporary file,
// verified and renamed into place on commit.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/BlobWriter.h"

#include "kiln/server/AtomicFile.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace kiln::server {

BlobWriter::BlobWriter(v1::Digest expected, std::filesystem::path finalPath,
                       std::filesystem::path tempPath, int fd)
    : expected(std::move(expected)), finalPath(std::move(finalPath)),
      tempPath(std::move(tempPath)), fd(fd) {}

BlobWriter::~BlobWriter() {
  if (!done)
    discard();
}

void BlobWriter::discard() {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
  ::unlink(tempPath.c_str());
  done = true;
}

absl::Status BlobWriter::append(std::string_view bytes) {
  if (done)
    return absl::FailedPreconditionError("blob write already finished");
  if (written + static_cast<int64_t>(bytes.size()) > expected.size_bytes()) {
    absl::Status status = absl::InvalidArgumentError(absl::StrCat(
        "blob ", formatDigest(expected), " receives more than its declared ",
        expected.size_bytes(), " bytes"));
    discard();
    return status;
  }
  sha.update(bytes);
  absl::Status status = writeAll(fd, bytes, tempPath);
  if (!status.ok()) {
    discard();
    return status;
  }
  written += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status BlobWriter::commit() {
  if (done)
    return absl::FailedPreconditionError("blob write already finished");
  if (written != expected.size_bytes()) {
    discard();
    return absl::InvalidArgumentError(
        absl::StrCat("blob ", formatDigest(expected), " size mismatch: got ",
                     written, " bytes"));
  }
  std::string hash = sha.finishHex();
  if (hash != expected.hash()) {
    discard();
    return absl::InvalidArgumentError(
        absl::StrCat("blob ", formatDigest(expected),
                     " digest mismatch: the bytes hash to ", hash));
  }
  if (::fsync(fd) != 0) {
    absl::Status status = absl::InternalError(absl::StrCat(
        "cannot fsync ", tempPath.string(), ": ", std::strerror(errno)));
    discard();
    return status;
  }
  ::close(fd);
  fd = -1;
  if (::rename(tempPath.c_str(), finalPath.c_str()) != 0) {
    absl::Status status = absl::InternalError(absl::StrCat(
        "cannot rename onto ", finalPath.string(), ": ", std::strerror(errno)));
    discard();
    return status;
  }
  done = true;
  syncParentDirectory(finalPath);
  if (onCommit)
    onCommit();
  return absl::OkStatus();
}

} // namespace kiln::server
