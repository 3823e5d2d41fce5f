//===- StoreIndex.h - sizes, LRU order and pins of stored blobs -*- C++ -*-===//
//
// This file declares StoreIndex, the in-memory index ContentStore keeps over
// its blobs (size and last access, for LRU eviction under a capacity), and
// BlobPins, the reference-counted pins that keep blobs in use from eviction.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/tensor.pb.h"

#include "absl/container/flat_hash_map.h"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::server {

/// Blob sizes in least-recently-used order plus per-blob pin counts. Pins are
/// keyed by hash and independent of presence, so a blob can be pinned before
/// it is written. Thread-safe.
class StoreIndex {
public:
  /// Totals and counters; evictions count since construction.
  struct Stats {
    int64_t blobCount = 0;
    int64_t blobBytes = 0;
    int64_t pinnedBytes = 0;
    int64_t evictedBlobs = 0;
    int64_t evictedBytes = 0;
  };
  /// What one eviction pass removed.
  struct Evicted {
    int64_t blobs = 0;
    int64_t bytes = 0;
  };

  /// Records `hash` as present with `size` bytes and most recently used.
  void add(const std::string &hash, int64_t size);
  /// Marks `hash` most recently used; no-op when absent.
  void touch(const std::string &hash);
  /// Whether `hash` is recorded with `size` bytes.
  bool holds(const std::string &hash, int64_t size) const;
  /// Forgets `hash` (deleted outside eviction, e.g. found corrupt).
  void remove(const std::string &hash);

  void pin(const std::string &hash);
  void unpin(const std::string &hash);
  bool isPinned(const std::string &hash) const;

  /// Removes least-recently-used unpinned blobs until at most `targetBytes`
  /// remain (or only pinned ones do). `erase(hash)` deletes the blob's file;
  /// it runs under the index lock, so no pin can be taken meanwhile.
  Evicted evictTo(int64_t targetBytes,
                  const std::function<void(const std::string &)> &erase);

  Stats stats() const;
  /// Hashes from least to most recently used (for tests and debugging).
  std::vector<std::string> lruOrder() const;

private:
  struct Entry {
    int64_t size = 0;
    uint64_t tick = 0;
  };
  mutable std::mutex mutex;
  absl::flat_hash_map<std::string, Entry> entries;
  std::map<uint64_t, std::string> byAge;
  absl::flat_hash_map<std::string, int> pins;
  uint64_t nextTick = 1;
  int64_t totalBytes = 0;
  int64_t evictedBlobs = 0;
  int64_t evictedBytes = 0;
};

/// A set of pins released on destruction (reference-counted per hash, so
/// overlapping sets from concurrent requests compose). Movable.
class BlobPins {
public:
  explicit BlobPins(StoreIndex &index) : index(&index) {}
  BlobPins(BlobPins &&other) noexcept;
  BlobPins &operator=(BlobPins &&other) = delete;
  BlobPins(const BlobPins &) = delete;
  ~BlobPins();

  /// Pins `digest` until this set is destroyed; invalid digests are ignored.
  void add(const v1::Digest &digest);

private:
  StoreIndex *index;
  std::vector<std::string> hashes;
};

} // namespace kiln::server
