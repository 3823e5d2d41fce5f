//===- TransitBlobs.cpp - in-transit blobs held in memory -----------------===//
//
// This file implements TransitDraft (an upload into a memfd, verified, then
// sealed) and TransitBlobs (the budgeted table of sealed blobs, which drops
// outputs their clients read out and inputs their Executes used, and spills
// unused blobs to make room).
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/TransitBlobs.h"

#include "kiln/common/SealedFile.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <cassert>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace kiln::server {

absl::StatusOr<UniqueFd> TransitDraft::newFile() {
  UniqueFd file(::memfd_create("kiln-transit-blob", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!file.valid())
    return absl::ResourceExhaustedError(
        absl::StrCat("memfd_create: ", std::strerror(errno)));
  return file;
}

absl::StatusOr<std::unique_ptr<TransitDraft>>
TransitDraft::create(v1::Digest digest) {
  ASSIGN_OR_RETURN(UniqueFd file, newFile());
  return std::unique_ptr<TransitDraft>(
      new TransitDraft(std::move(digest), std::move(file)));
}

absl::StatusOr<std::unique_ptr<TransitDraft>>
TransitDraft::create(DigestVerifier::Unnamed blob) {
  ASSIGN_OR_RETURN(UniqueFd file, newFile());
  return std::unique_ptr<TransitDraft>(new TransitDraft(blob, std::move(file)));
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

TransitBlobs::Reservation::~Reservation() {
  if (owner)
    owner->release(bytes);
}

void TransitBlobs::release(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  reservedBytes -= bytes;
}

std::optional<TransitBlobs::Reservation>
TransitBlobs::reserve(const std::string &hash, int64_t size) {
  if (!fits(size))
    return std::nullopt;
  std::unique_lock<std::mutex> lock(mutex);
  if (auto it = entries.find(hash); it != entries.end() && it->second.size == size)
    return Reservation(this, 0);
  if (!makeRoom(lock, size))
    return std::nullopt;
  return Reservation(this, size);
}

bool TransitBlobs::add(const std::string &hash, int64_t size, UniqueFd &&file,
                       Reservation room) {
  std::lock_guard<std::mutex> lock(mutex);
  // The room becomes the blob's bytes, or goes back.
  reservedBytes -= std::exchange(room.owner, nullptr) ? room.bytes : 0;
  if (auto it = entries.find(hash); it != entries.end()) {
    // Published again (an input sent once more): it waits for its readers
    // anew.
    it->second.spent = false;
    requeue(hash, it->second);
    return it->second.size == size;
  }
  if (size != room.bytes)
    return false;
  Entry &entry = entries[hash];
  entry.size = size;
  entry.file = std::move(file);
  requeue(hash, entry);
  totalBytes += size;
  return true;
}

void TransitBlobs::requeue(const std::string &hash, Entry &entry) const {
  if (entry.tick != 0)
    used.erase(entry.tick);
  entry.tick = nextTick++;
  used.emplace(entry.tick, hash);
}

void TransitBlobs::erase(Entries::iterator it) {
  used.erase(it->second.tick);
  totalBytes -= it->second.size;
  entries.erase(it);
}

bool TransitBlobs::makeRoom(std::unique_lock<std::mutex> &lock, int64_t size) {
  int64_t room = budget - totalBytes - reservedBytes;
  if (room >= size) {
    reservedBytes += size;
    return true;
  }
  // What could go, spent blobs first, each pass least recently used
  // first; nothing goes unless enough can.
  std::vector<std::string> drops, spills;
  for (bool spent : {true, false})
    for (const auto &[tick, hash] : used) {
      if (room >= size)
        break;
      const Entry &entry = entries.at(hash);
      if (entry.spent != spent || entry.leaving || pins.isPinned(hash))
        continue;
      (spent ? drops : spills).push_back(hash);
      room += entry.size;
    }
  if (room < size)
    return false;
  for (const std::string &hash : drops) {
    erase(entries.find(hash));
    ++dropped;
  }
  reservedBytes += size;
  if (spills.empty())
    return true;
  // Written to disk before they leave memory (never in neither), without
  // the lock: pinned meanwhile, so that neither room here nor the disk's
  // own eviction takes them.
  struct Leaving {
    std::string hash;
    int64_t size;
    UniqueFd file;
  };
  std::vector<Leaving> leaving;
  for (const std::string &hash : spills) {
    Entry &entry = entries.at(hash);
    entry.leaving = true;
    pins.pin(hash);
    leaving.push_back({hash, entry.size,
                       UniqueFd(::fcntl(entry.file.get(), F_DUPFD_CLOEXEC, 0))});
  }
  lock.unlock();
  std::vector<bool> spilt;
  for (const Leaving &blob : leaving)
    spilt.push_back(blob.file.valid() && spill(blob.hash, blob.size, blob.file.get()));
  lock.lock();
  bool all = true;
  for (size_t i = 0; i < leaving.size(); ++i) {
    const std::string &hash = leaving[i].hash;
    // Nothing else erases a leaving blob (readOut sees the pin).
    auto it = entries.find(hash);
    assert(it != entries.end() && it->second.leaving);
    it->second.leaving = false;
    if (spilt[i]) {
      erase(it);
      ++spilled;
    }
    all = all && spilt[i];
    pins.unpin(hash);
  }
  if (!all)
    reservedBytes -= size;
  return all;
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

void TransitBlobs::handOut(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = entries.find(hash); it != entries.end()) {
    ++it->second.owed;
    it->second.spent = false;
    requeue(hash, it->second);
  }
}

void TransitBlobs::readOut(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(hash);
  if (it == entries.end())
    return;
  Entry &entry = it->second;
  requeue(hash, entry);
  if (entry.owed == 0 || --entry.owed > 0)
    return;
  // Read out and unpinned (an output its client fetched after the Execute
  // returned): its pages go back now, for the next call's tensors to reuse.
  // A blob being spilled is pinned by its spill, and goes when that ends.
  if (!entry.leaving && !pins.isPinned(hash)) {
    erase(it);
    ++dropped;
    return;
  }
  entry.spent = true;
}

void TransitBlobs::consumed(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = entries.find(hash); it != entries.end() && it->second.owed == 0)
    it->second.spent = true;
}

TransitBlobs::Stats TransitBlobs::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return {static_cast<int64_t>(entries.size()), totalBytes, dropped, spilled};
}

} // namespace kiln::server
