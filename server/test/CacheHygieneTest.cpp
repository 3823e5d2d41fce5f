//===- CacheHygieneTest.cpp - capacity, eviction, pins and salt -----------===//
//
// This file implements tests for the content store's capacity and LRU
// eviction, pins across compiles, the startup scan, and the compile-key salt
// through CacheService.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CacheSalt.h"
#include "kiln/server/api/CacheService.h"
#include "kiln/server/store/CompileCache.h"
#include "kiln/server/store/ExecutableNamespace.h"
#include "kiln/server/store/CompileKey.h"

#include "FakeCompiler.h"
#include "TestUtil.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using testing::FakeCompiler;
using testing::linearGraph;
using testing::TempDir;

/// Ten distinct 100-byte blobs.
std::string blob(int i) { return std::string(100, static_cast<char>('a' + i)); }

class CacheHygieneTest : public ::testing::Test {
protected:
  std::unique_ptr<ContentStore> openStore(int64_t capacity) {
    absl::StatusOr<std::unique_ptr<ContentStore>> opened =
        ContentStore::open(temp.path() / "cas", capacity);
    EXPECT_TRUE(opened.ok()) << opened.status();
    return std::move(*opened);
  }

  std::unique_ptr<CompileCache> openCache(ContentStore &store) {
    absl::StatusOr<std::unique_ptr<CompileCache>> cache = CompileCache::open(
        store, executables(), temp.path() / "ac", fake.function(), "b1", 1);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return std::move(*cache);
  }

  /// The namespace the caches list their executables in (one per test).
  ExecutableNamespace &executables() {
    if (!executableList)
      executableList = *ExecutableNamespace::open(temp.path() / "executables");
    return *executableList;
  }
  std::unique_ptr<ExecutableNamespace> executableList;
  TempDir temp;
  FakeCompiler fake;
};

TEST_F(CacheHygieneTest, WritesPastCapacityEvictTheLeastRecentlyRead) {
  auto store = openStore(300);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(store->put(blob(i)).ok());
  ASSERT_TRUE(store->read(digestOf(blob(0))).ok()); // 0 is now the newest
  ASSERT_TRUE(store->put(blob(3)).ok());
  EXPECT_TRUE(store->contains(digestOf(blob(0))));
  EXPECT_FALSE(store->contains(digestOf(blob(1)))) << "least recently used";
  EXPECT_TRUE(store->contains(digestOf(blob(2))));
  EXPECT_TRUE(store->contains(digestOf(blob(3))));
  StoreIndex::Stats stats = store->index().stats();
  EXPECT_EQ(stats.blobBytes, 300);
  EXPECT_EQ(stats.evictedBlobs, 1);
}

TEST_F(CacheHygieneTest, PinnedBlobsSurviveGarbageCollection) {
  auto store = openStore(0);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(store->put(blob(i)).ok());
  {
    BlobPins pins = store->pin({digestOf(blob(0)), digestOf(blob(2))});
    EXPECT_EQ(store->index().stats().pinnedBytes, 200);
    StoreIndex::Evicted evicted = store->collectGarbage(1);
    EXPECT_EQ(evicted.blobs, 2);
    EXPECT_TRUE(store->contains(digestOf(blob(0))));
    EXPECT_FALSE(store->contains(digestOf(blob(1))));
    EXPECT_TRUE(store->contains(digestOf(blob(2))));
    EXPECT_FALSE(store->contains(digestOf(blob(3))));
  }
  store->collectGarbage(1);
  EXPECT_FALSE(store->contains(digestOf(blob(0)))) << "unpinned now";
  EXPECT_EQ(store->index().stats().blobCount, 0);
}

TEST_F(CacheHygieneTest, GarbageCollectionWithoutTargetUsesTheCapacity) {
  auto unlimited = openStore(0);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(unlimited->put(blob(i)).ok());
  EXPECT_EQ(unlimited->collectGarbage().blobs, 0) << "unlimited: nothing";
  unlimited.reset();
  // Reopening indexes what is on disk and enforces the new capacity.
  auto capped = openStore(200);
  EXPECT_EQ(capped->index().stats().blobBytes, 200);
  EXPECT_EQ(capped->index().stats().blobCount, 2);
}

TEST_F(CacheHygieneTest, AnEvictedExecutableIsACacheMissAndRecompiles) {
  auto store = openStore(0);
  auto cache = openCache(*store);
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  ASSERT_TRUE(cache->compile(graph, "cpu", {}).ok());
  store->collectGarbage(1);
  absl::StatusOr<CompileOutcome> again = cache->compile(graph, "cpu", {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->cacheHit);
  EXPECT_EQ(fake.calls.load(), 2);
}

TEST_F(CacheHygieneTest, SaltChangesKeysAndPersistsAcrossRestart) {
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  EXPECT_NE(computeCompileKey(graph, "cpu", {}, "b1", ""),
            computeCompileKey(graph, "cpu", {}, "b1", "s1"));
  EXPECT_EQ(computeCompileKey(graph, "cpu", {}, "b1"),
            computeCompileKey(graph, "cpu", {}, "b1", ""));
  std::filesystem::path saltFile = temp.path() / "salt";
  {
    auto store = openStore(0);
    auto cache = openCache(*store);
    AccessPolicy everyone;
    CacheService service(*store, *cache, saltFile, everyone);
    ASSERT_TRUE(cache->compile(graph, "cpu", {}).ok());
    EXPECT_TRUE(cache->compile(graph, "cpu", {})->cacheHit);
    absl::StatusOr<std::string> previous = service.setSalt("s1");
    ASSERT_TRUE(previous.ok()) << previous.status();
    EXPECT_EQ(*previous, "");
    EXPECT_FALSE(cache->compile(graph, "cpu", {})->cacheHit);
    EXPECT_EQ(service.stats().salt(), "s1");
    EXPECT_EQ(service.stats().compile_misses(), 2);
    EXPECT_EQ(service.setSalt("bad\nsalt").status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  // A restarted daemon loads the persisted salt: the salted entry is a hit.
  absl::StatusOr<std::string> loaded = loadCacheSalt(saltFile, "");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, "s1");
  auto store = openStore(0);
  auto cache = openCache(*store);
  cache->setSalt(*loaded);
  EXPECT_TRUE(cache->compile(graph, "cpu", {})->cacheHit);
  EXPECT_EQ(fake.calls.load(), 2);
  // --cache-salt wins over the file and replaces it.
  EXPECT_EQ(*loadCacheSalt(saltFile, "s2"), "s2");
  EXPECT_EQ(*loadCacheSalt(saltFile, ""), "s2");
}

} // namespace
} // namespace kiln::server
