//===- DurabilityTest.cpp - durable blobs are fsynced, in-transit ones not -===//
//
// This file implements tests for Durability through the content store: both
// kinds are verified and published whole, and only durable ones pay for
// fsync. fsync is interposed in this test binary to count the calls.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

#include <atomic>
#include <dlfcn.h>

namespace {
std::atomic<int> fsyncCalls{0};
} // namespace

/// Counts, then forwards to the C library's fsync.
extern "C" int fsync(int fd) {
  using Fsync = int (*)(int);
  static Fsync real = reinterpret_cast<Fsync>(::dlsym(RTLD_NEXT, "fsync"));
  fsyncCalls.fetch_add(1);
  return real(fd);
}

namespace kiln::server {
namespace {

class DurabilityTest : public testing::StoreTest {
protected:
  /// Writes `bytes` as one blob with `durability`; returns the fsyncs made.
  int fsyncsToWrite(std::string_view bytes, Durability durability,
                    absl::Status *status) {
    int before = fsyncCalls.load();
    absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
        store->beginWrite(digestOf(bytes), durability);
    EXPECT_TRUE(writer.ok()) << writer.status();
    EXPECT_TRUE((*writer)->append(bytes).ok());
    *status = (*writer)->commit();
    return fsyncCalls.load() - before;
  }
};

TEST_F(DurabilityTest, DurableBlobsAreFsyncedAndInTransitOnesAreNot) {
  absl::Status status;
  EXPECT_GE(fsyncsToWrite("weights", Durability::kDurable, &status), 1);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(fsyncsToWrite("an input tensor", Durability::kInTransit, &status),
            0);
  ASSERT_TRUE(status.ok()) << status;
  absl::StatusOr<std::string> read =
      store->read(digestOf("an input tensor"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "an input tensor");
}

TEST_F(DurabilityTest, InTransitBlobsAreVerifiedLikeAnyOther) {
  v1::Digest digest = digestOf("the real bytes");
  absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
      store->beginWrite(digest, Durability::kInTransit);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->append("other bytes!!!").ok());
  EXPECT_EQ((*writer)->commit().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(store->contains(digest));
  EXPECT_EQ(testing::countTempFiles(store->root()), 0);
}

} // namespace
} // namespace kiln::server
