//===- ContentStoreTransit.cpp - the store's in-memory transit tier -------===//
//
// This file implements the ContentStore side of TransitBlobs: in-transit
// uploads and output files held as sealed memfds, read back without disk,
// and spilled to disk when memory needs the room and nobody has read them.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ContentStore.h"

#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <utility>

namespace kiln::server {
namespace {

/// Chunks handed to a reader's sink, as disk reads hand them.
constexpr size_t kChunkBytes = size_t{1} << 20;

/// A read-only mapping of `size` bytes of `fd`, unmapped on destruction.
class Mapping {
public:
  static absl::StatusOr<Mapping> of(int fd, int64_t size) {
    void *at = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ,
                      MAP_SHARED, fd, 0);
    if (at == MAP_FAILED)
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot map a blob of ", size, " bytes: ", std::strerror(errno)));
    return Mapping(static_cast<const char *>(at), static_cast<size_t>(size));
  }
  Mapping(Mapping &&other) noexcept
      : data(std::exchange(other.data, nullptr)), size(other.size) {}
  Mapping &operator=(Mapping &&) = delete;
  ~Mapping() {
    if (data)
      ::munmap(const_cast<char *>(data), size);
  }
  std::string_view bytes() const { return {data, size}; }

private:
  Mapping(const char *data, size_t size) : data(data), size(size) {}
  const char *data;
  size_t size;
};

} // namespace

absl::Status ContentStore::readTransit(const v1::Digest &digest,
                                       const ChunkSink *sink,
                                       std::string *bytes, bool check) const {
  if (!transit)
    return absl::NotFoundError("no transit tier");
  ASSIGN_OR_RETURN(UniqueFd file,
                   transit->open(digest.hash(), digest.size_bytes()));
  ASSIGN_OR_RETURN(Mapping mapping, Mapping::of(file.get(), digest.size_bytes()));
  std::string_view all = mapping.bytes();
  // Sealed since it was hashed on the way in: nothing can have changed it,
  // so only verify() hashes it again.
  if (check && sha256Hex(all) != digest.hash())
    return absl::DataLossError(absl::StrCat(
        "in-transit blob ", formatDigest(digest), " changed in memory"));
  if (bytes)
    bytes->assign(all);
  if (sink)
    for (size_t at = 0; at < all.size(); at += kChunkBytes)
      RETURN_IF_ERROR((*sink)(all.substr(at, std::min(kChunkBytes, all.size() - at))));
  return absl::OkStatus();
}

absl::StatusOr<v1::Digest> ContentStore::putTransitFile(int fd, int64_t size) {
  ASSIGN_OR_RETURN(Mapping mapping, Mapping::of(fd, size));
  v1::Digest digest = digestOf(mapping.bytes());
  // Held in memory already, it is published again below (it waits for its
  // readers anew); on disk only, it stays there.
  std::optional<TransitBlobs::Reservation> room =
      transit->reserve(digest.hash(), size);
  if (!room) {
    if (onDisk(digest)) {
      markUsed(digest);
      return digest;
    }
    RETURN_IF_ERROR(writeHashedFile(digest, fd, Durability::kInTransit));
    return digest;
  }
  // The sender's file itself, kept (sealed: it cannot change): no copy.
  UniqueFd kept(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!kept.valid())
    return absl::ResourceExhaustedError(
        absl::StrCat("dup of an output file: ", std::strerror(errno)));
  RETURN_IF_ERROR(publishTransit(digest, std::move(kept), *std::move(room)));
  return digest;
}

absl::Status ContentStore::publishTransit(const v1::Digest &digest, UniqueFd file,
                                          TransitBlobs::Reservation room) {
  if (transit->add(digest.hash(), digest.size_bytes(), std::move(file), std::move(room)))
    return absl::OkStatus();
  // Gone from memory meanwhile, with no room of its own: to disk.
  return writeHashedFile(digest, file.get(), Durability::kInTransit);
}

absl::Status ContentStore::writeHashedFile(const v1::Digest &digest, int fd,
                                           Durability durability) {
  ASSIGN_OR_RETURN(Mapping mapping, Mapping::of(fd, digest.size_bytes()));
  return writeHashed(digest, mapping.bytes(), durability);
}

bool ContentStore::spillTransit(const std::string &hash, int64_t size, int fd) {
  v1::Digest digest;
  digest.set_hash(hash);
  digest.set_size_bytes(size);
  if (onDisk(digest))
    return true;
  absl::Status written = writeHashedFile(digest, fd, Durability::kInTransit);
  if (!written.ok())
    spdlog::warn("content store: cannot spill in-transit blob {} to disk ({}); it stays in memory",
                 formatDigest(digest), std::string(written.message()));
  return written.ok();
}

void ContentStore::handOut(const v1::Digest &digest) {
  if (transit)
    transit->handOut(digest.hash());
}

void ContentStore::readOut(const v1::Digest &digest) {
  if (transit)
    transit->readOut(digest.hash());
}

void ContentStore::consumed(const v1::Digest &digest) {
  if (transit)
    transit->consumed(digest.hash());
}

bool ContentStore::keep(const v1::Digest &digest) {
  if (!validateDigest(digest).ok())
    return false;
  if (onDisk(digest))
    return true;
  if (!transit)
    return false;
  absl::StatusOr<UniqueFd> file = transit->open(digest.hash(), digest.size_bytes());
  if (!file.ok())
    return false;
  absl::Status written = writeHashedFile(digest, file->get(), Durability::kDurable);
  if (!written.ok())
    spdlog::warn("content store: cannot write blob {}, held in memory, to disk ({})",
                 formatDigest(digest), std::string(written.message()));
  return written.ok();
}

TransitBlobs::Stats ContentStore::transitStats() const {
  return transit ? transit->stats() : TransitBlobs::Stats{};
}

} // namespace kiln::server
