//===- TransitBlobs.cpp - in-transit blobs held in memory -----------------===//
//
// This file implements TransitDraft (an upload into a memfd, verified, then
// sealed) and TransitBlobs (the budgeted table of sealed blobs, which drops
// blobs read out and spills unread ones to make room).
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/TransitBlobs.h"

#include "kiln/common/SealedFile.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::server {

absl::StatusOr<std::unique_ptr<TransitDraft>>
TransitDraft::create(v1::Digest digest) {
  UniqueFd file(::memfd_create("kiln-transit-blob", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!file.valid())
    return absl::ResourceExhaustedError(
        absl::StrCat("memfd_create: ", std::strerror(errno)));
  return std::unique_ptr<TransitDraft>(
      new TransitDraft(std::move(digest), std::move(file)));
}

absl::Status TransitDraft::append(std::string_view bytes) {
  int64_t offset = verifier.bytesSeen();
  RETURN_IF_ERROR(verifier.update(bytes));
  while (!bytes.empty()) {
    ssize_t wrote = ::pwrite(file.get(), bytes.data(), bytes.size(), offset);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0)
      return absl::ResourceExhaustedError(absl::StrCat(
          "writing an in-transit blob into memory: ", std::strerror(errno)));
    bytes.remove_prefix(static_cast<size_t>(wrote));
    offset += wrote;
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> TransitDraft::finish() {
  RETURN_IF_ERROR(verifier.finish());
  RETURN_IF_ERROR(sealTensorFile(file.get()));
  return std::move(file);
}

bool TransitBlobs::add(const std::string &hash, int64_t size, UniqueFd &&file) {
  if (!fits(size))
    return false;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = entries.find(hash); it != entries.end()) {
    requeue(hash, it->second);
    return it->second.size == size;
  }
  if (!makeRoom(size))
    return false;
  Entry &entry = entries[hash];
  entry.size = size;
  entry.file = std::move(file);
  requeue(hash, entry);
  totalBytes += size;
  return true;
}

void TransitBlobs::requeue(const std::string &hash, Entry &entry) const {
  if (entry.tick != 0) {
    readOutQueue.erase(entry.tick);
    usedQueue.erase(entry.tick);
  }
  entry.tick = nextTick++;
  (entry.readOut ? readOutQueue : usedQueue).emplace(entry.tick, hash);
}

bool TransitBlobs::makeRoom(int64_t size) {
  int64_t room = budget - totalBytes;
  if (room >= size)
    return true;
  // What could go, in order; nothing goes unless enough can.
  std::vector<std::string> victims;
  for (const auto *queue : {&readOutQueue, &usedQueue})
    for (const auto &[tick, hash] : *queue) {
      if (room >= size)
        break;
      if (pins.isPinned(hash))
        continue;
      victims.push_back(hash);
      room += entries.at(hash).size;
    }
  if (room < size)
    return false;
  for (const std::string &hash : victims) {
    auto it = entries.find(hash);
    Entry &entry = it->second;
    // Written to disk before it leaves memory: never in neither.
    if (!entry.readOut && !spill(hash, entry.size, entry.file.get()))
      return false;
    ++(entry.readOut ? dropped : spilled);
    readOutQueue.erase(entry.tick);
    usedQueue.erase(entry.tick);
    totalBytes -= entry.size;
    entries.erase(it);
  }
  return true;
}

bool TransitBlobs::holds(const std::string &hash, int64_t size) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(hash);
  return it != entries.end() && it->second.size == size;
}

absl::StatusOr<UniqueFd> TransitBlobs::open(const std::string &hash,
                                            int64_t size) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(hash);
  if (it == entries.end() || it->second.size != size)
    return absl::NotFoundError(absl::StrCat("blob ", hash, " is not in memory"));
  UniqueFd copy(::fcntl(it->second.file.get(), F_DUPFD_CLOEXEC, 0));
  if (!copy.valid())
    return absl::ResourceExhaustedError(
        absl::StrCat("dup of in-transit blob ", hash, ": ", std::strerror(errno)));
  requeue(hash, it->second);
  return copy;
}

void TransitBlobs::touch(const std::string &hash) const {
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = entries.find(hash); it != entries.end())
    requeue(hash, it->second);
}

void TransitBlobs::readOut(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(hash);
  if (it == entries.end())
    return;
  Entry &entry = it->second;
  // Unpinned (an output its client fetched after the Execute returned):
  // its pages go back now, for the next call's tensors to reuse.
  if (!pins.isPinned(hash)) {
    readOutQueue.erase(entry.tick);
    usedQueue.erase(entry.tick);
    totalBytes -= entry.size;
    entries.erase(it);
    ++dropped;
    return;
  }
  entry.readOut = true;
  requeue(hash, entry);
}

TransitBlobs::Stats TransitBlobs::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return {static_cast<int64_t>(entries.size()), totalBytes, dropped, spilled};
}

} // namespace kiln::server
