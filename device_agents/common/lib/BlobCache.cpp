//===- BlobCache.cpp - the agent's local content-addressed blob cache -----===//
//
// This file implements BlobCache: atomic writes (temp file, fsync, rename,
// fsync of the directory), SHA-256 verification on read, and fetching misses.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/BlobCache.h"

#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

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

absl::Status errnoError(absl::string_view what, const fs::path &path) {
  int error = errno;
  std::string message =
      absl::StrCat(what, " '", path.string(), "': ", std::strerror(error));
  if (error == ENOSPC || error == EDQUOT)
    return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

/// A file descriptor closed on scope exit.
class Fd {
public:
  explicit Fd(int fd) : fd(fd) {}
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  int get() const { return fd; }
  int release() { return std::exchange(fd, -1); }
  void reset(int newFd) {
    if (fd >= 0)
      ::close(fd);
    fd = newFd;
  }

private:
  int fd;
};

absl::Status writeAll(int fd, std::string_view bytes, const fs::path &path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errnoError("cannot write", path);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status fsyncDirectory(const fs::path &dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || ::fsync(fd.get()) != 0)
    return errnoError("cannot fsync directory", dir);
  return absl::OkStatus();
}

/// A blob being written into <root>/tmp, hashed as it goes; commit() checks
/// it against the digest and renames it into place. Removed unless committed.
class PendingBlob {
public:
  PendingBlob(fs::path tempPath, const v1::Digest &digest)
      : tempPath(std::move(tempPath)), verifier(digest) {}
  ~PendingBlob() {
    if (!committed) {
      std::error_code ignored;
      fs::remove(tempPath, ignored);
    }
  }

  absl::Status create() {
    fd.reset(::open(tempPath.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() < 0)
      return errnoError("cannot create", tempPath);
    return absl::OkStatus();
  }

  absl::Status append(std::string_view chunk) {
    RETURN_IF_ERROR(verifier.update(chunk));
    return writeAll(fd.get(), chunk, tempPath);
  }

  absl::Status commit(const fs::path &finalPath) {
    RETURN_IF_ERROR(verifier.finish());
    if (::fsync(fd.get()) != 0)
      return errnoError("cannot fsync", tempPath);
    if (::close(fd.release()) != 0)
      return errnoError("cannot close", tempPath);
    std::error_code error;
    fs::rename(tempPath, finalPath, error);
    if (error)
      return absl::InternalError(absl::StrCat("cannot rename '",
                                              tempPath.string(), "' to '",
                                              finalPath.string(),
                                              "': ", error.message()));
    committed = true;
    return fsyncDirectory(finalPath.parent_path());
  }

private:
  fs::path tempPath;
  DigestVerifier verifier;
  Fd fd{-1};
  bool committed = false;
};

/// Reads the file at `path` in chunks, handing each to `sink`.
absl::Status readFile(const fs::path &path, const ChunkSink &sink) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT)
      return absl::NotFoundError(
          absl::StrCat("'", path.string(), "' is not in the cache"));
    return errnoError("cannot open", path);
  }
  std::string chunk(1 << 20, '\0');
  while (true) {
    ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errnoError("cannot read", path);
    if (n == 0)
      return absl::OkStatus();
    RETURN_IF_ERROR(sink(std::string_view(chunk.data(), n)));
  }
}

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
  absl::Status status = readFile(path, std::ref(verifier));
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

absl::Status BlobCache::put(const v1::Digest &digest, std::string_view bytes) {
  RETURN_IF_ERROR(validateDigest(digest));
  fs::path finalPath = pathFor(digest);
  std::error_code error;
  fs::create_directories(finalPath.parent_path(), error);
  PendingBlob pending(root / "tmp" /
                          absl::StrCat(digest.hash(), ".", ::getpid(), ".",
                                       tempCounter.fetch_add(1)),
                      digest);
  RETURN_IF_ERROR(pending.create());
  absl::Status status = pending.append(bytes);
  if (status.ok())
    status = pending.commit(finalPath);
  if (absl::IsDataLoss(status))
    return absl::InvalidArgumentError(status.message());
  return status;
}

absl::Status BlobCache::fetch(const v1::Digest &digest, BlobService &source) {
  fs::path finalPath = pathFor(digest);
  std::error_code error;
  fs::create_directories(finalPath.parent_path(), error);
  if (error)
    return absl::InternalError(absl::StrCat("cannot create '",
                                            finalPath.parent_path().string(),
                                            "': ", error.message()));
  PendingBlob pending(root / "tmp" /
                          absl::StrCat(digest.hash(), ".", ::getpid(), ".",
                                       tempCounter.fetch_add(1)),
                      digest);
  RETURN_IF_ERROR(pending.create());
  RETURN_IF_ERROR(source.read(
      digest, [&](std::string_view chunk) { return pending.append(chunk); }));
  return pending.commit(finalPath);
}

absl::Status BlobCache::verifyLocal(const v1::Digest &digest) {
  RETURN_IF_ERROR(validateDigest(digest));
  return readVerified(pathFor(digest), digest, nullptr);
}

absl::StatusOr<AlignedBuffer> BlobCache::readLocal(const v1::Digest &digest) {
  RETURN_IF_ERROR(validateDigest(digest));
  ASSIGN_OR_RETURN(AlignedBuffer buffer,
                   AlignedBuffer::allocate(digest.size_bytes()));
  RETURN_IF_ERROR(readVerified(pathFor(digest), digest, buffer.data()));
  return buffer;
}

absl::StatusOr<fs::path> BlobCache::ensure(const v1::Digest &digest,
                                           BlobService &source, bool *fetched) {
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
                                            BlobService &source) {
  RETURN_IF_ERROR(validateDigest(digest));
  ASSIGN_OR_RETURN(AlignedBuffer buffer,
                   AlignedBuffer::allocate(digest.size_bytes()));
  VerifyingSink verifier(digest, buffer.data());
  RETURN_IF_ERROR(source.read(digest, std::ref(verifier)));
  RETURN_IF_ERROR(verifier.finish());
  return buffer;
}

} // namespace kiln::agent
