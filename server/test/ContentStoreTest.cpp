//===- ContentStoreTest.cpp - the on-disk CAS -----------------------------===//
//
// This file implements tests for ContentStore and BlobWriter: round trips,
// large blobs, rejected mismatches, corruption handling, concurrent writers.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ContentStore.h"

#include "TestUtil.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <thread>

namespace kiln::server {
namespace {

using testing::TempDir;

class ContentStoreTest : public testing::StoreTest {
protected:
  static std::string randomBytes(size_t size, unsigned seed) {
    std::mt19937_64 random(seed);
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; i += 8) {
      uint64_t word = random();
      for (size_t j = 0; j < 8 && i + j < size; ++j)
        bytes[i + j] = static_cast<char>(word >> (8 * j));
    }
    return bytes;
  }

};

TEST_F(ContentStoreTest, RoundTripsABlob) {
  absl::StatusOr<v1::Digest> digest = store->put("hello kiln");
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(digest->size_bytes(), 10);
  EXPECT_TRUE(store->contains(*digest));
  EXPECT_TRUE(std::filesystem::exists(store->root() /
                                      digest->hash().substr(0, 2) /
                                      digest->hash()));
  absl::StatusOr<std::string> read = store->read(*digest);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "hello kiln");
}

TEST_F(ContentStoreTest, RoundTripsTheEmptyBlob) {
  absl::StatusOr<v1::Digest> digest = store->put("");
  ASSERT_TRUE(digest.ok()) << digest.status();
  absl::StatusOr<std::string> read = store->read(*digest);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->empty());
}

TEST_F(ContentStoreTest, KeepsA64MiBBlobIntactThroughChunkedWrites) {
  std::string bytes = randomBytes(64 << 20, 7);
  v1::Digest digest = digestOf(bytes);
  absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
      store->beginWrite(digest);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (size_t offset = 0; offset < bytes.size(); offset += 1 << 20)
    ASSERT_TRUE((*writer)->append(std::string_view(bytes).substr(offset, 1 << 20)).ok());
  ASSERT_TRUE((*writer)->commit().ok());
  absl::StatusOr<std::string> read = store->read(digest);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(*read == bytes);
  EXPECT_EQ(testing::countTempFiles(store->root()), 0);
}

TEST_F(ContentStoreTest, RejectsBytesThatDoNotMatchTheDigest) {
  v1::Digest digest = digestOf("the real bytes");
  absl::Status status = store->write(digest, "other bytes!!!");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("digest mismatch"), absl::string_view::npos);
  EXPECT_FALSE(store->contains(digest));
  EXPECT_EQ(store->read(digest).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(testing::countTempFiles(store->root()), 0);
}

TEST_F(ContentStoreTest, RejectsWrongSizes) {
  v1::Digest digest = digestOf("four");
  EXPECT_EQ(store->write(digest, "fou").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->write(digest, "fourr").code(),
            absl::StatusCode::kInvalidArgument);
  v1::Digest bad;
  bad.set_hash("not-hex");
  EXPECT_EQ(store->write(bad, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::countTempFiles(store->root()), 0);
}

TEST_F(ContentStoreTest, AbandonedWriterLeavesNothingBehind) {
  v1::Digest digest = digestOf("abandoned");
  {
    absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
        store->beginWrite(digest);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->append("aban").ok());
  }
  EXPECT_FALSE(store->contains(digest));
  EXPECT_EQ(testing::countTempFiles(store->root()), 0);
}

TEST_F(ContentStoreTest, CorruptBlobIsDataLossAndMovedAside) {
  absl::StatusOr<v1::Digest> digest = store->put("precious weights");
  ASSERT_TRUE(digest.ok());
  std::filesystem::path path = store->blobPath(digest->hash());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "PRECIOUS WEIGHTS"; // same size, different bytes
  }
  EXPECT_TRUE(store->contains(*digest)); // cheap check sees only the size
  absl::StatusOr<std::string> read = store->read(*digest);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(std::filesystem::exists(path));
  // The corrupt bytes are kept for inspection, under a name no scan takes
  // for a blob.
  std::filesystem::path quarantine =
      store->root() / ContentStore::kQuarantineDir;
  std::vector<std::filesystem::path> kept;
  for (const auto &entry : std::filesystem::directory_iterator(quarantine))
    kept.push_back(entry.path());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].filename().string().rfind(digest->hash() + ".corrupt-", 0),
            0u);
  EXPECT_EQ(testing::readFile(kept[0]), "PRECIOUS WEIGHTS");
  EXPECT_EQ(store->read(*digest).status().code(), absl::StatusCode::kNotFound);
  // Re-uploading repairs it; a reopened store does not index the quarantine.
  ASSERT_TRUE(store->write(*digest, "precious weights").ok());
  EXPECT_TRUE(store->verify(*digest).ok());
  auto reopened = ContentStore::open(store->root());
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->index().stats().blobCount, 1);
}

TEST_F(ContentStoreTest, AWrongSizeIsInvalidArgumentAndDeletesNothing) {
  absl::StatusOr<v1::Digest> digest = store->put("someone's executable");
  ASSERT_TRUE(digest.ok());
  for (int64_t wrong : {int64_t{0}, int64_t{3}, digest->size_bytes() + 1,
                        int64_t{1} << 40}) {
    v1::Digest lie = *digest;
    lie.set_size_bytes(wrong);
    absl::StatusOr<std::string> read = store->read(lie);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument)
        << wrong << ": " << read.status();
    EXPECT_NE(read.status().message().find("size_bytes"), std::string::npos);
    EXPECT_EQ(store->verify(lie).code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(std::filesystem::exists(store->blobPath(digest->hash())));
  absl::StatusOr<std::string> read = store->read(*digest);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "someone's executable");
  EXPECT_FALSE(std::filesystem::exists(store->root() /
                                       ContentStore::kQuarantineDir));
}

TEST_F(ContentStoreTest, StreamHandsOutTheBlobInBoundedChunks) {
  std::string big(3 * (1 << 20) + 17, '\0');
  std::mt19937 random(7);
  for (char &c : big)
    c = static_cast<char>(random());
  absl::StatusOr<v1::Digest> digest = store->put(big);
  ASSERT_TRUE(digest.ok());
  std::string got;
  size_t largest = 0;
  ASSERT_TRUE(store
                  ->stream(*digest,
                           [&](std::string_view chunk) {
                             largest = std::max(largest, chunk.size());
                             got.append(chunk);
                             return absl::OkStatus();
                           })
                  .ok());
  EXPECT_EQ(got, big);
  EXPECT_LE(largest, size_t{1} << 20);

  // The sink's error stops the stream.
  int calls = 0;
  absl::Status stopped = store->stream(*digest, [&](std::string_view) {
    ++calls;
    return absl::CancelledError("client went away");
  });
  EXPECT_EQ(stopped.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);

  // A wrong size: nothing is handed out, nothing deleted.
  v1::Digest lie = *digest;
  lie.set_size_bytes(5);
  calls = 0;
  EXPECT_EQ(store->stream(lie, [&](std::string_view) {
                   ++calls;
                   return absl::OkStatus();
                 }).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(store->verify(*digest).ok());

  // Damage of the same size is found at the end: DATA_LOSS, moved aside.
  {
    std::fstream file(store->blobPath(digest->hash()),
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(2 << 20);
    file.put(static_cast<char>(big[2 << 20] ^ 1));
  }
  EXPECT_EQ(store->stream(*digest, [](std::string_view) {
                   return absl::OkStatus();
                 }).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_FALSE(std::filesystem::exists(store->blobPath(digest->hash())));
}

TEST_F(ContentStoreTest, FindMissingListsAbsentDigestsOnce) {
  absl::StatusOr<v1::Digest> present = store->put("present");
  ASSERT_TRUE(present.ok());
  v1::Digest absent = digestOf("absent");
  std::vector<v1::Digest> missing =
      store->findMissing({*present, absent, absent});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].hash(), absent.hash());
}

TEST_F(ContentStoreTest, ConcurrentWritersOfTheSameBlobAllSucceed) {
  std::string bytes = randomBytes(4 << 20, 11);
  v1::Digest digest = digestOf(bytes);
  constexpr int kWriters = 8;
  std::vector<absl::Status> results(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i)
    threads.emplace_back([&, i] {
      absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
          store->beginWrite(digest);
      if (!writer.ok()) {
        results[i] = writer.status();
        return;
      }
      for (size_t offset = 0; offset < bytes.size(); offset += 256 << 10) {
        results[i] = (*writer)->append(
            std::string_view(bytes).substr(offset, 256 << 10));
        if (!results[i].ok())
          return;
      }
      results[i] = (*writer)->commit();
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const absl::Status &status : results)
    EXPECT_TRUE(status.ok()) << status;
  absl::StatusOr<std::string> read = store->read(digest);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(*read == bytes);
  EXPECT_EQ(testing::countTempFiles(store->root()), 0);
}

} // namespace
} // namespace kiln::server
