//===- CompileCacheTest.cpp - single-flight, on-disk compile cache --------===//
//
// This file implements tests for CompileCache: identical concurrent compiles
// run once, entries survive a restart, and damaged entries are misses.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CompileCache.h"
#include "kiln/server/store/ExecutableNamespace.h"

#include "FakeCompiler.h"
#include "TestUtil.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

namespace kiln::server {
namespace {

using testing::FakeCompiler;
using testing::linearGraph;
using testing::TempDir;

class CompileCacheTest : public testing::StoreTest {
protected:
  std::unique_ptr<CompileCache> openCache(unsigned workers = 2,
                                          const std::string &build = "b1") {
    absl::StatusOr<std::unique_ptr<CompileCache>> cache = CompileCache::open(
        *store, executables(), temp.path() / "ac", fake.function(), build, workers);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return std::move(*cache);
  }

  absl::StatusOr<CompileOutcome> compile(CompileCache &cache,
                                         const v1::Graph &graph) {
    return cache.compile(graph, "cpu", v1::CompileOptions());
  }

  FakeCompiler fake;
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
};

TEST_F(CompileCacheTest, MissThenHit) {
  auto cache = openCache();
  absl::StatusOr<CompileOutcome> first = compile(*cache, graph);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cacheHit);
  EXPECT_EQ(first->manifest.inputs_size(), 1);
  EXPECT_EQ(first->manifest.compiler_build_id(), "b1");
  absl::StatusOr<CompileOutcome> second = compile(*cache, graph);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cacheHit);
  EXPECT_EQ(second->executable.hash(), first->executable.hash());
  EXPECT_EQ(second->key, first->key);
  EXPECT_EQ(fake.calls.load(), 1);
  // The executable is a record in the store that names a stored artifact.
  absl::StatusOr<v1::ExecutableRecord> record =
      readExecutableRecord(*store, first->executable);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_TRUE(store->verify(record->artifact()).ok());
}

absl::StatusOr<CompileOutcome> compileWithStages(CompileCache &cache,
                                                 const v1::Graph &graph) {
  v1::CompileOptions options;
  options.set_dump_stages(true);
  return cache.compile(graph, "cpu", options);
}

TEST_F(CompileCacheTest, StageDumpsDoNotChangeTheExecutable) {
  auto cache = openCache();
  absl::StatusOr<CompileOutcome> dumped = compileWithStages(*cache, graph);
  ASSERT_TRUE(dumped.ok()) << dumped.status();
  EXPECT_FALSE(dumped->cacheHit);
  ASSERT_EQ(dumped->stages.size(), 2u);
  EXPECT_EQ(dumped->stages[0].stage(), "aten");
  absl::StatusOr<std::string> text = store->read(dumped->stages[0].blob());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "module linear");
  // The same key, the same executable, without the dumps.
  absl::StatusOr<CompileOutcome> plain = compile(*cache, graph);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->cacheHit);
  EXPECT_EQ(plain->key, dumped->key);
  EXPECT_EQ(plain->executable.hash(), dumped->executable.hash());
  EXPECT_TRUE(plain->stages.empty());
  // Asking again reads the stored dumps back: no compiler run.
  absl::StatusOr<CompileOutcome> again = compileWithStages(*cache, graph);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cacheHit);
  ASSERT_EQ(again->stages.size(), 2u);
  EXPECT_EQ(again->stages[1].blob().hash(), dumped->stages[1].blob().hash());
  EXPECT_EQ(fake.calls.load(), 1);
  absl::StatusOr<v1::ExecutableRecord> record =
      readExecutableRecord(*store, dumped->executable);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->stages_size(), 0) << "dumps are not part of the record";
}

TEST_F(CompileCacheTest, DumpsOfACachedExecutableAreRecordedOnce) {
  auto cache = openCache();
  absl::StatusOr<CompileOutcome> plain = compile(*cache, graph);
  ASSERT_TRUE(plain.ok());
  absl::StatusOr<CompileOutcome> dumped = compileWithStages(*cache, graph);
  ASSERT_TRUE(dumped.ok()) << dumped.status();
  EXPECT_TRUE(dumped->cacheHit) << "no new executable";
  EXPECT_EQ(dumped->executable.hash(), plain->executable.hash());
  EXPECT_EQ(dumped->stages.size(), 2u);
  EXPECT_EQ(fake.calls.load(), 2);
  EXPECT_EQ(cache->stats().stageRuns, 1u);
  absl::StatusOr<CompileOutcome> again = compileWithStages(*cache, graph);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stages.size(), 2u);
  EXPECT_EQ(fake.calls.load(), 2);
  // The dumps survive a restart.
  cache.reset();
  cache = openCache();
  absl::StatusOr<CompileOutcome> reopened = compileWithStages(*cache, graph);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened->stages.size(), 2u);
  EXPECT_EQ(fake.calls.load(), 2);
  std::optional<v1::StageDumpSet> set =
      cache->lookupStages(plain->key, plain->executable);
  ASSERT_TRUE(set.has_value());
  EXPECT_TRUE(set->artifact_matches());
}

TEST_F(CompileCacheTest, DumpsFromANondeterministicRunSaySo) {
  fake.nondeterministic = true;
  auto cache = openCache();
  absl::StatusOr<CompileOutcome> plain = compile(*cache, graph);
  ASSERT_TRUE(plain.ok());
  absl::StatusOr<CompileOutcome> dumped = compileWithStages(*cache, graph);
  ASSERT_TRUE(dumped.ok());
  EXPECT_EQ(dumped->executable.hash(), plain->executable.hash());
  std::optional<v1::StageDumpSet> set =
      cache->lookupStages(plain->key, plain->executable);
  ASSERT_TRUE(set.has_value());
  EXPECT_FALSE(set->artifact_matches());
}

TEST_F(CompileCacheTest, NewWeightsReuseTheExecutable) {
  auto cache = openCache();
  ASSERT_TRUE(compile(*cache, graph).ok());
  absl::StatusOr<CompileOutcome> tuned =
      compile(*cache, linearGraph(2, 16, 4, digestOf("tuned")));
  ASSERT_TRUE(tuned.ok());
  EXPECT_TRUE(tuned->cacheHit);
  EXPECT_EQ(fake.calls.load(), 1);
}

TEST_F(CompileCacheTest, ConcurrentIdenticalCompilesRunOnce) {
  auto cache = openCache(/*workers=*/8);
  constexpr int kCallers = 8;
  fake.closeGate();
  std::vector<absl::StatusOr<CompileOutcome>> results(
      kCallers, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i)
    threads.emplace_back([&, i] { results[i] = compile(*cache, graph); });
  // Hold the leader's compile until every other caller has joined its flight.
  ASSERT_TRUE(testing::eventually([&] {
    return cache->stats().followers == kCallers - 1 && fake.calls.load() == 1;
  })) << "followers: " << cache->stats().followers;
  fake.openGate();
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(fake.calls.load(), 1);
  for (const auto &result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->executable.hash(), results[0]->executable.hash());
  }
}

TEST_F(CompileCacheTest, SurvivesRestart) {
  std::string executable;
  {
    auto cache = openCache();
    absl::StatusOr<CompileOutcome> first = compile(*cache, graph);
    ASSERT_TRUE(first.ok());
    executable = first->executable.hash();
  }
  auto restarted = openCache();
  absl::StatusOr<CompileOutcome> again = compile(*restarted, graph);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cacheHit);
  EXPECT_EQ(again->executable.hash(), executable);
  EXPECT_EQ(fake.calls.load(), 1);
}

TEST_F(CompileCacheTest, OpReportIsStoredWithTheExecutable) {
  std::string report;
  {
    auto cache = openCache();
    absl::StatusOr<CompileOutcome> first = compile(*cache, graph);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_EQ(first->opReport.layers_size(), graph.nodes_size());
    EXPECT_EQ(first->opReport.layers(0).op(), graph.nodes(0).op());
    report = first->opReport.SerializeAsString();
    absl::StatusOr<v1::ExecutableRecord> record =
        readExecutableRecord(*store, first->executable);
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->op_report().SerializeAsString(), report);
    absl::StatusOr<CompileOutcome> hit = compile(*cache, graph);
    ASSERT_TRUE(hit.ok() && hit->cacheHit);
    EXPECT_EQ(hit->opReport.SerializeAsString(), report);
  }
  // After a restart the report comes from the stored record.
  absl::StatusOr<CompileOutcome> again = compile(*openCache(), graph);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cacheHit);
  EXPECT_EQ(again->opReport.SerializeAsString(), report);
  EXPECT_EQ(fake.calls.load(), 1);
}

TEST_F(CompileCacheTest, NewCompilerBuildMisses) {
  ASSERT_TRUE(compile(*openCache(2, "b1"), graph).ok());
  absl::StatusOr<CompileOutcome> other = compile(*openCache(2, "b2"), graph);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->cacheHit);
  EXPECT_EQ(fake.calls.load(), 2);
}

TEST_F(CompileCacheTest, MissingArtifactIsAMissAndRecompiles) {
  auto cache = openCache();
  absl::StatusOr<CompileOutcome> first = compile(*cache, graph);
  ASSERT_TRUE(first.ok());
  absl::StatusOr<v1::ExecutableRecord> record =
      readExecutableRecord(*store, first->executable);
  ASSERT_TRUE(record.ok());
  std::filesystem::remove(store->blobPath(record->artifact().hash()));
  EXPECT_FALSE(cache->lookup(first->key).has_value());
  absl::StatusOr<CompileOutcome> second = compile(*cache, graph);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->cacheHit);
  EXPECT_EQ(fake.calls.load(), 2);
  EXPECT_TRUE(store->verify(record->artifact()).ok());
}

TEST_F(CompileCacheTest, CorruptRecordIsAMiss) {
  auto cache = openCache();
  absl::StatusOr<CompileOutcome> first = compile(*cache, graph);
  ASSERT_TRUE(first.ok());
  {
    std::ofstream out(store->blobPath(first->executable.hash()),
                      std::ios::binary | std::ios::trunc);
    out << std::string(first->executable.size_bytes(), 'x');
  }
  absl::StatusOr<CompileOutcome> second = compile(*cache, graph);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->cacheHit);
  EXPECT_EQ(fake.calls.load(), 2);
}

TEST_F(CompileCacheTest, CompilerErrorsPassThroughAndAreNotCached) {
  auto cache = openCache();
  fake.failWith = absl::InvalidArgumentError("node 0: unknown op aten.foo");
  absl::StatusOr<CompileOutcome> failed = compile(*cache, graph);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.status().message(), "node 0: unknown op aten.foo");
  fake.failWith = absl::OkStatus();
  absl::StatusOr<CompileOutcome> fixed = compile(*cache, graph);
  ASSERT_TRUE(fixed.ok());
  EXPECT_FALSE(fixed->cacheHit);
  EXPECT_EQ(fake.calls.load(), 2);
}

} // namespace
} // namespace kiln::server
