//===- ContentStore.cpp - content-addressed blob store on disk ------------===//
//
// This file implements ContentStore: sharded blob files, verified reads that
// move corrupt files aside, and atomic writes through BlobWriter. The memory
// tier's side is ContentStoreTransit.cpp.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ContentStore.h"

#include "kiln/common/SealedFile.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::server {

ContentStore::ContentStore(std::filesystem::path root, int64_t capacityBytes,
                           int64_t transitBytes)
    : rootDir(std::move(root)), capacity(capacityBytes),
      blobIndex(std::make_unique<StoreIndex>()) {
  if (transitBytes > 0)
    transit = std::make_unique<TransitBlobs>(
        transitBytes, *blobIndex,
        [this](const std::string &hash, int64_t size, int fd) { return spillTransit(hash, size, fd); });
}

absl::StatusOr<std::unique_ptr<ContentStore>>
ContentStore::open(const std::filesystem::path &root, int64_t capacityBytes,
                   int64_t transitBytes) {
  std::error_code error;
  std::filesystem::create_directories(root, error);
  if (error)
    return absl::InternalError(absl::StrCat(
        "cannot create content store ", root.string(), ": ", error.message()));
  auto store = std::unique_ptr<ContentStore>(
      new ContentStore(root, capacityBytes, transitBytes));
  store->scan();
  return store;
}

std::filesystem::path ContentStore::blobPath(const std::string &hash) const {
  return rootDir / hash.substr(0, 2) / hash;
}

absl::StatusOr<std::unique_ptr<BlobWriter>>
ContentStore::beginWrite(const v1::Digest &digest, Durability durability) {
  RETURN_IF_ERROR(validateDigest(digest));
  // In memory when its room can be had now (counted while it arrives);
  // else on disk, unsynced.
  if (durability == Durability::kInTransit && transit)
    if (std::optional<TransitBlobs::Reservation> room =
            transit->reserve(digest.hash(), digest.size_bytes())) {
      ASSIGN_OR_RETURN(std::unique_ptr<TransitDraft> draft,
                       TransitDraft::create(digest));
      auto held = std::make_shared<TransitBlobs::Reservation>(*std::move(room));
      return std::make_unique<BlobWriter>(
          digest, std::move(draft),
          [this, held](const v1::Digest &verified,
                       UniqueFd file) -> absl::StatusOr<bool> {
            bool before = contains(verified);
            RETURN_IF_ERROR(
                publishTransit(verified, std::move(file), std::move(*held)));
            return before;
          });
    }
  std::filesystem::path finalPath = blobPath(digest.hash());
  RETURN_IF_ERROR(createParentDirectory(finalPath));
  ASSIGN_OR_RETURN(std::unique_ptr<VerifiedFileWriter> file,
                   VerifiedFileWriter::create(digest, finalPath));
  auto writer =
      std::make_unique<BlobWriter>(digest, std::move(file), durability);
  writer->setOnCommit([this, digest] { committed(digest); });
  return writer;
}

absl::StatusOr<std::unique_ptr<BlobWriter>>
ContentStore::beginNamingWrite(int64_t size) {
  if (size < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("an upload of ", size, " bytes (a negative size)"));
  // No blob is held under the empty name: the room is made for this one.
  std::optional<TransitBlobs::Reservation> room =
      size > 0 && transit ? transit->reserve(std::string(), size)
                          : std::nullopt;
  if (size > 0 && !room) {
    int64_t budget = transit ? transit->budgetBytes() : 0;
    return absl::FailedPreconditionError(absl::StrCat(
        "kilnd names only in-transit uploads it can hold in memory, and ",
        size > budget ? absl::StrCat(size, " bytes are more than it holds")
                      : absl::StrCat("it has no room for ", size, " bytes now"),
        " (--transit-memory-bytes ", budget, "); upload the blob by its digest"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<TransitDraft> draft,
                   TransitDraft::create(DigestVerifier::Unnamed{size}));
  auto held = std::make_shared<std::optional<TransitBlobs::Reservation>>(
      std::move(room));
  v1::Digest unnamed;
  unnamed.set_size_bytes(size);
  return std::make_unique<BlobWriter>(
      std::move(unnamed), std::move(draft),
      [this, held](const v1::Digest &digest,
                   UniqueFd file) -> absl::StatusOr<bool> {
        // The room was made before the hash was known: for a blob held
        // already it was made for nothing (LRU blobs may have left).
        bool before = contains(digest);
        if (!*held) // empty: stored as any empty blob
          RETURN_IF_ERROR(put(std::string_view(), Durability::kInTransit).status());
        else
          RETURN_IF_ERROR(publishTransit(digest, std::move(file), std::move(**held)));
        return before;
      });
}

absl::Status ContentStore::write(const v1::Digest &digest,
                                 std::string_view bytes) {
  ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer, beginWrite(digest));
  RETURN_IF_ERROR(writer->append(bytes));
  return writer->commit();
}

absl::StatusOr<v1::Digest> ContentStore::put(std::string_view bytes,
                                              Durability durability) {
  // Hashed once, here: the digest is of these very bytes, so the write needs
  // no verifying writer, and a blob already held is not written again.
  v1::Digest digest = digestOf(bytes);
  // A durable blob held only in memory (in transit) is written all the same.
  if (durability == Durability::kDurable ? onDisk(digest) : contains(digest)) {
    touch(digest.hash());
    return digest;
  }
  RETURN_IF_ERROR(writeHashed(digest, bytes, durability));
  return digest;
}

absl::Status ContentStore::writeHashed(const v1::Digest &digest,
                                       std::string_view bytes,
                                       Durability durability) {
  std::filesystem::path path = blobPath(digest.hash());
  RETURN_IF_ERROR(createParentDirectory(path));
  RETURN_IF_ERROR(writeFileAtomically(path, bytes, durability));
  committed(digest);
  return absl::OkStatus();
}

absl::Status ContentStore::readVerified(const v1::Digest &digest,
                                        const ChunkSink *sink,
                                        std::string *bytes) const {
  RETURN_IF_ERROR(validateDigest(digest));
  if (absl::Status held = readTransit(digest, sink, bytes, /*check=*/false);
      !absl::IsNotFound(held))
    return held;
  std::filesystem::path path = blobPath(digest.hash());
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return absl::NotFoundError(
          absl::StrCat("blob ", formatDigest(digest), " is not in the store"));
    return absl::InternalError(absl::StrCat("cannot open ", path.string(),
                                            ": ", std::strerror(errno)));
  }
  struct stat opened {};
  ::fstat(fd, &opened);
  // A file of another size is never streamed: it is hashed first, to tell a
  // wrong request (INVALID_ARGUMENT) from a damaged file (DATA_LOSS).
  if (sink && static_cast<int64_t>(opened.st_size) != digest.size_bytes())
    sink = nullptr;
  Sha256 sha;
  int64_t total = 0;
  if (bytes && opened.st_size > 0)
    bytes->reserve(static_cast<size_t>(opened.st_size));
  absl::Status ioStatus =
      readDescriptorInChunks(fd, path, [&](std::string_view chunk) {
        sha.update(chunk);
        if (bytes)
          bytes->append(chunk);
        total += static_cast<int64_t>(chunk.size());
        return sink ? (*sink)(chunk) : absl::OkStatus();
      });
  ::close(fd);
  RETURN_IF_ERROR(ioStatus);
  std::string hash = sha.finishHex();
  if (hash == digest.hash() && total == digest.size_bytes()) {
    touch(digest.hash());
    return absl::OkStatus();
  }
  if (bytes)
    bytes->clear();
  if (hash == digest.hash())
    // Intact content under a request's wrong size: the request is wrong, and
    // the blob (someone's executable or weights) stays.
    return absl::InvalidArgumentError(absl::StrCat(
        "digest ", formatDigest(digest), " names blob ", hash, " with size ",
        digest.size_bytes(), ", but that blob has ", total,
        " bytes: fix size_bytes"));
  // Corrupt: move it aside (for inspection) so a re-upload can repair the
  // store, but only if the file is still the one we read (a writer may have
  // just replaced it).
  blobIndex->remove(digest.hash());
  std::string movedTo = quarantine(path, opened, digest.hash());
  spdlog::error("content store: blob {} is corrupt ({} bytes hashing to {}); {}",
                formatDigest(digest), total, hash,
                movedTo.empty() ? std::string("left in place (it changed)")
                                : absl::StrCat("moved it to ", movedTo));
  return absl::DataLossError(absl::StrCat(
      "blob ", formatDigest(digest), " is corrupt in the store (", total,
      " bytes hashing to ", hash, "); it was moved aside for inspection, ",
      "upload it again"));
}

std::string ContentStore::quarantine(const std::filesystem::path &path,
                                     const struct stat &opened,
                                     const std::string &hash) const {
  struct stat current {};
  if (::stat(path.c_str(), &current) != 0 || current.st_ino != opened.st_ino ||
      current.st_dev != opened.st_dev)
    return "";
  std::filesystem::path dir = rootDir / kQuarantineDir;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  // <hash>.corrupt-<ns>: never a blob name, so scans skip it.
  std::filesystem::path target =
      dir / absl::StrCat(hash, ".corrupt-",
                         std::chrono::system_clock::now()
                             .time_since_epoch()
                             .count());
  if (!error && ::rename(path.c_str(), target.c_str()) == 0)
    return target.string();
  spdlog::warn("content store: cannot move {} to {} ({}); deleting it",
               path.string(), target.string(),
               error ? error.message() : std::strerror(errno));
  ::unlink(path.c_str());
  return "(deleted)";
}

absl::StatusOr<std::string> ContentStore::read(const v1::Digest &digest) const {
  std::string bytes;
  RETURN_IF_ERROR(readVerified(digest, nullptr, &bytes));
  return bytes;
}

absl::Status ContentStore::stream(const v1::Digest &digest,
                                  const ChunkSink &sink) const {
  return readVerified(digest, &sink, nullptr);
}

absl::StatusOr<v1::Digest> ContentStore::putFile(int fd, int64_t size,
                                                  Durability durability) {
  // Sealed, so that its sender can neither change the bytes between the
  // hash and the write nor shrink the file under the mapping (SIGBUS).
  RETURN_IF_ERROR(checkSealedTensorFile(fd, size));
  if (size == 0)
    return put(std::string_view(), durability);
  if (durability == Durability::kInTransit && transit && transit->fits(size))
    return putTransitFile(fd, size);
  void *mapped = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ,
                        MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot map a file of ", size, " bytes: ", std::strerror(errno)));
  absl::StatusOr<v1::Digest> digest =
      put(std::string_view(static_cast<const char *>(mapped),
                           static_cast<size_t>(size)),
          durability);
  ::munmap(mapped, static_cast<size_t>(size));
  return digest;
}

absl::StatusOr<UniqueFd> ContentStore::openBlob(const v1::Digest &digest) const {
  RETURN_IF_ERROR(validateDigest(digest));
  if (transit)
    if (absl::StatusOr<UniqueFd> held =
            transit->open(digest.hash(), digest.size_bytes());
        held.ok())
      return held;
  UniqueFd fd(::open(blobPath(digest.hash()).c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd.valid() || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      info.st_size != digest.size_bytes())
    return absl::NotFoundError(
        absl::StrCat("blob ", formatDigest(digest), " is not in the store"));
  touch(digest.hash());
  return fd;
}

absl::Status ContentStore::verify(const v1::Digest &digest) const {
  RETURN_IF_ERROR(validateDigest(digest));
  if (absl::Status held = readTransit(digest, nullptr, nullptr, /*check=*/true);
      !absl::IsNotFound(held))
    return held;
  return readVerified(digest, nullptr, nullptr);
}

bool ContentStore::contains(const v1::Digest &digest) const {
  if (!validateDigest(digest).ok())
    return false;
  return (transit && transit->holds(digest.hash(), digest.size_bytes())) || onDisk(digest);
}

bool ContentStore::onDisk(const v1::Digest &digest) const {
  struct stat info {};
  if (::stat(blobPath(digest.hash()).c_str(), &info) != 0)
    return false;
  return S_ISREG(info.st_mode) &&
         static_cast<int64_t>(info.st_size) == digest.size_bytes();
}

bool ContentStore::indexed(const v1::Digest &digest) const {
  return validateDigest(digest).ok() &&
         blobIndex->holds(digest.hash(), digest.size_bytes());
}

std::vector<v1::Digest>
ContentStore::findMissing(const std::vector<v1::Digest> &digests) const {
  std::vector<v1::Digest> missing;
  absl::flat_hash_set<std::string> seen;
  for (const v1::Digest &digest : digests) {
    if (!seen.insert(formatDigest(digest)).second)
      continue;
    if (!contains(digest))
      missing.push_back(digest);
  }
  return missing;
}

} // namespace kiln::server
