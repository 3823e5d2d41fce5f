//===- ResidentSet.cpp - parameter buffers kept in memory across calls ----===//
//
// This file implements ResidentSet's LRU with a byte budget.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/ResidentSet.h"

namespace kiln::agent {

ResidentSet::Buffer ResidentSet::lookup(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = index.find(hash);
  if (it == index.end())
    return nullptr;
  lru.splice(lru.begin(), lru, it->second);
  return it->second->buffer;
}

ResidentSet::Buffer ResidentSet::insert(const std::string &hash,
                                        Buffer buffer) {
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = index.find(hash); it != index.end()) {
    // Another task loaded the same blob first: share its copy.
    lru.splice(lru.begin(), lru, it->second);
    return it->second->buffer;
  }
  int64_t size = buffer->size();
  if (size > budget)
    return buffer;
  while (bytes + size > budget && !lru.empty()) {
    bytes -= lru.back().buffer->size();
    index.erase(lru.back().hash);
    lru.pop_back();
  }
  lru.push_front(Entry{hash, buffer});
  index.emplace(hash, lru.begin());
  bytes += size;
  return buffer;
}

int64_t ResidentSet::residentBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return bytes;
}

size_t ResidentSet::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return lru.size();
}

} // namespace kiln::agent
