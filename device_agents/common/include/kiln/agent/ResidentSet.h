//===- ResidentSet.h - parameter buffers kept in memory across calls ------===//
//
// This file declares ResidentSet, an LRU of immutable aligned buffers keyed by
// blob hash under a byte budget, so that weights stay resident between tasks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AlignedBuffer.h"

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::agent {

/// Thread-safe LRU of shared, read-only buffers. Evicting an entry only drops
/// the set's reference: a task still using the buffer keeps it alive.
class ResidentSet {
public:
  using Buffer = std::shared_ptr<const AlignedBuffer>;

  explicit ResidentSet(int64_t budgetBytes) : budget(budgetBytes) {}

  /// The buffer for `hash`, marked most recently used; null on a miss.
  Buffer lookup(const std::string &hash);
  /// lookup() of each of `hashes` (count of them, each by `hashOf(i)`), in
  /// one turn of the lock: a call's parameters, hundreds for some models.
  template <typename HashOf>
  std::vector<Buffer> lookupAll(int count, HashOf hashOf) {
    std::vector<Buffer> found(static_cast<size_t>(count));
    std::lock_guard<std::mutex> lock(mutex);
    for (int i = 0; i < count; ++i)
      if (auto it = index.find(hashOf(i)); it != index.end()) {
        lru.splice(lru.begin(), lru, it->second);
        found[static_cast<size_t>(i)] = it->second->buffer;
      }
    return found;
  }

  /// Makes `buffer` resident under `hash` (replacing nothing if it is already
  /// there) and evicts least recently used entries until the set fits its
  /// budget. A buffer larger than the whole budget is returned but not kept.
  /// Returns the resident buffer for `hash`.
  Buffer insert(const std::string &hash, Buffer buffer);

  int64_t residentBytes() const;
  size_t size() const;
  int64_t budgetBytes() const { return budget; }

private:
  struct Entry {
    std::string hash;
    Buffer buffer;
  };

  const int64_t budget;
  mutable std::mutex mutex;
  std::list<Entry> lru; // Front is most recently used.
  std::unordered_map<std::string, std::list<Entry>::iterator> index;
  int64_t bytes = 0;
};

} // namespace kiln::agent
