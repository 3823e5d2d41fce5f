//===- StoreIndex.cpp - sizes, LRU order and pins of stored blobs ---------===//
//
// This file implements StoreIndex (LRU by a monotonic access tick) and
// BlobPins.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/StoreIndex.h"

namespace kiln::server {

void StoreIndex::add(const std::string &hash, int64_t size) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = entries.try_emplace(hash);
  if (!inserted) {
    byAge.erase(it->second.tick);
    totalBytes -= it->second.size;
  }
  it->second.size = size;
  it->second.tick = nextTick++;
  byAge.emplace(it->second.tick, hash);
  totalBytes += size;
}

void StoreIndex::touch(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(hash);
  if (it == entries.end())
    return;
  byAge.erase(it->second.tick);
  it->second.tick = nextTick++;
  byAge.emplace(it->second.tick, hash);
}

bool StoreIndex::holds(const std::string &hash, int64_t size) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(hash);
  return it != entries.end() && it->second.size == size;
}

void StoreIndex::remove(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(hash);
  if (it == entries.end())
    return;
  byAge.erase(it->second.tick);
  totalBytes -= it->second.size;
  entries.erase(it);
}

void StoreIndex::pin(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  ++pins[hash];
}

void StoreIndex::unpin(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = pins.find(hash);
  if (it != pins.end() && --it->second <= 0)
    pins.erase(it);
}

bool StoreIndex::isPinned(const std::string &hash) const {
  std::lock_guard<std::mutex> lock(mutex);
  return pins.contains(hash);
}

StoreIndex::Evicted
StoreIndex::evictTo(int64_t targetBytes,
                    const std::function<void(const std::string &)> &erase) {
  std::lock_guard<std::mutex> lock(mutex);
  Evicted evicted;
  for (auto it = byAge.begin(); it != byAge.end() && totalBytes > targetBytes;) {
    const std::string hash = it->second;
    if (pins.contains(hash)) {
      ++it;
      continue;
    }
    erase(hash);
    auto entry = entries.find(hash);
    int64_t size = entry->second.size;
    entries.erase(entry);
    it = byAge.erase(it);
    totalBytes -= size;
    ++evicted.blobs;
    evicted.bytes += size;
  }
  evictedBlobs += evicted.blobs;
  evictedBytes += evicted.bytes;
  return evicted;
}

StoreIndex::Stats StoreIndex::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  Stats stats;
  stats.blobCount = static_cast<int64_t>(entries.size());
  stats.blobBytes = totalBytes;
  for (const auto &[hash, count] : pins)
    if (auto it = entries.find(hash); it != entries.end())
      stats.pinnedBytes += it->second.size;
  stats.evictedBlobs = evictedBlobs;
  stats.evictedBytes = evictedBytes;
  return stats;
}

std::vector<std::string> StoreIndex::lruOrder() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> order;
  order.reserve(byAge.size());
  for (const auto &[tick, hash] : byAge)
    order.push_back(hash);
  return order;
}

BlobPins::BlobPins(BlobPins &&other) noexcept
    : index(other.index), hashes(std::move(other.hashes)) {
  other.hashes.clear();
}

BlobPins::~BlobPins() {
  for (const std::string &hash : hashes)
    index->unpin(hash);
}

void BlobPins::add(const v1::Digest &digest) {
  if (digest.hash().size() != 64)
    return;
  index->pin(digest.hash());
  hashes.push_back(digest.hash());
}

} // namespace kiln::server
