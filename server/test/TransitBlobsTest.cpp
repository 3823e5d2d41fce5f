//===- TransitBlobsTest.cpp - in-transit blobs held in memory -------------===//
//
// This file implements tests for TransitBlobs and the content store's use of
// it: in-transit uploads and output files stay in sealed memfds (nothing on
// disk), every read serves them, an output read by its clients and an input
// its Execute ran with go first, pinned blobs never go, uploads still
// arriving count, and disk takes what memory cannot.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "kiln/common/Digest.h"
#include "kiln/common/SealedFile.h"
#include "kiln/common/Status.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::server {
namespace {

/// `bytes` in a sealed memfd, as an agent passes an output.
UniqueFd sealedFile(std::string_view bytes) {
  UniqueFd fd(::memfd_create("test-output", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_EQ(::write(fd.get(), bytes.data(), bytes.size()),
            static_cast<ssize_t>(bytes.size()));
  EXPECT_TRUE(sealTensorFile(fd.get()).ok());
  return fd;
}

/// The whole content of `fd`, read from offset 0.
std::string contentOf(int fd) {
  std::string bytes(4096, '\0');
  ssize_t got = ::pread(fd, bytes.data(), bytes.size(), 0);
  bytes.resize(got < 0 ? 0 : static_cast<size_t>(got));
  return bytes;
}

class TransitStoreTest : public ::testing::Test {
protected:
  /// A store holding at most `budget` bytes of in-transit blobs in memory.
  void open(int64_t budget) {
    absl::StatusOr<std::unique_ptr<ContentStore>> opened =
        ContentStore::open(temp.path() / "cas", 0, budget);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store = std::move(*opened);
  }
  void SetUp() override { open(64); }

  /// Uploads `bytes` as Blobs.Write does, with `durability`.
  absl::Status upload(std::string_view bytes, Durability durability) {
    ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer,
                     store->beginWrite(digestOf(bytes), durability));
    for (size_t at = 0; at < bytes.size(); at += 7)
      RETURN_IF_ERROR(writer->append(bytes.substr(at, 7)));
    return writer->commit();
  }
  bool onDisk(std::string_view bytes) {
    return std::filesystem::exists(store->blobPath(digestOf(bytes).hash()));
  }
  std::string streamed(const v1::Digest &digest, absl::Status *status) {
    std::string got;
    *status = store->stream(digest, [&](std::string_view chunk) {
      got.append(chunk);
      return absl::OkStatus();
    });
    return got;
  }

  testing::TempDir temp;
  std::unique_ptr<ContentStore> store;
};

TEST_F(TransitStoreTest, InTransitUploadsStayInMemoryAndEveryReadServesThem) {
  const std::string input = "an Execute input of 32 bytes....";
  ASSERT_TRUE(upload(input, Durability::kInTransit).ok());
  v1::Digest digest = digestOf(input);
  EXPECT_FALSE(onDisk(input));
  EXPECT_TRUE(store->contains(digest));
  // The index lists blobs on disk: parameters are checked with keep().
  EXPECT_FALSE(store->indexed(digest));
  EXPECT_TRUE(store->findMissing({digest}).empty());
  EXPECT_TRUE(store->verify(digest).ok());
  absl::StatusOr<std::string> read = store->read(digest);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, input);
  absl::Status status;
  EXPECT_EQ(streamed(digest, &status), input);
  EXPECT_TRUE(status.ok()) << status;
  // The local link hands the agent this file: sealed, with the bytes.
  absl::StatusOr<UniqueFd> file = store->openBlob(digest);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(checkSealedTensorFile(file->get(), 32).ok());
  EXPECT_EQ(contentOf(file->get()), input);
  EXPECT_EQ(store->transitStats().bytes, 32);
  // A digest naming another size is not this blob.
  v1::Digest wrongSize = digest;
  wrongSize.set_size_bytes(31);
  EXPECT_FALSE(store->contains(wrongSize));
  EXPECT_EQ(store->openBlob(wrongSize).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(TransitStoreTest, DurableBlobsStillGoToDisk) {
  ASSERT_TRUE(upload("weights", Durability::kDurable).ok());
  EXPECT_TRUE(onDisk("weights"));
  EXPECT_EQ(store->transitStats().blobs, 0);
}

TEST_F(TransitStoreTest, AnUploadThatIsNotItsDigestIsRefusedAndNotHeld) {
  const std::string bytes = "sixteen bytes...";
  v1::Digest claimed = digestOf("sixteen bytes!!!");
  absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
      store->beginWrite(claimed, Durability::kInTransit);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->append(bytes).ok());
  EXPECT_EQ((*writer)->commit().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(store->contains(claimed));
  EXPECT_FALSE(store->contains(digestOf(bytes)));
  // Past the declared size: refused as it arrives.
  writer = store->beginWrite(digestOf("short"), Durability::kInTransit);
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ((*writer)->append("longer than short").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->transitStats().blobs, 0);
}

TEST_F(TransitStoreTest, OutputFilesAreKeptWithoutACopyOrADiskWrite) {
  const std::string output = "an agent's output";
  UniqueFd file = sealedFile(output);
  absl::StatusOr<v1::Digest> digest =
      store->putFile(file.get(), static_cast<int64_t>(output.size()),
                     Durability::kInTransit);
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(digest->hash(), digestOf(output).hash());
  EXPECT_FALSE(onDisk(output));
  absl::StatusOr<std::string> read = store->read(*digest);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, output);
  // The very file: the same inode, not a copy of its bytes.
  absl::StatusOr<UniqueFd> held = store->openBlob(*digest);
  ASSERT_TRUE(held.ok());
  struct stat a {}, b {};
  ASSERT_EQ(::fstat(file.get(), &a), 0);
  ASSERT_EQ(::fstat(held->get(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  // An unsealed file is refused (its sender could change it).
  UniqueFd open(::memfd_create("unsealed", MFD_CLOEXEC));
  ASSERT_EQ(::write(open.get(), "abcd", 4), 4);
  EXPECT_FALSE(store->putFile(open.get(), 4, Durability::kInTransit).ok());
}

TEST_F(TransitStoreTest, ADeliveredOutputGoesNowhereAndUnreadBlobsSpillToDisk) {
  // Budget 64: four blobs of 16.
  const std::string a(16, 'a'), b(16, 'b'), c(16, 'c'), d(16, 'd'), e(16, 'e');
  for (const std::string *blob : {&a, &b, &c, &d})
    ASSERT_TRUE(upload(*blob, Durability::kInTransit).ok());
  EXPECT_EQ(store->transitStats().bytes, 64);
  // b, an output, is read out in full by its client: it goes, and nowhere
  // (its reader has it).
  store->handOut(digestOf(b));
  store->readOut(digestOf(b));
  ASSERT_TRUE(upload(e, Durability::kInTransit).ok());
  EXPECT_FALSE(store->contains(digestOf(b)));
  EXPECT_FALSE(onDisk(b));
  EXPECT_TRUE(store->contains(digestOf(a)) && !onDisk(a));
  // Nothing else read out: the least recently used goes to disk, and a,
  // touched, is not it; c is, and stays readable.
  store->markUsed(digestOf(a));
  ASSERT_TRUE(upload(b, Durability::kInTransit).ok());
  EXPECT_TRUE(onDisk(c));
  absl::StatusOr<std::string> read = store->read(digestOf(c));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, c);
  EXPECT_FALSE(onDisk(a) || onDisk(d) || onDisk(b));
  TransitBlobs::Stats stats = store->transitStats();
  EXPECT_EQ(stats.blobs, 4);
  EXPECT_EQ(stats.dropped, 1);
  EXPECT_EQ(stats.spilled, 1);
}

TEST_F(TransitStoreTest, ADeliveredOutputGoesAtOnceUnlessPinnedThenFirstForRoom) {
  const std::string output(32, 'o'), other(16, 'p'), next(32, 'n');
  ASSERT_TRUE(upload(output, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(other, Durability::kInTransit).ok());
  store->handOut(digestOf(output));
  {
    // Read out while an Execute still reads it: it stays.
    BlobPins pins = store->pin({digestOf(output)});
    store->readOut(digestOf(output));
    EXPECT_TRUE(store->contains(digestOf(output)));
  }
  // Delivered: the first to go when room is needed, ahead of the older
  // `other`, and nowhere.
  ASSERT_TRUE(upload(next, Durability::kInTransit).ok());
  EXPECT_FALSE(store->contains(digestOf(output)));
  EXPECT_FALSE(onDisk(output) || onDisk(other) || onDisk(next));
  EXPECT_TRUE(store->contains(digestOf(other)));
  EXPECT_EQ(store->transitStats().dropped, 1);
  EXPECT_EQ(store->transitStats().spilled, 0);
  // Unpinned, a delivered output's pages go back at once.
  store->handOut(digestOf(next));
  store->readOut(digestOf(next));
  EXPECT_FALSE(store->contains(digestOf(next)));
  EXPECT_EQ(store->transitStats().bytes, 16);
  EXPECT_EQ(store->transitStats().dropped, 2);
}

TEST_F(TransitStoreTest, ReadsOfABlobNeverHandedOutDoNotDropIt) {
  // An input a remote agent fetches (Blobs.Read) stays for the next call
  // that sends it by digest.
  ASSERT_TRUE(upload("an input", Durability::kInTransit).ok());
  store->readOut(digestOf("an input"));
  store->readOut(digestOf("an input"));
  EXPECT_TRUE(store->contains(digestOf("an input")));
  EXPECT_EQ(store->transitStats().dropped, 0);
}

TEST_F(TransitStoreTest, AnOutputHandedToTwoClientsStaysUntilBothReadIt) {
  // Two calls with the same result: one client's read leaves the other's.
  ASSERT_TRUE(upload("the same output", Durability::kInTransit).ok());
  store->handOut(digestOf("the same output"));
  store->handOut(digestOf("the same output"));
  store->readOut(digestOf("the same output"));
  absl::StatusOr<std::string> second = store->read(digestOf("the same output"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, "the same output");
  store->readOut(digestOf("the same output"));
  EXPECT_FALSE(store->contains(digestOf("the same output")));
}

TEST_F(TransitStoreTest, AnOutputSentAgainAsAnInputIsSpilledNotDropped) {
  const std::string blob(32, 'b'), other(32, 'c'), next(32, 'n');
  ASSERT_TRUE(upload(blob, Durability::kInTransit).ok());
  store->handOut(digestOf(blob));
  {
    BlobPins pins = store->pin({digestOf(blob)});
    store->readOut(digestOf(blob)); // delivered, kept while pinned
  }
  // Its client sends the same bytes back as an input: published again, it
  // waits for its readers anew, so room spills it rather than dropping it.
  ASSERT_TRUE(upload(blob, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(other, Durability::kInTransit).ok());
  store->markUsed(digestOf(other));
  ASSERT_TRUE(upload(next, Durability::kInTransit).ok());
  EXPECT_TRUE(onDisk(blob));
  EXPECT_TRUE(store->contains(digestOf(blob)));
  EXPECT_EQ(store->transitStats().dropped, 0);
  EXPECT_EQ(store->transitStats().spilled, 1);
}

TEST_F(TransitStoreTest, AnInputAnExecuteRanWithIsDroppedForRoomNotSpilled) {
  // Budget 64: a consumed input (its Execute has run) stays for a client
  // sending it again by digest, and is the first to go when room is needed,
  // ahead of an older blob nobody has used yet, and goes nowhere.
  const std::string unused(32, 'u'), input(32, 'i'), next(32, 'n');
  ASSERT_TRUE(upload(unused, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(input, Durability::kInTransit).ok());
  store->consumed(digestOf(input));
  EXPECT_TRUE(store->contains(digestOf(input)));
  ASSERT_TRUE(upload(next, Durability::kInTransit).ok());
  EXPECT_FALSE(store->contains(digestOf(input)));
  EXPECT_FALSE(onDisk(input) || onDisk(unused) || onDisk(next));
  EXPECT_TRUE(store->contains(digestOf(unused)));
  EXPECT_EQ(store->transitStats().dropped, 1);
  EXPECT_EQ(store->transitStats().spilled, 0);
}

TEST_F(TransitStoreTest, AnInputStillOwedToAClientOrUploadedAgainIsNotSpent) {
  // An output handed to a client and chained into the next call as an
  // input: that call's end does not spend it, its client's read does.
  const std::string chained(32, 'c'), resent(16, 'r'), other(16, 'o'), next(16, 'n');
  ASSERT_TRUE(upload(chained, Durability::kInTransit).ok());
  store->handOut(digestOf(chained));
  store->consumed(digestOf(chained));
  // An input consumed, then uploaded again for a new call: not spent.
  ASSERT_TRUE(upload(resent, Durability::kInTransit).ok());
  store->consumed(digestOf(resent));
  ASSERT_TRUE(upload(resent, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(other, Durability::kInTransit).ok());
  // Neither is dropped: the least recently used, the chained output, is
  // spilled.
  ASSERT_TRUE(upload(next, Durability::kInTransit).ok());
  EXPECT_TRUE(onDisk(chained));
  EXPECT_TRUE(store->contains(digestOf(resent)) && !onDisk(resent));
  EXPECT_EQ(store->transitStats().dropped, 0);
  EXPECT_EQ(store->transitStats().spilled, 1);
}

TEST_F(TransitStoreTest, UploadingAHeldBlobAgainMakesNoRoom) {
  // An input sent once more: nothing else leaves memory for it.
  const std::string a(32, 'a'), b(32, 'b');
  ASSERT_TRUE(upload(a, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(b, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(a, Durability::kInTransit).ok());
  EXPECT_FALSE(onDisk(a) || onDisk(b));
  EXPECT_EQ(store->transitStats().spilled, 0);
  EXPECT_EQ(store->transitStats().bytes, 64);
}

TEST_F(TransitStoreTest, AnOutputProducedAgainWaitsForItsReadersAnew) {
  // A call's output equals one already delivered (kept, pinned, when its
  // client read it): stored again, it is not taken as delivered, so room
  // spills it rather than dropping it before its new client reads it.
  const std::string output(32, 'o'), other(32, 'p'), next(32, 'n');
  UniqueFd first = sealedFile(output);
  ASSERT_TRUE(store->putFile(first.get(), 32, Durability::kInTransit).ok());
  store->handOut(digestOf(output));
  {
    BlobPins pins = store->pin({digestOf(output)});
    store->readOut(digestOf(output));
  }
  UniqueFd again = sealedFile(output);
  ASSERT_TRUE(store->putFile(again.get(), 32, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(other, Durability::kInTransit).ok());
  store->markUsed(digestOf(other));
  ASSERT_TRUE(upload(next, Durability::kInTransit).ok());
  EXPECT_TRUE(onDisk(output));
  EXPECT_EQ(store->transitStats().dropped, 0);
  EXPECT_EQ(store->transitStats().spilled, 1);
}

TEST_F(TransitStoreTest, UploadsStillArrivingCountInTheBudget) {
  const std::string arriving(48, 'a'), small(32, 's'), later(32, 'l');
  absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
      store->beginWrite(digestOf(arriving), Durability::kInTransit);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->append(arriving.substr(0, 10)).ok());
  // 48 of the 64 bytes are spoken for: this one goes to disk.
  ASSERT_TRUE(upload(small, Durability::kInTransit).ok());
  EXPECT_TRUE(onDisk(small));
  ASSERT_TRUE((*writer)->append(arriving.substr(10)).ok());
  ASSERT_TRUE((*writer)->commit().ok());
  EXPECT_TRUE(store->contains(digestOf(arriving)) && !onDisk(arriving));
  EXPECT_EQ(store->transitStats().bytes, 48);
  // An upload abandoned half way gives its room back: with `arriving`
  // still held, 16 more bytes fit only if its 16 came back.
  {
    absl::StatusOr<std::unique_ptr<BlobWriter>> abandoned =
        store->beginWrite(digestOf(std::string(16, 'x')), Durability::kInTransit);
    ASSERT_TRUE(abandoned.ok());
  }
  const std::string sixteen(16, 'y');
  ASSERT_TRUE(upload(sixteen, Durability::kInTransit).ok());
  EXPECT_FALSE(onDisk(sixteen));
  EXPECT_FALSE(onDisk(arriving));
  EXPECT_EQ(store->transitStats().bytes, 64);
  store->handOut(digestOf(sixteen));
  store->readOut(digestOf(sixteen));
  store->handOut(digestOf(arriving));
  store->readOut(digestOf(arriving));
  ASSERT_TRUE(upload(later, Durability::kInTransit).ok());
  EXPECT_FALSE(onDisk(later));
  EXPECT_EQ(store->transitStats().bytes, 32);
}

TEST_F(TransitStoreTest, KeepWritesABlobHeldOnlyInMemoryToDisk) {
  // A parameter whose bytes equal an in-transit input (FindMissing said
  // present): Compile keeps it, so room cannot take it from memory alone.
  ASSERT_TRUE(upload("weights", Durability::kInTransit).ok());
  EXPECT_FALSE(store->indexed(digestOf("weights")));
  EXPECT_TRUE(store->keep(digestOf("weights")));
  EXPECT_TRUE(onDisk("weights"));
  EXPECT_TRUE(store->indexed(digestOf("weights")));
  EXPECT_FALSE(store->keep(digestOf("never uploaded")));
}

TEST(TransitSpillTest, ASpilledBlobOutlivesTheDiskEvictionItsOwnWriteCauses) {
  // A disk store capped below one blob: committing the spilled copy evicts
  // down to the cap, and must not take the blob being spilled.
  testing::TempDir temp;
  absl::StatusOr<std::unique_ptr<ContentStore>> store =
      ContentStore::open(temp.path() / "cas", 8, 32);
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string a(16, 'a'), b(16, 'b'), c(16, 'c');
  for (const std::string *blob : {&a, &b, &c}) {
    absl::StatusOr<std::unique_ptr<BlobWriter>> writer =
        (*store)->beginWrite(digestOf(*blob), Durability::kInTransit);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->append(*blob).ok());
    ASSERT_TRUE((*writer)->commit().ok());
  }
  // c's room spilled a, the least recently used.
  EXPECT_EQ((*store)->transitStats().spilled, 1);
  absl::StatusOr<std::string> read = (*store)->read(digestOf(a));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, a);
}

TEST_F(TransitStoreTest, ADurablePutOfABlobHeldInMemoryWritesItToDisk) {
  // Weights that happen to equal an in-transit input must not live only in
  // memory, where room can take them.
  ASSERT_TRUE(upload("same bytes", Durability::kInTransit).ok());
  EXPECT_FALSE(onDisk("same bytes"));
  absl::StatusOr<v1::Digest> digest = store->put("same bytes", Durability::kDurable);
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_TRUE(onDisk("same bytes"));
}

TEST_F(TransitStoreTest, PinnedBlobsStayAndDiskTakesWhatMemoryCannot) {
  const std::string a(32, 'a'), b(32, 'b'), c(32, 'c');
  ASSERT_TRUE(upload(a, Durability::kInTransit).ok());
  ASSERT_TRUE(upload(b, Durability::kInTransit).ok());
  BlobPins pins = store->pin({digestOf(a), digestOf(b)});
  store->handOut(digestOf(a));
  store->readOut(digestOf(a));
  ASSERT_TRUE(upload(c, Durability::kInTransit).ok());
  // Nothing pinned went; c is on disk, in the store all the same.
  EXPECT_TRUE(store->contains(digestOf(a)));
  EXPECT_TRUE(store->contains(digestOf(b)));
  EXPECT_TRUE(onDisk(c));
  absl::StatusOr<std::string> read = store->read(digestOf(c));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, c);
  EXPECT_EQ(store->transitStats().dropped, 0);
  // Larger than the whole budget: disk, without dropping anything.
  std::string big(65, 'x');
  UniqueFd file = sealedFile(big);
  ASSERT_TRUE(store->putFile(file.get(), 65, Durability::kInTransit).ok());
  EXPECT_TRUE(onDisk(big));
  EXPECT_EQ(store->transitStats().blobs, 2);
}

TEST_F(TransitStoreTest, WithoutABudgetInTransitBlobsGoToDisk) {
  open(0);
  ASSERT_TRUE(upload("an input", Durability::kInTransit).ok());
  EXPECT_TRUE(onDisk("an input"));
  EXPECT_EQ(store->transitStats().blobs, 0);
}

} // namespace
} // namespace kiln::server
