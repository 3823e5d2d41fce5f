//===- GraphPartitionTest.cpp - target/CPU segments of a graph ------------===//
//
// This file implements tests for partitionGraph(): segment order and
// boundaries, clustering of independent nodes, dead code, and the target
// segments' sub-graphs.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/GraphPartition.h"

#include "PlacementGraphs.h"
#include "kiln/common/Digest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using ::testing::ElementsAre;
using compiler::GraphSegment;
using compiler::partitionGraph;
using testing::GraphBuilder;

std::vector<std::string> names(const google::protobuf::RepeatedPtrField<v1::Value> &values) {
  std::vector<std::string> result;
  for (const v1::Value &value : values)
    result.push_back(value.name());
  return result;
}

TEST(GraphPartitionTest, ChainSplitsAroundTheCpuNode) {
  GraphBuilder g;
  g.input("x").parameter("w", digestOf("w"))
      .node("a", "aten.add.Tensor", {"x", "w"})
      .node("b", "aten.cummax.default", {"a"})
      .node("c", "aten.relu.default", {"b"})
      .output("c");
  std::vector<GraphSegment> segments = partitionGraph(g.graph, {true, false, true});
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_TRUE(segments[0].onTarget);
  EXPECT_THAT(segments[0].nodes, ElementsAre(0));
  EXPECT_THAT(segments[0].inputs, ElementsAre("w", "x"));
  EXPECT_THAT(segments[0].outputs, ElementsAre("a"));
  EXPECT_FALSE(segments[1].onTarget);
  EXPECT_THAT(segments[1].inputs, ElementsAre("a"));
  EXPECT_THAT(segments[1].outputs, ElementsAre("b"));
  EXPECT_EQ(segments[1].graph.nodes_size(), 0); // CPU segments get no graph
  EXPECT_THAT(segments[2].inputs, ElementsAre("b"));
  EXPECT_THAT(segments[2].outputs, ElementsAre("c"));

  // The first target sub-graph keeps the parameter (digest included) apart
  // from the runtime input; the last reads the CPU segment's output.
  const v1::Graph &first = segments[0].graph;
  ASSERT_EQ(first.parameters_size(), 1);
  EXPECT_EQ(first.parameters(0).digest().hash(), digestOf("w").hash());
  EXPECT_THAT(names(first.inputs()), ElementsAre("x"));
  EXPECT_THAT(first.outputs(), ElementsAre("a"));
  EXPECT_EQ(first.name(), "g.segment0");
  EXPECT_THAT(names(segments[2].graph.inputs()), ElementsAre("b"));
  EXPECT_EQ(segments[2].graph.nodes(0).op(), "aten.relu.default");
}

TEST(GraphPartitionTest, IndependentNodesClusterByPlacement) {
  // Graph order alternates t, c, t, c, t; the greedy order needs 3 segments
  // where running nodes in graph order would need 5.
  GraphBuilder g;
  g.input("x")
      .node("t1", "aten.relu.default", {"x"})
      .node("c1", "aten.cummax.default", {"x"})
      .node("t2", "aten.neg.default", {"t1"})
      .node("c2", "aten.cummax.default", {"c1"})
      .node("sum", "aten.add.Tensor", {"t2", "c2"})
      .output("sum");
  std::vector<GraphSegment> segments =
      partitionGraph(g.graph, {true, false, true, false, true});
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_THAT(segments[0].nodes, ElementsAre(0, 2));
  EXPECT_THAT(segments[0].outputs, ElementsAre("t2"));
  EXPECT_THAT(segments[1].nodes, ElementsAre(1, 3));
  EXPECT_THAT(segments[1].inputs, ElementsAre("x"));
  EXPECT_THAT(segments[1].outputs, ElementsAre("c2"));
  EXPECT_THAT(segments[2].nodes, ElementsAre(4));
  EXPECT_THAT(segments[2].inputs, ElementsAre("c2", "t2"));
}

TEST(GraphPartitionTest, StartsWithTheLowestReadyNodesPlacement) {
  GraphBuilder g;
  g.input("x")
      .node("c", "aten.cummax.default", {"x"})
      .node("t", "aten.relu.default", {"c"})
      .output("t")
      .output("c");
  std::vector<GraphSegment> segments = partitionGraph(g.graph, {false, true});
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_FALSE(segments[0].onTarget);
  // "c" is read by the next segment and is a graph output.
  EXPECT_THAT(segments[0].outputs, ElementsAre("c"));
  EXPECT_TRUE(segments[1].onTarget);
}

TEST(GraphPartitionTest, DropsSegmentsNothingReads) {
  GraphBuilder g;
  g.input("x")
      .node("t", "aten.relu.default", {"x"})
      .node("dead", "aten.cummax.default", {"t"})
      .output("t");
  std::vector<GraphSegment> segments = partitionGraph(g.graph, {true, false});
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_TRUE(segments[0].onTarget);
  EXPECT_THAT(segments[0].outputs, ElementsAre("t"));
}

TEST(GraphPartitionTest, ValuesReadTwiceAreOneInput) {
  GraphBuilder g;
  g.input("x")
      .node("c", "aten.cummax.default", {"x"})
      .node("sq", "aten.mul.Tensor", {"c", "c"})
      .output("sq");
  std::vector<GraphSegment> segments = partitionGraph(g.graph, {false, true});
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_THAT(names(segments[1].graph.inputs()), ElementsAre("c"));
}

} // namespace
} // namespace kiln::server
