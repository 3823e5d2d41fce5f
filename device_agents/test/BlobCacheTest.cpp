//===- BlobCacheTest.cpp - BlobCache, ResidentSet, AlignedBuffer ----------===//
//
// This file tests digest verification and atomic writes of the agent's blob
// cache, and the resident set's LRU eviction by byte budget.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/BlobCache.h"
#include "kiln/agent/ResidentSet.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

#include <fstream>

namespace fs = std::filesystem;

namespace kiln::agent {
namespace {

using test::MemoryBlobService;
using test::TempDir;

class BlobCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto opened = BlobCache::open(dir.path() / "cache");
    ASSERT_TRUE(opened.ok()) << opened.status();
    cache = std::move(*opened);
  }

  size_t tempFiles() const {
    size_t count = 0;
    for ([[maybe_unused]] const auto &entry :
         fs::directory_iterator(dir.path() / "cache" / "tmp"))
      ++count;
    return count;
  }

  TempDir dir;
  std::unique_ptr<BlobCache> cache;
};

TEST_F(BlobCacheTest, PutThenReadLocalReturnsVerifiedAlignedBytes) {
  std::string bytes = "weights weights weights";
  v1::Digest digest = digestOf(bytes);
  ASSERT_TRUE(cache->put(digest, bytes).ok());
  EXPECT_TRUE(fs::exists(cache->pathFor(digest)));
  EXPECT_EQ(cache->pathFor(digest).parent_path().filename(),
            digest.hash().substr(0, 2));
  auto buffer = cache->readLocal(digest);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ(buffer->view(), bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 64, 0u);
  EXPECT_EQ(tempFiles(), 0u);
}

TEST_F(BlobCacheTest, PutRejectsBytesThatDoNotMatchTheDigest) {
  v1::Digest digest = digestOf("the real bytes");
  absl::Status status = cache->put(digest, "other bytes!!!");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_FALSE(fs::exists(cache->pathFor(digest)));
  EXPECT_EQ(tempFiles(), 0u) << "a failed write must leave no temp file";
}

TEST_F(BlobCacheTest, PutRejectsAMalformedDigest) {
  v1::Digest digest;
  digest.set_hash("../../etc/passwd");
  digest.set_size_bytes(3);
  EXPECT_EQ(cache->put(digest, "abc").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(BlobCacheTest, CorruptLocalCopyIsDataLossAndRemoved) {
  std::string bytes(4096, 'x');
  v1::Digest digest = digestOf(bytes);
  ASSERT_TRUE(cache->put(digest, bytes).ok());
  {
    // Same size, one byte flipped: only the hash can tell.
    std::fstream file(cache->pathFor(digest),
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.put('y');
  }
  auto buffer = cache->readLocal(digest);
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(fs::exists(cache->pathFor(digest)));
}

TEST_F(BlobCacheTest, ReadLocalOfAnAbsentBlobIsNotFound) {
  EXPECT_EQ(cache->readLocal(digestOf("nope")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(BlobCacheTest, EnsureFetchesAMissOnceThenServesItLocally) {
  MemoryBlobService source;
  std::string bytes(10'000, 'w'); // Ten chunks from the fake.
  v1::Digest digest = source.add(bytes);
  bool fetched = false;
  auto path = cache->ensure(digest, source, &fetched);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_TRUE(fetched);
  EXPECT_EQ(test::readFileBytes(*path), bytes);
  path = cache->ensure(digest, source, &fetched);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_FALSE(fetched);
  EXPECT_EQ(source.reads.load(), 1);
  EXPECT_EQ(tempFiles(), 0u);
}

TEST_F(BlobCacheTest, EnsureRejectsWrongBytesFromTheDaemon) {
  MemoryBlobService source;
  v1::Digest digest = digestOf("expected content");
  source.addRaw(digest, "tampered content");
  auto path = cache->ensure(digest, source);
  EXPECT_EQ(path.status().code(), absl::StatusCode::kDataLoss)
      << path.status();
  EXPECT_FALSE(fs::exists(cache->pathFor(digest)));
  EXPECT_EQ(tempFiles(), 0u);
}

TEST_F(BlobCacheTest, EnsureRejectsALongerBlobThanTheDigestSays) {
  MemoryBlobService source;
  v1::Digest digest = digestOf("short");
  source.addRaw(digest, std::string(5000, 's'));
  EXPECT_EQ(cache->ensure(digest, source).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(tempFiles(), 0u);
}

TEST_F(BlobCacheTest, EnsureRefetchesACorruptLocalCopy) {
  MemoryBlobService source;
  std::string bytes = "artifact bytes";
  v1::Digest digest = source.add(bytes);
  fs::create_directories(cache->pathFor(digest).parent_path());
  std::ofstream(cache->pathFor(digest), std::ios::binary) << "garbage bytes!";
  bool fetched = false;
  auto path = cache->ensure(digest, source, &fetched);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_TRUE(fetched);
  EXPECT_EQ(test::readFileBytes(*path), bytes);
}

TEST_F(BlobCacheTest, EnsurePassesOnTheDaemonsNotFound) {
  MemoryBlobService source;
  EXPECT_EQ(cache->ensure(digestOf("absent"), source).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(BlobCacheTest, FetchToMemoryVerifiesTheBytes) {
  MemoryBlobService source;
  std::string bytes(3000, 'i');
  v1::Digest digest = source.add(bytes);
  auto buffer = fetchToMemory(digest, source);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ(buffer->view(), bytes);
  v1::Digest other = digestOf(std::string(3000, 'j'));
  source.addRaw(other, bytes);
  EXPECT_EQ(fetchToMemory(other, source).status().code(),
            absl::StatusCode::kDataLoss);
}

std::shared_ptr<const AlignedBuffer> bufferOf(int64_t size) {
  return std::make_shared<const AlignedBuffer>(
      std::move(*AlignedBuffer::allocate(size)));
}

TEST(ResidentSetTest, EvictsLeastRecentlyUsedToStayWithinTheByteBudget) {
  ResidentSet set(300);
  set.insert("a", bufferOf(100));
  set.insert("b", bufferOf(100));
  set.insert("c", bufferOf(100));
  EXPECT_EQ(set.residentBytes(), 300);
  ASSERT_NE(set.lookup("a"), nullptr); // a is now most recently used.
  set.insert("d", bufferOf(100));
  EXPECT_EQ(set.lookup("b"), nullptr) << "b was least recently used";
  EXPECT_NE(set.lookup("a"), nullptr);
  EXPECT_NE(set.lookup("c"), nullptr);
  EXPECT_NE(set.lookup("d"), nullptr);
  EXPECT_EQ(set.residentBytes(), 300);
  set.insert("e", bufferOf(250)); // Needs three of the four gone.
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.residentBytes(), 250);
}

TEST(ResidentSetTest, ABufferLargerThanTheBudgetIsReturnedButNotKept) {
  ResidentSet set(100);
  set.insert("small", bufferOf(50));
  auto big = set.insert("big", bufferOf(101));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->size(), 101);
  EXPECT_EQ(set.lookup("big"), nullptr);
  EXPECT_NE(set.lookup("small"), nullptr) << "nothing evicted for nothing";
}

TEST(ResidentSetTest, EvictionKeepsBuffersInUseAlive) {
  ResidentSet set(100);
  auto held = set.insert("a", bufferOf(100));
  set.insert("b", bufferOf(100));
  EXPECT_EQ(set.lookup("a"), nullptr);
  EXPECT_EQ(held->size(), 100) << "the task's reference still works";
}

TEST(ResidentSetTest, InsertingAKnownHashSharesTheResidentCopy) {
  ResidentSet set(1000);
  auto first = set.insert("a", bufferOf(10));
  auto second = set.insert("a", bufferOf(10));
  EXPECT_EQ(first, second);
  EXPECT_EQ(set.residentBytes(), 10);
}

TEST(AlignedBufferTest, IsSixtyFourByteAlignedAndZeroed) {
  for (int64_t size : {0, 1, 63, 64, 65, 1000}) {
    auto buffer = AlignedBuffer::allocate(size);
    ASSERT_TRUE(buffer.ok());
    ASSERT_NE(buffer->data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 64, 0u);
    for (int64_t i = 0; i < size; ++i)
      ASSERT_EQ(buffer->data()[i], 0);
  }
  EXPECT_EQ(AlignedBuffer::allocate(-1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

} // namespace
} // namespace kiln::agent
