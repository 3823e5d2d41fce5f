//===- ContentStoreEviction.cpp - the store's index, pins and eviction ----===//
//
// This file implements the parts of ContentStore that keep its StoreIndex:
// the startup scan, touching blobs on read, indexing commits and evicting
// least-recently-used unpinned blobs down to a capacity.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ContentStore.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace kiln::server {

namespace {
bool isBlobName(const std::string &name) {
  return name.size() == 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}
} // namespace

void ContentStore::scan() {
  // (mtime, hash, size): the oldest mtime becomes the least recently used.
  std::vector<std::tuple<int64_t, std::string, int64_t>> found;
  std::error_code error;
  for (const auto &shard :
       std::filesystem::directory_iterator(rootDir, error)) {
    if (!shard.is_directory())
      continue;
    std::error_code inner;
    for (const auto &file :
         std::filesystem::directory_iterator(shard.path(), inner)) {
      std::string name = file.path().filename().string();
      struct stat info {};
      if (!isBlobName(name) || ::stat(file.path().c_str(), &info) != 0 ||
          !S_ISREG(info.st_mode))
        continue; // Temporary files and strays are not blobs.
      int64_t mtimeNs = static_cast<int64_t>(info.st_mtim.tv_sec) *
                            1'000'000'000 +
                        info.st_mtim.tv_nsec;
      found.emplace_back(mtimeNs, name, static_cast<int64_t>(info.st_size));
    }
  }
  std::sort(found.begin(), found.end());
  for (const auto &[mtime, hash, size] : found)
    blobIndex->add(hash, size);
  StoreIndex::Stats stats = blobIndex->stats();
  spdlog::info("content store {}: {} blob(s), {} bytes; capacity {}; "
               "in-transit blobs {}",
               rootDir.string(), stats.blobCount, stats.blobBytes,
               capacity == 0 ? std::string("unlimited")
                             : std::to_string(capacity),
               transit ? absl::StrCat("in memory up to ", transit->budgetBytes(),
                                      " bytes")
                       : std::string("on disk"));
  if (capacity > 0 && stats.blobBytes > capacity)
    collectGarbage(capacity);
}

void ContentStore::touch(const std::string &hash) const {
  blobIndex->touch(hash);
  // The file's mtime carries the LRU order across restarts.
  ::utimensat(AT_FDCWD, blobPath(hash).c_str(), nullptr, 0);
}

void ContentStore::markUsed(const v1::Digest &digest) const {
  blobIndex->touch(digest.hash());
  if (transit)
    transit->touch(digest.hash());
}

void ContentStore::committed(const v1::Digest &digest) {
  blobIndex->add(digest.hash(), digest.size_bytes());
  if (capacity > 0 && blobIndex->stats().blobBytes > capacity)
    collectGarbage(capacity);
}

BlobPins ContentStore::pin(const std::vector<v1::Digest> &digests) const {
  BlobPins pins(*blobIndex);
  for (const v1::Digest &digest : digests)
    pins.add(digest);
  return pins;
}

StoreIndex::Evicted ContentStore::collectGarbage(int64_t targetBytes) {
  if (targetBytes <= 0)
    targetBytes = capacity;
  if (targetBytes <= 0)
    return {};
  StoreIndex::Evicted evicted =
      blobIndex->evictTo(targetBytes, [this](const std::string &hash) {
        if (::unlink(blobPath(hash).c_str()) != 0 && errno != ENOENT)
          spdlog::warn("content store: cannot evict {}: {}", hash,
                       std::strerror(errno));
      });
  if (evicted.blobs > 0)
    spdlog::info("content store: evicted {} blob(s), {} bytes (target {})",
                 evicted.blobs, evicted.bytes, targetBytes);
  return evicted;
}

} // namespace kiln::server
