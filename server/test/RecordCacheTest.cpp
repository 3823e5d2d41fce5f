//===- RecordCacheTest.cpp - the records Execute keeps parsed -------------===//
//
// This file implements tests for RecordCache: a record is read from the
// store once, kept without its dumps and op report, marks its blob used on
// every hit, and a missing or damaged record is an error, not an entry.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/RecordCache.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kiln::server {
namespace {

using testing::TempDir;

class RecordCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto opened = ContentStore::open(temp.path() / "cas");
    ASSERT_TRUE(opened.ok()) << opened.status();
    store = std::move(*opened);
  }

  /// Stores a record for `name` with a stage dump and an op report.
  v1::Digest putRecord(const std::string &name) {
    v1::ExecutableRecord record;
    record.mutable_manifest()->set_entry_symbol("kiln_invoke");
    record.mutable_manifest()->set_target("cpu");
    record.mutable_manifest()->add_inputs()->set_name(name);
    record.mutable_artifact()->set_hash(std::string(64, 'a'));
    record.add_stages()->set_stage("asm");
    record.mutable_op_report()->add_layers()->set_op("aten.convolution");
    auto digest = store->put(record.SerializeAsString());
    EXPECT_TRUE(digest.ok()) << digest.status();
    return *digest;
  }

  TempDir temp;
  std::unique_ptr<ContentStore> store;
};

TEST_F(RecordCacheTest, ARecordIsReadOnceAndKeptWithoutDumpsOrReport) {
  RecordCache cache(*store);
  v1::Digest digest = putRecord("x");
  auto first = cache.get(digest);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->manifest().inputs(0).name(), "x");
  EXPECT_EQ((*first)->artifact().hash(), std::string(64, 'a'));
  EXPECT_EQ((*first)->stages_size(), 0);
  EXPECT_FALSE((*first)->has_op_report());
  // The second get does not read the store: the file can be gone.
  std::filesystem::remove(store->blobPath(digest.hash()));
  auto second = cache.get(digest);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->get(), second->get());
}

TEST_F(RecordCacheTest, AHitMarksTheRecordUsedInTheLru) {
  RecordCache cache(*store);
  v1::Digest record = putRecord("x");
  ASSERT_TRUE(cache.get(record).ok());
  v1::Digest later = putRecord("y");
  EXPECT_EQ(store->index().lruOrder().back(), later.hash());
  ASSERT_TRUE(cache.get(record).ok());
  EXPECT_EQ(store->index().lruOrder().back(), record.hash());
}

TEST_F(RecordCacheTest, MissingAndDamagedRecordsAreErrorsNotEntries) {
  RecordCache cache(*store);
  v1::Digest digest = putRecord("x");
  v1::Digest absent = digest;
  absent.set_hash(std::string(64, 'f'));
  EXPECT_EQ(cache.get(absent).status().code(), absl::StatusCode::kNotFound);
  std::ofstream(store->blobPath(digest.hash()), std::ios::binary | std::ios::trunc)
      << std::string(digest.size_bytes(), 'z');
  EXPECT_EQ(cache.get(digest).status().code(), absl::StatusCode::kDataLoss);
  // Once repaired, it is read again (the failure was not cached).
  v1::Digest again = putRecord("x");
  ASSERT_EQ(again.hash(), digest.hash());
  EXPECT_TRUE(cache.get(digest).ok());
}

TEST_F(RecordCacheTest, AFullCacheStartsOver) {
  RecordCache cache(*store, /*capacity=*/2);
  v1::Digest a = putRecord("a"), b = putRecord("b"), c = putRecord("c");
  ASSERT_TRUE(cache.get(a).ok());
  ASSERT_TRUE(cache.get(b).ok());
  ASSERT_TRUE(cache.get(c).ok()); // clears {a, b}, keeps c
  std::filesystem::remove(store->blobPath(a.hash()));
  std::filesystem::remove(store->blobPath(c.hash()));
  EXPECT_EQ(cache.get(a).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(cache.get(c).ok());
}

} // namespace
} // namespace kiln::server
