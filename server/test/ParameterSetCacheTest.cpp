//===- ParameterSetCacheTest.cpp - the parameter sets Execute names -------===//
//
// This file implements tests for ParameterSetCache: a set is read from the
// store once and kept; a missing, oversized, unparsable or malformed set is
// an error naming it, never an entry.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ParameterSetCache.h"

#include "kiln/common/Digest.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using testing::TempDir;

class ParameterSetCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto opened = ContentStore::open(temp.path() / "cas");
    ASSERT_TRUE(opened.ok()) << opened.status();
    store = std::move(*opened);
  }

  v1::Digest put(const std::string &bytes) {
    auto digest = store->put(bytes);
    EXPECT_TRUE(digest.ok()) << digest.status();
    return *digest;
  }

  TempDir temp;
  std::unique_ptr<ContentStore> store;
};

TEST_F(ParameterSetCacheTest, ASetIsReadOnceAndKept) {
  v1::ParameterSet set;
  *set.add_parameters() = digestOf("w0");
  *set.add_parameters() = digestOf("w1");
  v1::Digest digest = put(set.SerializeAsString());
  ParameterSetCache cache(*store);
  auto first = cache.get(digest);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ((*first)->parameters_size(), 2);
  EXPECT_EQ((*first)->parameters(1).hash(), digestOf("w1").hash());
  // The second get does not read the store: the file can be gone.
  std::filesystem::remove(store->blobPath(digest.hash()));
  auto second = cache.get(digest);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->get(), second->get());
}

TEST_F(ParameterSetCacheTest, AMissingSetIsNotFound) {
  ParameterSetCache cache(*store);
  auto got = cache.get(digestOf("never stored"));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << got.status();
}

TEST_F(ParameterSetCacheTest, BadSetsAreRefusedAndNotKept) {
  ParameterSetCache cache(*store);
  // Not a ParameterSet at all (a field 1 cut short).
  auto garbage = cache.get(put(std::string("\x0a\x05" "ab", 4)));
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(garbage.status().message().find("not a serialized kiln.v1.ParameterSet"),
            std::string::npos)
      << garbage.status();
  // Parses, but names a digest that is not one.
  v1::ParameterSet set;
  set.add_parameters()->set_hash("not-hex");
  auto malformed = cache.get(put(set.SerializeAsString()));
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(malformed.status().message().find("parameter 0"), std::string::npos)
      << malformed.status();
  // Larger than any set is allowed to be: refused before it is read.
  v1::Digest huge = digestOf("x");
  huge.set_size_bytes(kMaxParameterSetBytes + 1);
  auto big = cache.get(huge);
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  // A malformed digest for the set itself.
  v1::Digest bad;
  bad.set_hash("xyz");
  EXPECT_EQ(cache.get(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

} // namespace
} // namespace kiln::server
