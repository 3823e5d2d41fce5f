//===- BlobQuotaTest.cpp - stored bytes per caller ------------------------===//
//
// This file implements tests of BlobQuota over a real ContentStore.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/BlobQuota.h"

#include "kiln/common/Digest.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

class BlobQuotaTest : public testing::StoreTest {
protected:
  /// Stores `bytes` as `caller` would through Blobs.Write.
  absl::Status upload(BlobQuota &quota, const std::string &caller,
                      const std::string &bytes) {
    v1::Digest digest = digestOf(bytes);
    bool stored = store->contains(digest);
    if (stored)
      return absl::OkStatus(); // as BlobService: a stored blob costs nothing
    if (absl::Status admitted = quota.admit(caller, digest); !admitted.ok())
      return admitted;
    if (!store->put(bytes).ok())
      return absl::InternalError("put failed");
    if (!stored)
      quota.charge(caller, digest);
    return absl::OkStatus();
  }
};

TEST_F(BlobQuotaTest, RefusesPastTheLimitPerCaller) {
  BlobQuota quota(*store, 1000);
  std::string a(600, 'a'), b(600, 'b');
  ASSERT_TRUE(upload(quota, "alice", a).ok());
  EXPECT_EQ(quota.usage("alice"), 600);
  absl::Status refused = upload(quota, "alice", b);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("'alice' keeps 600 bytes"), std::string::npos)
      << refused;
  EXPECT_NE(refused.message().find("quota of 1000 bytes (--blob-quota-bytes)"),
            std::string::npos);
  EXPECT_FALSE(store->contains(digestOf(b)));
  // Another caller has a quota of its own; a blob already stored is free.
  EXPECT_TRUE(upload(quota, "bob", b).ok());
  EXPECT_TRUE(upload(quota, "alice", b).ok());
  EXPECT_EQ(quota.usage("alice"), 600);
  EXPECT_EQ(quota.usage("bob"), 600);
}

TEST_F(BlobQuotaTest, EvictionGivesTheRoomBack) {
  BlobQuota quota(*store, 1000);
  ASSERT_TRUE(upload(quota, "alice", std::string(600, 'a')).ok());
  ASSERT_FALSE(upload(quota, "alice", std::string(600, 'b')).ok());
  store->collectGarbage(1); // evicts everything unpinned
  EXPECT_TRUE(upload(quota, "alice", std::string(600, 'b')).ok());
  EXPECT_EQ(quota.usage("alice"), 600);
}

TEST_F(BlobQuotaTest, ZeroMeansUnlimited) {
  BlobQuota quota(*store, 0);
  EXPECT_TRUE(upload(quota, "alice", std::string(5000, 'a')).ok());
  EXPECT_TRUE(upload(quota, "alice", std::string(5000, 'b')).ok());
}

} // namespace
} // namespace kiln::server
