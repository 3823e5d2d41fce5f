//===- RemoteCacheTest.cpp - the shared tier against a real bazel-remote --===//
//
// This file implements tests for RemoteCache and CompileCache's second tier,
// against bazel-remote v2.6.2 on loopback: blobs of both sizes round-trip,
// action entries round-trip, a tampered blob is DATA_LOSS, a dead remote
// costs one deadline per backoff, and two caches (two replicas) share
// executables through it.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/RemoteCache.h"
#include "kiln/server/store/CompileCache.h"

#include "BazelRemote.h"
#include "FakeCompiler.h"
#include "TestUtil.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

namespace kiln::server {
namespace {

using testing::BazelRemote;
using testing::FakeCompiler;
using testing::linearGraph;
using testing::TempDir;

std::string patterned(size_t size, char seed) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<char>(seed + i * 31 + (i >> 12));
  return bytes;
}

class RemoteCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    server = std::make_unique<BazelRemote>(temp.path() / "bazel-remote");
    ASSERT_TRUE(server->start());
  }

  std::unique_ptr<RemoteCache> connect(std::string url = "") {
    RemoteCacheOptions options;
    options.url = url.empty() ? server->url() : url;
    options.timeout = std::chrono::milliseconds(2000);
    options.minBackoff = std::chrono::milliseconds(300);
    absl::StatusOr<std::unique_ptr<RemoteCache>> remote = RemoteCache::connect(options);
    EXPECT_TRUE(remote.ok()) << remote.status();
    return remote.ok() ? std::move(*remote) : nullptr;
  }

  TempDir temp;
  std::unique_ptr<BazelRemote> server;
};

TEST_F(RemoteCacheTest, BlobsRoundTripInBatchesAndOverByteStream) {
  auto remote = connect();
  std::string small = patterned(1000, 'a');
  std::string large = patterned(9 << 20, 'b'); // over the batch limit
  v1::Digest smallDigest = digestOf(small), largeDigest = digestOf(large);
  ASSERT_TRUE(remote->writeBlobs({{smallDigest, small}, {largeDigest, large}}).ok());
  EXPECT_EQ(remote->stats().bytesWritten, small.size() + large.size());
  // Idempotent: the remote has both, so nothing moves again.
  ASSERT_TRUE(remote->writeBlobs({{smallDigest, small}, {largeDigest, large}}).ok());
  EXPECT_EQ(remote->stats().bytesWritten, small.size() + large.size());

  absl::StatusOr<std::string> readSmall = remote->readBlob(smallDigest);
  absl::StatusOr<std::string> readLarge = remote->readBlob(largeDigest);
  ASSERT_TRUE(readSmall.ok()) << readSmall.status();
  ASSERT_TRUE(readLarge.ok()) << readLarge.status();
  EXPECT_EQ(*readSmall, small);
  EXPECT_EQ(*readLarge, large);
  EXPECT_TRUE(absl::IsNotFound(remote->readBlob(digestOf("never written")).status()));
  EXPECT_TRUE(remote->up());
}

TEST_F(RemoteCacheTest, ActionEntriesRoundTrip) {
  auto remote = connect();
  std::string key(64, 'c');
  absl::StatusOr<std::optional<RemoteOutputs>> miss = remote->getAction(key);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->has_value());

  std::string record = "record bytes", artifact = patterned(5 << 20, 'z');
  RemoteOutputs outputs = {{"kiln/executable_record", digestOf(record)},
                           {"kiln/artifact", digestOf(artifact)}};
  ASSERT_TRUE(remote->writeBlobs({{digestOf(record), record},
                                  {digestOf(artifact), artifact}}).ok());
  ASSERT_TRUE(remote->putAction(key, outputs).ok());
  absl::StatusOr<std::optional<RemoteOutputs>> hit = remote->getAction(key);
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  ASSERT_EQ((*hit)->size(), outputs.size());
  for (const auto &[name, digest] : outputs) {
    ASSERT_TRUE((*hit)->contains(name)) << name;
    EXPECT_EQ((*hit)->at(name).hash(), digest.hash());
    EXPECT_EQ((*hit)->at(name).size_bytes(), digest.size_bytes());
  }
  // Another key is another action.
  absl::StatusOr<std::optional<RemoteOutputs>> other =
      remote->getAction(std::string(64, 'd'));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  EXPECT_NE(remoteActionHash(key), remoteActionHash(std::string(64, 'd')));
}

TEST_F(RemoteCacheTest, TamperedBlobIsDataLoss) {
  auto remote = connect();
  std::string blob = patterned(4096, 't');
  v1::Digest digest = digestOf(blob);
  ASSERT_TRUE(remote->writeBlobs({{digest, blob}}).ok());
  ASSERT_TRUE(server->tamper(digest.hash(), 100));
  absl::StatusOr<std::string> read = remote->readBlob(digest);
  EXPECT_TRUE(absl::IsDataLoss(read.status())) << read.status();
  EXPECT_EQ(remote->stats().corruptBlobs, 1u);
  // Wrong bytes are not an outage.
  EXPECT_TRUE(remote->up());
}

TEST_F(RemoteCacheTest, DeadRemoteBacksOffInsteadOfWaitingEveryCall) {
  auto remote = connect();
  server->stop();
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(remote->getAction(std::string(64, 'e')).ok());
  EXPECT_FALSE(remote->up());
  // Within the backoff no call is made: the answer is immediate.
  auto again = std::chrono::steady_clock::now();
  absl::StatusOr<std::optional<RemoteOutputs>> skipped =
      remote->getAction(std::string(64, 'e'));
  EXPECT_TRUE(absl::IsUnavailable(skipped.status())) << skipped.status();
  EXPECT_LT(std::chrono::steady_clock::now() - again, std::chrono::milliseconds(50));
  EXPECT_LT(again - start, std::chrono::milliseconds(2500));
  // Back up: after the backoff the next call goes through again.
  ASSERT_TRUE(server->start());
  EXPECT_TRUE(testing::eventually(
      [&] { return remote->getAction(std::string(64, 'e')).ok(); },
      std::chrono::seconds(10)));
  EXPECT_TRUE(remote->up());
}

TEST(RemoteHealthTest, OneProbePerBackoffWhileDown) {
  RemoteHealth health(std::chrono::milliseconds(50), std::chrono::milliseconds(400));
  EXPECT_TRUE(health.tryCall());
  health.failed(absl::UnavailableError("gone"));
  EXPECT_FALSE(health.up());
  EXPECT_FALSE(health.tryCall());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_TRUE(health.mayCall()); // a check, not a call
  EXPECT_TRUE(health.tryCall()); // the probe
  EXPECT_FALSE(health.tryCall()); // everyone else waits for it
  health.succeeded();
  EXPECT_TRUE(health.up());
  EXPECT_TRUE(health.tryCall());
  EXPECT_TRUE(health.tryCall());
}

TEST(RemoteCacheOptionsTest, BadSettingsNameTheFlag) {
  auto refused = [](RemoteCacheOptions options) {
    absl::StatusOr<std::unique_ptr<RemoteCache>> remote = RemoteCache::connect(options);
    EXPECT_TRUE(absl::IsInvalidArgument(remote.status())) << remote.status();
    return std::string(remote.status().message());
  };
  RemoteCacheOptions options;
  options.url = "http://127.0.0.1:9092";
  EXPECT_NE(refused(options).find("--remote-cache"), std::string::npos);
  options.url = "grpc://";
  EXPECT_NE(refused(options).find("HOST:PORT"), std::string::npos);
  options.url = "grpc://127.0.0.1:9092";
  options.tlsCa = "/nonexistent/ca.pem";
  EXPECT_NE(refused(options).find("grpcs://"), std::string::npos);
  options.url = "grpcs://127.0.0.1:9092";
  EXPECT_NE(refused(options).find("--remote-tls-ca"), std::string::npos);
  options.tlsCa.clear();
  options.tlsCert = "/nonexistent/cert.pem";
  EXPECT_NE(refused(options).find("--remote-tls-key"), std::string::npos);
}

/// One kilnd replica's tiers: its own store, namespace and action cache, and
/// a client of the shared remote.
struct Replica {
  Replica(const std::filesystem::path &root, FakeCompiler &compiler,
          std::unique_ptr<RemoteCache> remote)
      : remote(std::move(remote)) {
    store = *ContentStore::open(root / "cas");
    executables = *ExecutableNamespace::open(root / "executables");
    cache = *CompileCache::open(*store, *executables, root / "ac",
                                compiler.function(), "b1", 2);
    cache->setRemote(this->remote.get());
  }
  absl::StatusOr<CompileOutcome> compile(const v1::Graph &graph) {
    return cache->compile(graph, "cpu", v1::CompileOptions());
  }
  std::unique_ptr<RemoteCache> remote;
  std::unique_ptr<ContentStore> store;
  std::unique_ptr<ExecutableNamespace> executables;
  std::unique_ptr<CompileCache> cache;
};

TEST_F(RemoteCacheTest, AReplicaHitsWhatAnotherCompiled) {
  FakeCompiler compilerA, compilerB;
  Replica a(temp.path() / "a", compilerA, connect());
  Replica b(temp.path() / "b", compilerB, connect());
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));

  absl::StatusOr<CompileOutcome> compiled = a.compile(graph);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(compiled->cacheHit);
  absl::StatusOr<CompileOutcome> fetched = b.compile(graph);
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_TRUE(fetched->cacheHit);
  EXPECT_TRUE(fetched->remoteHit);
  EXPECT_EQ(compilerB.calls.load(), 0);
  EXPECT_EQ(fetched->executable.hash(), compiled->executable.hash());
  EXPECT_EQ(b.cache->stats().remoteHits, 1u);
  // B now holds it locally: the next hit is local and the remote is not read.
  uint64_t readBefore = b.remote->stats().bytesRead;
  absl::StatusOr<CompileOutcome> local = b.compile(graph);
  ASSERT_TRUE(local.ok());
  EXPECT_TRUE(local->cacheHit);
  EXPECT_FALSE(local->remoteHit);
  EXPECT_EQ(b.remote->stats().bytesRead, readBefore);
  absl::StatusOr<v1::ExecutableRecord> record =
      readExecutableRecord(*b.store, fetched->executable);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(*b.store->read(record->artifact()),
            *a.store->read(record->artifact()));
}

TEST_F(RemoteCacheTest, ATamperedRemoteEntryIsCompiledLocallyNeverServed) {
  FakeCompiler compilerA, compilerB;
  Replica a(temp.path() / "a", compilerA, connect());
  Replica b(temp.path() / "b", compilerB, connect());
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  absl::StatusOr<CompileOutcome> compiled = a.compile(graph);
  ASSERT_TRUE(compiled.ok());
  v1::ExecutableRecord record = *readExecutableRecord(*a.store, compiled->executable);
  ASSERT_TRUE(server->tamper(record.artifact().hash(), 0));
  absl::StatusOr<CompileOutcome> onB = b.compile(graph);
  ASSERT_TRUE(onB.ok()) << onB.status();
  EXPECT_FALSE(onB->cacheHit);
  EXPECT_FALSE(onB->remoteHit);
  EXPECT_EQ(compilerB.calls.load(), 1);
  EXPECT_GE(b.remote->stats().corruptBlobs, 1u);
  // What B serves is its own intact compile.
  v1::ExecutableRecord mine = *readExecutableRecord(*b.store, onB->executable);
  EXPECT_TRUE(b.store->verify(mine.artifact()).ok());
}

TEST_F(RemoteCacheTest, RemoteDownServesTheLocalTierAndWritesResumeLater) {
  FakeCompiler compilerA, compilerB;
  Replica a(temp.path() / "a", compilerA, connect());
  Replica b(temp.path() / "b", compilerB, connect());
  v1::Graph first = linearGraph(2, 16, 4, digestOf("w"));
  v1::Graph second = linearGraph(4, 16, 4, digestOf("w"));
  ASSERT_TRUE(a.compile(first).ok());
  server->stop();
  // Compiles and hits keep working with the remote gone.
  absl::StatusOr<CompileOutcome> hit = a.compile(first);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_TRUE(hit->cacheHit);
  absl::StatusOr<CompileOutcome> offline = a.compile(second);
  ASSERT_TRUE(offline.ok()) << offline.status();
  EXPECT_FALSE(offline->cacheHit);
  EXPECT_FALSE(a.remote->up());
  // The remote comes back (its disk kept): the entry compiled while it was
  // down reaches it on A's next use, and B then hits it.
  ASSERT_TRUE(server->start());
  ASSERT_TRUE(testing::eventually(
      [&] {
        (void)a.compile(second);
        return a.remote->up() && a.remote->stats().actionsWritten >= 2;
      },
      std::chrono::seconds(10)));
  absl::StatusOr<CompileOutcome> onB = b.compile(second);
  ASSERT_TRUE(onB.ok()) << onB.status();
  EXPECT_TRUE(onB->remoteHit);
  EXPECT_EQ(compilerB.calls.load(), 0);
}

TEST_F(RemoteCacheTest, TheSecondReplicaAdoptsTheFirstStoredExecutable) {
  // A compiler whose output differs run to run: the race that matters.
  FakeCompiler compilerA, compilerB;
  compilerA.nondeterministic = compilerB.nondeterministic = true;
  compilerB.calls = 100; // B's artifacts differ from A's
  Replica a(temp.path() / "a", compilerA, connect());
  Replica b(temp.path() / "b", compilerB, connect());
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  // B misses everywhere and starts compiling; A compiles and stores first.
  compilerB.closeGate();
  absl::StatusOr<CompileOutcome> onB;
  std::thread replicaB([&] { onB = b.compile(graph); });
  ASSERT_TRUE(testing::eventually([&] { return compilerB.calls.load() == 101; }));
  // B's lease lapses (as when a compile outlives it), so A compiles too.
  ASSERT_TRUE(connect()
                  ->putLease(b.cache->keyFor(graph, "cpu", {}),
                             {"lapsed", std::chrono::system_clock::now()})
                  .ok());
  absl::StatusOr<CompileOutcome> onA = a.compile(graph);
  ASSERT_TRUE(onA.ok()) << onA.status();
  compilerB.openGate();
  replicaB.join();
  ASSERT_TRUE(onB.ok()) << onB.status();
  EXPECT_FALSE(onB->cacheHit); // B did compile...
  EXPECT_EQ(onB->executable.hash(), onA->executable.hash()); // ...but serves A's
  // and its own entry names A's executable from now on.
  std::optional<CompileOutcome> entry = b.cache->lookup(onB->key);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->executable.hash(), onA->executable.hash());
}

TEST_F(RemoteCacheTest, AReplicaWaitsForTheLeaseHolderInsteadOfCompiling) {
  FakeCompiler compilerA, compilerB;
  Replica a(temp.path() / "a", compilerA, connect());
  Replica b(temp.path() / "b", compilerB, connect());
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  compilerA.closeGate();
  absl::StatusOr<CompileOutcome> onA, onB;
  std::thread replicaA([&] { onA = a.compile(graph); });
  ASSERT_TRUE(testing::eventually([&] { return compilerA.calls.load() == 1; }));
  // A holds the lease and compiles; B waits for A's entry instead.
  std::thread replicaB([&] { onB = b.compile(graph); });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(compilerB.calls.load(), 0);
  compilerA.openGate();
  replicaA.join();
  replicaB.join();
  ASSERT_TRUE(onA.ok()) << onA.status();
  ASSERT_TRUE(onB.ok()) << onB.status();
  EXPECT_EQ(compilerB.calls.load(), 0);
  EXPECT_TRUE(onB->remoteHit);
  EXPECT_EQ(onB->executable.hash(), onA->executable.hash());
}

TEST_F(RemoteCacheTest, AFailedCompileReleasesTheLeaseAtOnce) {
  FakeCompiler compilerA, compilerB;
  compilerA.failWith = absl::UnimplementedError("aten.frobnicate");
  compilerB.failWith = absl::UnimplementedError("aten.frobnicate");
  Replica a(temp.path() / "a", compilerA, connect());
  Replica b(temp.path() / "b", compilerB, connect());
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  compilerA.closeGate();
  absl::StatusOr<CompileOutcome> onA, onB;
  std::thread replicaA([&] { onA = a.compile(graph); });
  ASSERT_TRUE(testing::eventually([&] { return compilerA.calls.load() == 1; }));
  auto start = std::chrono::steady_clock::now();
  std::thread replicaB([&] { onB = b.compile(graph); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  compilerA.openGate();
  replicaA.join();
  replicaB.join();
  EXPECT_TRUE(absl::IsUnimplemented(onA.status())) << onA.status();
  // B did not sit out the lease's five minutes: it compiled (and failed) itself.
  EXPECT_TRUE(absl::IsUnimplemented(onB.status())) << onB.status();
  EXPECT_EQ(compilerB.calls.load(), 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(RemoteCacheTest, StageDumpsTravelWithTheExecutable) {
  FakeCompiler compilerA, compilerB, compilerC;
  Replica a(temp.path() / "a", compilerA, connect());
  Replica b(temp.path() / "b", compilerB, connect());
  Replica c(temp.path() / "c", compilerC, connect());
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  v1::CompileOptions dump;
  dump.set_dump_stages(true);

  // A compiles without dumps; B asks for them: B records them (one pipeline
  // run) and shares them.
  ASSERT_TRUE(a.compile(graph).ok());
  absl::StatusOr<CompileOutcome> onB = b.cache->compile(graph, "cpu", dump);
  ASSERT_TRUE(onB.ok()) << onB.status();
  EXPECT_EQ(compilerB.calls.load(), 1);
  ASSERT_EQ(onB->stages.size(), 2u);

  // C gets executable and dumps from the shared tier, running nothing.
  absl::StatusOr<CompileOutcome> onC = c.cache->compile(graph, "cpu", dump);
  ASSERT_TRUE(onC.ok()) << onC.status();
  EXPECT_EQ(compilerC.calls.load(), 0);
  EXPECT_TRUE(onC->remoteHit);
  ASSERT_EQ(onC->stages.size(), 2u);
  EXPECT_EQ(onC->stages[0].stage(), "aten");
  EXPECT_EQ(*c.store->read(onC->stages[1].blob()), "asm of linear");
}

} // namespace
} // namespace kiln::server
