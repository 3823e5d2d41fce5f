//===- PlacedCompileTest.cpp - compiles under a placement policy ----------===//
//
// This file implements tests for compilePlaced() and the policy check, with
// a fake compiler that lacks one op (UNIMPLEMENTED, as the importer says it)
// and a matching capability check.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/compile/PlacedCompile.h"

#include "PlacementGraphs.h"
#include "TestUtil.h"
#include "kiln/Compiler/GraphPartition.h"
#include "kiln/common/Digest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeCompiler;
using testing::GraphBuilder;
using testing::kLackedOp;
using testing::TempDir;

bool lacks(const v1::Node &node) { return node.op() == kLackedOp; }

class PlacedCompileTest : public testing::StoreTest {
protected:
  void SetUp() override {
    StoreTest::SetUp();
    CompilerFn real = fake.function();
    CompilerFn lacking = [this, real](const v1::Graph &graph,
                                      const compiler::CompileOptions &options)
        -> absl::StatusOr<compiler::CompiledExecutable> {
      for (int i = 0; i < graph.nodes_size(); ++i) {
        if (!lacks(graph.nodes(i)))
          continue;
        absl::Status status = absl::UnimplementedError(absl::StrCat(
            "node ", i, ": unsupported op '", kLackedOp, "'"));
        placementAsked.push_back(options.placement);
        if (carried) // the compile answers placement's question itself
          attachPlacement(status, carryFor(graph, options, real));
        return status;
      }
      return real(graph, options);
    };
    absl::StatusOr<std::unique_ptr<CompileCache>> opened_cache =
        CompileCache::open(*store, executables(), temp.path() / "ac", lacking, "b1", 2);
    ASSERT_TRUE(opened_cache.ok()) << opened_cache.status();
    cache = std::move(*opened_cache);
    nodeSupport = [this](const v1::Graph &graph, const compiler::CompileOptions &) {
      checks++;
      std::vector<compiler::NodeSupport> support(graph.nodes_size());
      for (int i = 0; i < graph.nodes_size(); ++i)
        if (lacks(graph.nodes(i)))
          support[i] = {false, absl::StrCat("unsupported op '", kLackedOp, "'")};
      return absl::StatusOr<std::vector<compiler::NodeSupport>>(support);
    };
    GraphBuilder g("mixed");
    g.input("x").parameter("w", digestOf("w"))
        .node("a", "aten.add.Tensor", {"x", "w"})
        .node("b", kLackedOp, {"a"})
        .node("c", "aten.relu.default", {"b"})
        .output("c");
    mixed = g.graph;
  }

  absl::StatusOr<PlacedOutcome> compile(const v1::Graph &graph,
                                        v1::PlacementPolicy policy) {
    return compilePlaced(*cache, nodeSupport, graph, "cpu", v1::CompileOptions(),
                         policy);
  }

  static v1::PlacementPolicy cpuFallback() {
    v1::PlacementPolicy policy;
    policy.set_fallback(v1::FALLBACK_POLICY_CPU);
    return policy;
  }

  /// What kiln-compile-worker carries: `carried`, and with carrySegments
  /// and a placement request, the target segments compiled as a real
  /// worker cuts them (then changed by editSegments).
  worker::CompileJobResult carryFor(const v1::Graph &graph,
                                    const compiler::CompileOptions &options,
                                    const CompilerFn &real) {
    worker::CompileJobResult result;
    std::vector<bool> onTarget;
    for (const compiler::NodeSupport &node : *carried) {
      worker::NodeSupport *entry = result.add_node_support();
      entry->set_supported(node.supported);
      entry->set_reason(node.reason);
      onTarget.push_back(node.supported);
    }
    if (!carrySegments || !options.placement ||
        static_cast<int>(onTarget.size()) != graph.nodes_size())
      return result;
    std::vector<compiler::GraphSegment> segments =
        compiler::partitionGraph(graph, onTarget);
    for (int s = 0; s < static_cast<int>(segments.size()); ++s) {
      if (!segments[s].onTarget)
        continue;
      worker::CompiledSegment *entry = result.add_segments();
      entry->set_segment(s);
      entry->mutable_nodes()->Add(segments[s].nodes.begin(), segments[s].nodes.end());
      entry->set_compile_us(1000 + s);
      absl::StatusOr<compiler::CompiledExecutable> compiled =
          real(segments[s].graph, options);
      worker::CompileJobResult &out = *entry->mutable_result();
      out.set_code(static_cast<int>(compiled.status().code()));
      if (compiled.ok()) {
        out.set_artifact(compiled->artifact);
        *out.mutable_manifest() = compiled->manifest;
        *out.mutable_op_report() = compiled->opReport;
      }
    }
    if (editSegments)
      editSegments(result);
    return result;
  }

  FakeCompiler fake;
  std::unique_ptr<CompileCache> cache;
  NodeSupportFn nodeSupport;
  int checks = 0;
  /// What the compiler's UNIMPLEMENTED carries, when set.
  std::optional<std::vector<compiler::NodeSupport>> carried;
  /// Whether it carries the compiled target segments too.
  bool carrySegments = false;
  std::function<void(worker::CompileJobResult &)> editSegments;
  /// The placement request of each compile that lacked an op.
  std::vector<std::optional<compiler::PlacementRequest>> placementAsked;
  v1::Graph mixed;
};

TEST_F(PlacedCompileTest, NodeSupportTheCompileCarriesNeedsNoSecondCall) {
  carried = std::vector<compiler::NodeSupport>{
      {true, ""}, {false, "the compile's own reason"}, {true, ""}};
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(checks, 0);
  EXPECT_TRUE(outcome->partitioned);
  EXPECT_EQ(outcome->placement.nodes(1).placement(), v1::PLACEMENT_CPU);
  EXPECT_EQ(outcome->placement.nodes(1).reason(), "the compile's own reason");
  EXPECT_EQ(outcome->placement.cpu_nodes(), 1);
}

TEST_F(PlacedCompileTest, CarriedNodeSupportOfAnotherGraphIsNotTrusted) {
  carried = std::vector<compiler::NodeSupport>{{false, "two nodes only"}, {true, ""}};
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(checks, 1); // asked again: the carried list does not fit
  EXPECT_EQ(outcome->placement.nodes(0).placement(), v1::PLACEMENT_TARGET);
  EXPECT_THAT(outcome->placement.nodes(1).reason(), HasSubstr("unsupported op"));
}

TEST(NodeSupportPayloadTest, RoundTripsThroughAStatus) {
  absl::Status status = absl::UnimplementedError("lacks an op");
  EXPECT_FALSE(carriedPlacement(status).has_value());
  attachNodeSupport(status, {{true, ""}, {false, "why"}});
  std::optional<worker::CompileJobResult> back = carriedPlacement(status);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->node_support_size(), 2);
  EXPECT_TRUE(back->node_support(0).supported());
  EXPECT_FALSE(back->node_support(1).supported());
  EXPECT_EQ(back->node_support(1).reason(), "why");
  EXPECT_EQ(back->segments_size(), 0);
  EXPECT_EQ(status.message(), "lacks an op"); // the message is untouched
}

TEST_F(PlacedCompileTest, OnlyACpuPolicyAsksTheCompilerForSegments) {
  ASSERT_FALSE(compile(mixed, {}).ok());
  v1::PlacementPolicy policy = cpuFallback();
  policy.set_max_fallback_fraction(0.5);
  // Another graph: the first compile stored the placement of `mixed`.
  mixed.mutable_nodes(0)->set_op("aten.sub.Tensor");
  ASSERT_TRUE(compile(mixed, policy).ok());
  ASSERT_EQ(placementAsked.size(), 2u);
  EXPECT_FALSE(placementAsked[0].has_value());
  ASSERT_TRUE(placementAsked[1].has_value());
  EXPECT_EQ(placementAsked[1]->maxFallbackFraction, 0.5);
}

TEST_F(PlacedCompileTest, SegmentsTheCompileCarriesAreCachedWithoutMoreCompiles) {
  carried = std::vector<compiler::NodeSupport>{
      {true, ""}, {false, "the compile's own reason"}, {true, ""}};
  carrySegments = true;
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  // One call into the compiler: the whole graph's, which failed and carried
  // the placement and both target segments.
  EXPECT_EQ(cache->stats().compiles, 1u);
  EXPECT_EQ(checks, 0);
  EXPECT_FALSE(outcome->cacheHit);
  const v1::PlacementReport &report = outcome->placement;
  ASSERT_EQ(report.segments_size(), 3);
  EXPECT_EQ(outcome->timings.compile_us(), 1000 + 1002);
  for (int s : {0, 2}) {
    std::optional<CompileOutcome> cached = cache->lookup(report.segments(s).compile_key());
    ASSERT_TRUE(cached.has_value()) << "segment " << s;
    EXPECT_EQ(cached->executable.hash(), report.segments(s).executable().hash());
  }
  ASSERT_EQ(report.segments(2).manifest().inputs_size(), 1);
  EXPECT_EQ(report.segments(2).manifest().inputs(0).name(), "b");
  ASSERT_EQ(outcome->opReport.layers_size(), 2);

  // The executables are those a compile of each segment on its own makes:
  // a cache that compiles them separately keys and stores the same ones.
  carrySegments = false;
  absl::StatusOr<std::unique_ptr<CompileCache>> other = CompileCache::open(
      *store, executables(), temp.path() / "ac-separate", fake.function(), "b1", 1);
  ASSERT_TRUE(other.ok()) << other.status();
  std::vector<bool> onTarget = {true, false, true};
  std::vector<compiler::GraphSegment> cut = compiler::partitionGraph(mixed, onTarget);
  absl::StatusOr<CompileOutcome> separate =
      (*other)->compile(cut[2].graph, "cpu", v1::CompileOptions());
  ASSERT_TRUE(separate.ok()) << separate.status();
  EXPECT_EQ(separate->executable.hash(), report.segments(2).executable().hash());
}

TEST_F(PlacedCompileTest, ACarriedSegmentCutDifferentlyIsCompiledOnItsOwn) {
  carried = std::vector<compiler::NodeSupport>{{true, ""}, {false, "why"}, {true, ""}};
  carrySegments = true;
  editSegments = [](worker::CompileJobResult &result) {
    result.mutable_segments(0)->add_nodes(2); // not the segment kilnd cuts
    result.mutable_segments(1)->set_segment(7); // no such segment
  };
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(cache->stats().compiles, 3u); // the whole graph, then each segment
  EXPECT_FALSE(outcome->placement.segments(0).executable().hash().empty());
  EXPECT_FALSE(outcome->placement.segments(2).executable().hash().empty());
}

TEST_F(PlacedCompileTest, ACarriedVerdictOnASegmentIsTheAnswer) {
  carried = std::vector<compiler::NodeSupport>{{true, ""}, {false, "why"}, {true, ""}};
  carrySegments = true;
  editSegments = [](worker::CompileJobResult &result) {
    worker::CompileJobResult &failed = *result.mutable_segments(1)->mutable_result();
    failed.Clear();
    failed.set_code(static_cast<int>(absl::StatusCode::kInvalidArgument));
    failed.set_message("node 0: a bad attribute");
  };
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(outcome.status())) << outcome.status();
  EXPECT_THAT(outcome.status().message(),
              HasSubstr("target segment 2 (1 nodes, from node 2 'c' "
                        "(aten.relu.default)): node 0: a bad attribute"));
  EXPECT_EQ(cache->stats().compiles, 1u);
}

TEST_F(PlacedCompileTest, ASegmentTheSharedWorkerFailedGetsAWorkerOfItsOwn) {
  carried = std::vector<compiler::NodeSupport>{{true, ""}, {false, "why"}, {true, ""}};
  carrySegments = true;
  editSegments = [](worker::CompileJobResult &result) {
    worker::CompileJobResult &failed = *result.mutable_segments(1)->mutable_result();
    failed.Clear();
    failed.set_code(static_cast<int>(absl::StatusCode::kInternal));
    failed.set_message("ld.lld: cannot open a temporary file");
  };
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(cache->stats().compiles, 2u); // the graph, then segment 2 alone
  EXPECT_EQ(cache->stats().precompiledStores, 1u); // segment 0
  EXPECT_FALSE(outcome->placement.segments(2).executable().hash().empty());
}

TEST_F(PlacedCompileTest, ACarriedExecutableWithoutTheSegmentsSignatureIsNotStored) {
  carried = std::vector<compiler::NodeSupport>{{true, ""}, {false, "why"}, {true, ""}};
  carrySegments = true;
  editSegments = [](worker::CompileJobResult &result) {
    // Segment 0's executable for another graph: its input is not "x".
    result.mutable_segments(0)->mutable_result()->mutable_manifest()
        ->mutable_inputs(0)->set_name("y");
    result.mutable_segments(1)->mutable_result()->clear_artifact();
  };
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(cache->stats().compiles, 3u);
  EXPECT_EQ(cache->stats().precompiledStores, 0u);
  EXPECT_EQ(outcome->placement.segments(0).manifest().inputs(0).name(), "x");
}

TEST_F(PlacedCompileTest, ACarriedExecutableWithAnotherTypeIsNotStored) {
  carried = std::vector<compiler::NodeSupport>{{true, ""}, {false, "why"}, {true, ""}};
  carrySegments = true;
  editSegments = [](worker::CompileJobResult &result) {
    // Right names, wrong shape: compiled for another graph.
    result.mutable_segments(0)->mutable_result()->mutable_manifest()
        ->mutable_inputs(0)->mutable_type()->add_shape(7);
  };
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(cache->stats().compiles, 2u); // the graph, then segment 0 alone
  EXPECT_EQ(cache->stats().precompiledStores, 1u); // segment 2
  EXPECT_EQ(outcome->placement.segments(0).manifest().inputs(0).type().shape_size(),
            mixed.inputs(0).type().shape_size());
}

TEST_F(PlacedCompileTest, ARequestThatJoinedADeathInSegmentsGetsItsOwnAnswer) {
  // An error-policy request that shared the flight of a CPU-policy one whose
  // worker died in a segment: asked again, it gets the lacked nodes.
  carried = std::vector<compiler::NodeSupport>{{true, ""}, {false, "why"}, {true, ""}};
  int calls = 0;
  absl::StatusOr<std::unique_ptr<CompileCache>> reopened = CompileCache::open(
      *store, executables(), temp.path() / "ac-joined",
      [this, &calls](const v1::Graph &, const compiler::CompileOptions &)
          -> absl::StatusOr<compiler::CompiledExecutable> {
        if (calls++ == 0) {
          absl::Status died = absl::InternalError("crashed in stage 'segment 0 codegen'");
          markDiedCompilingSegments(died);
          return died;
        }
        absl::Status lacks = absl::UnimplementedError("node 1: unsupported op");
        attachNodeSupport(lacks, *carried);
        return lacks;
      },
      "b1", 1);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  cache = std::move(*reopened);
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, {});
  EXPECT_TRUE(absl::IsUnimplemented(outcome.status())) << outcome.status();
  EXPECT_THAT(outcome.status().message(), HasSubstr("cannot compile 1 of 3 nodes"));
  EXPECT_EQ(calls, 2);
}

TEST_F(PlacedCompileTest, AWorkerThatDiedCompilingSegmentsIsAskedAgainWithoutThem) {
  carried = std::vector<compiler::NodeSupport>{{true, ""}, {false, "why"}, {true, ""}};
  absl::StatusOr<std::unique_ptr<CompileCache>> reopened = CompileCache::open(
      *store, executables(), temp.path() / "ac-died",
      [this](const v1::Graph &graph, const compiler::CompileOptions &options)
          -> absl::StatusOr<compiler::CompiledExecutable> {
        if (graph.nodes_size() == 3) {
          if (options.placement) {
            absl::Status died = absl::ResourceExhaustedError(
                "the compile ran out of memory in stage 'segment 2 codegen'");
            markDiedCompilingSegments(died);
            return died;
          }
          absl::Status lacks = absl::UnimplementedError("node 1: unsupported op");
          attachNodeSupport(lacks, *carried);
          return lacks;
        }
        return fake.function()(graph, options);
      },
      "b1", 1);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  cache = std::move(*reopened);
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, cpuFallback());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  // The graph twice (with placement, then without), then each segment.
  EXPECT_EQ(cache->stats().compiles, 4u);
  EXPECT_TRUE(outcome->partitioned);
  // Any other failure of the graph's compile stays the answer.
  absl::Status plain = absl::ResourceExhaustedError("out of memory");
  EXPECT_FALSE(diedCompilingSegments(plain));
  markDiedCompilingSegments(plain);
  EXPECT_TRUE(diedCompilingSegments(plain));
  EXPECT_EQ(plain.message(), "out of memory");
}

TEST_F(PlacedCompileTest, WholeGraphIsOneTargetSegment) {
  GraphBuilder g;
  g.input("x").node("r", "aten.relu.default", {"x"}).output("r");
  absl::StatusOr<PlacedOutcome> outcome = compile(g.graph, {});
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->partitioned);
  EXPECT_EQ(checks, 0); // no capability check when the graph compiles
  const v1::PlacementReport &report = outcome->placement;
  EXPECT_EQ(report.target(), "cpu");
  EXPECT_EQ(report.target_nodes(), 1);
  EXPECT_EQ(report.cpu_nodes(), 0);
  ASSERT_EQ(report.segments_size(), 1);
  EXPECT_EQ(report.segments(0).executable().hash(), outcome->whole.executable.hash());
  EXPECT_THAT(report.segments(0).inputs(), ElementsAre("x"));
  EXPECT_THAT(report.segments(0).outputs(), ElementsAre("r"));
  EXPECT_EQ(report.nodes(0).placement(), v1::PLACEMENT_TARGET);
  EXPECT_EQ(report.nodes(0).unit(), "generated"); // its op report layer's
}

TEST_F(PlacedCompileTest, ErrorPolicyNamesEveryLackedNode) {
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, {});
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(absl::IsUnimplemented(outcome.status())) << outcome.status();
  EXPECT_THAT(outcome.status().message(),
              HasSubstr("target 'cpu' cannot compile 1 of 3 nodes: node 1 'b' "
                        "(aten.cummax.default): unsupported op"));
  EXPECT_THAT(outcome.status().message(), HasSubstr("FALLBACK_POLICY_CPU"));
}

TEST_F(PlacedCompileTest, CpuPolicyPartitionsAndCachesSegments) {
  absl::StatusOr<PlacedOutcome> first = compile(mixed, cpuFallback());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->partitioned);
  EXPECT_FALSE(first->cacheHit);
  const v1::PlacementReport &report = first->placement;
  EXPECT_EQ(report.target_nodes(), 2);
  EXPECT_EQ(report.cpu_nodes(), 1);
  EXPECT_NEAR(report.fallback_fraction(), 1.0 / 3.0, 1e-12);
  ASSERT_EQ(report.segments_size(), 3);
  EXPECT_EQ(report.segments(0).placement(), v1::PLACEMENT_TARGET);
  EXPECT_EQ(report.segments(1).placement(), v1::PLACEMENT_CPU);
  EXPECT_TRUE(report.segments(1).executable().hash().empty());
  EXPECT_EQ(report.nodes(1).placement(), v1::PLACEMENT_CPU);
  EXPECT_EQ(report.nodes(1).segment(), 1);
  EXPECT_THAT(report.nodes(1).reason(), HasSubstr("unsupported op"));
  // What runs each node: its layer's unit, the target where the layer
  // names none, PyTorch on the CPU.
  EXPECT_EQ(report.nodes(0).unit(), "cpu");
  EXPECT_EQ(report.nodes(1).unit(), "pytorch");
  EXPECT_EQ(report.nodes(2).unit(), "generated");
  // Each target segment is an executable of its own, with its manifest.
  EXPECT_FALSE(report.segments(0).executable().hash().empty());
  EXPECT_NE(report.segments(0).executable().hash(),
            report.segments(2).executable().hash());
  ASSERT_EQ(report.segments(2).manifest().inputs_size(), 1);
  EXPECT_EQ(report.segments(2).manifest().inputs(0).name(), "b");
  ASSERT_EQ(report.segments(0).manifest().parameters_size(), 1);
  EXPECT_EQ(report.segments(0).manifest().parameters(0).name(), "w");
  // The op report has the target nodes' layers, in graph order.
  ASSERT_EQ(first->opReport.layers_size(), 2);
  EXPECT_EQ(first->opReport.layers(0).name(), "a");
  EXPECT_EQ(first->opReport.layers(1).name(), "c");
  EXPECT_EQ(first->opReport.totals().macs(), 14);
  EXPECT_EQ(first->opReport.totals().parameter_bytes(), 2 * 4 * 4);
  EXPECT_EQ(first->key, cache->keyFor(mixed, "cpu", v1::CompileOptions()));

  // The repeat skips the failing whole-graph compile and the check: the
  // placement is stored under the graph's key, the segments are hits.
  uint64_t compilesAfterFirst = cache->stats().compiles;
  absl::StatusOr<PlacedOutcome> second = compile(mixed, cpuFallback());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cacheHit);
  EXPECT_EQ(checks, 1);
  EXPECT_EQ(cache->stats().compiles, compilesAfterFirst);
  EXPECT_EQ(second->placement.segments(2).executable().hash(),
            report.segments(2).executable().hash());
  EXPECT_EQ(second->placement.nodes(1).reason(), report.nodes(1).reason());
}

TEST_F(PlacedCompileTest, TheStoredPlacementOutlivesTheCacheAndServesBothPolicies) {
  ASSERT_TRUE(compile(mixed, cpuFallback()).ok());
  absl::StatusOr<std::unique_ptr<CompileCache>> reopened = CompileCache::open(
      *store, executables(), temp.path() / "ac", [](const v1::Graph &, const compiler::CompileOptions &)
          -> absl::StatusOr<compiler::CompiledExecutable> {
        return absl::InternalError("the compiler must not run");
      },
      "b1", 1);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  cache = std::move(*reopened);
  absl::StatusOr<PlacedOutcome> again = compile(mixed, cpuFallback());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->partitioned && again->cacheHit);
  absl::StatusOr<PlacedOutcome> refused = compile(mixed, {});
  EXPECT_TRUE(absl::IsUnimplemented(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("node 1 'b'"));
  EXPECT_EQ(checks, 1);
}

TEST_F(PlacedCompileTest, MaxFallbackFractionIsEnforced) {
  v1::PlacementPolicy policy = cpuFallback();
  policy.set_max_fallback_fraction(0.25);
  absl::StatusOr<PlacedOutcome> outcome = compile(mixed, policy);
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(absl::IsUnimplemented(outcome.status())) << outcome.status();
  EXPECT_THAT(outcome.status().message(),
              HasSubstr("1 of 3 nodes (0.333) would fall back to the CPU, over "
                        "placement.max_fallback_fraction 0.25"));
  policy.set_max_fallback_fraction(0.5);
  EXPECT_TRUE(compile(mixed, policy).ok());
}

TEST_F(PlacedCompileTest, OtherErrorsAreNotPlacementQuestions) {
  fake.failWith = absl::InternalError("llvm exploded");
  GraphBuilder g;
  g.input("x").node("r", "aten.relu.default", {"x"}).output("r");
  absl::StatusOr<PlacedOutcome> outcome = compile(g.graph, cpuFallback());
  EXPECT_TRUE(absl::IsInternal(outcome.status())) << outcome.status();
  EXPECT_EQ(checks, 0);
}

TEST_F(PlacedCompileTest, WithoutACapabilityCheckNothingFallsBack) {
  absl::StatusOr<PlacedOutcome> outcome = compilePlaced(
      *cache, nullptr, mixed, "cpu", v1::CompileOptions(), cpuFallback());
  EXPECT_TRUE(absl::IsUnimplemented(outcome.status())) << outcome.status();
}

TEST(PlacementPolicyTest, RejectsOutOfRangePolicies) {
  v1::PlacementPolicy policy;
  EXPECT_TRUE(validatePlacementPolicy(policy).ok());
  policy.set_fallback(static_cast<v1::FallbackPolicy>(7));
  EXPECT_THAT(validatePlacementPolicy(policy).message(),
              HasSubstr("placement.fallback: unknown value 7"));
  policy.set_fallback(v1::FALLBACK_POLICY_CPU);
  policy.set_max_fallback_fraction(1.5);
  EXPECT_THAT(validatePlacementPolicy(policy).message(),
              HasSubstr("must be in 0..1, got 1.5"));
  policy.set_max_fallback_fraction(0.0);
  EXPECT_TRUE(validatePlacementPolicy(policy).ok());
  policy.set_fallback(v1::FALLBACK_POLICY_ERROR);
  EXPECT_TRUE(absl::IsInvalidArgument(validatePlacementPolicy(policy)));
}

} // namespace
} // namespace kiln::server
