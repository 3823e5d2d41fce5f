//===- StoreIndexTest.cpp - LRU order, pins and eviction ------------------===//
//
// This file implements tests for StoreIndex and BlobPins.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/StoreIndex.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

std::string hashOf(char c) { return std::string(64, c); }

v1::Digest digest(char c) {
  v1::Digest d;
  d.set_hash(hashOf(c));
  d.set_size_bytes(10);
  return d;
}

class StoreIndexTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (char c : {'a', 'b', 'c', 'd'})
      index.add(hashOf(c), 10);
  }

  StoreIndex::Evicted evictTo(int64_t target) {
    return index.evictTo(target,
                         [&](const std::string &hash) { erased.push_back(hash); });
  }

  StoreIndex index;
  std::vector<std::string> erased;
};

TEST_F(StoreIndexTest, TouchMovesABlobToTheMostRecentlyUsedEnd) {
  index.touch(hashOf('a'));
  index.touch(hashOf('c'));
  EXPECT_EQ(index.lruOrder(), (std::vector<std::string>{
                                  hashOf('b'), hashOf('d'), hashOf('a'),
                                  hashOf('c')}));
}

TEST_F(StoreIndexTest, EvictsLeastRecentlyUsedFirstDownToTheTarget) {
  index.touch(hashOf('a'));
  StoreIndex::Evicted evicted = evictTo(25);
  EXPECT_EQ(evicted.blobs, 2);
  EXPECT_EQ(evicted.bytes, 20);
  EXPECT_EQ(erased, (std::vector<std::string>{hashOf('b'), hashOf('c')}));
  StoreIndex::Stats stats = index.stats();
  EXPECT_EQ(stats.blobCount, 2);
  EXPECT_EQ(stats.blobBytes, 20);
  EXPECT_EQ(stats.evictedBlobs, 2);
  EXPECT_EQ(stats.evictedBytes, 20);
}

TEST_F(StoreIndexTest, PinnedBlobsSurviveEvenAnEvictionToZero) {
  BlobPins pins(index);
  pins.add(digest('a'));
  pins.add(digest('c'));
  EXPECT_EQ(index.stats().pinnedBytes, 20);
  evictTo(0);
  EXPECT_EQ(erased, (std::vector<std::string>{hashOf('b'), hashOf('d')}));
  EXPECT_EQ(index.lruOrder(),
            (std::vector<std::string>{hashOf('a'), hashOf('c')}));
}

TEST_F(StoreIndexTest, PinsAreReferenceCountedAndReleasedByTheirSet) {
  {
    BlobPins first(index);
    first.add(digest('a'));
    {
      BlobPins second(index);
      second.add(digest('a'));
    }
    EXPECT_TRUE(index.isPinned(hashOf('a'))) << "one holder is left";
    BlobPins moved(std::move(first));
    EXPECT_TRUE(index.isPinned(hashOf('a')));
  }
  EXPECT_FALSE(index.isPinned(hashOf('a')));
  evictTo(0);
  EXPECT_EQ(index.stats().blobCount, 0);
}

TEST_F(StoreIndexTest, ABlobCanBePinnedBeforeItIsWritten) {
  BlobPins pins(index);
  pins.add(digest('e'));
  index.add(hashOf('e'), 10);
  evictTo(0);
  EXPECT_EQ(index.lruOrder(), std::vector<std::string>{hashOf('e')});
}

TEST_F(StoreIndexTest, ReAddingABlobDoesNotCountItTwice) {
  index.add(hashOf('a'), 10);
  EXPECT_EQ(index.stats().blobCount, 4);
  EXPECT_EQ(index.stats().blobBytes, 40);
  index.remove(hashOf('a'));
  EXPECT_EQ(index.stats().blobBytes, 30);
}

TEST_F(StoreIndexTest, HoldsAnswersFromTheIndexWithTheSize) {
  EXPECT_TRUE(index.holds(hashOf('a'), 10));
  EXPECT_FALSE(index.holds(hashOf('a'), 11)); // another size is another blob
  EXPECT_FALSE(index.holds(hashOf('z'), 10));
  index.remove(hashOf('a'));
  EXPECT_FALSE(index.holds(hashOf('a'), 10));
}

} // namespace
} // namespace kiln::server
