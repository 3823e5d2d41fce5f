//===- KeyExplanationTest.cpp - why a compile would miss ------------------===//
//
// This file implements tests for the compile-key records and their
// comparison, and for CompileCache::explainMiss over a real cache: each
// component that can differ is named, with the first differing node for a
// graph.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/KeyExplanation.h"
#include "kiln/server/store/CompileCache.h"
#include "kiln/server/store/CompileKey.h"

#include "FakeCompiler.h"
#include "TestUtil.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using testing::FakeCompiler;
using testing::linearGraph;

/// linearGraph followed by a unary op on y.
v1::Graph twoNodeGraph(const std::string &secondOp) {
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  v1::Node *node = graph.add_nodes();
  node->set_op(secondOp);
  v1::Argument *self = node->add_arguments();
  self->set_name("self");
  self->set_value("y");
  v1::Value *z = node->add_outputs();
  z->set_name("z");
  *z->mutable_type() = testing::f32({2, 4});
  graph.set_outputs(0, "z");
  return graph;
}

std::vector<v1::KeyComponent> components(const std::vector<v1::KeyDifference> &diffs) {
  std::vector<v1::KeyComponent> out;
  for (const v1::KeyDifference &d : diffs)
    out.push_back(d.component());
  return out;
}

TEST(KeyExplanationTest, TheRecordKeysLikeTheCompileKey) {
  v1::Graph graph = twoNodeGraph("aten.relu.default");
  v1::CompileOptions options;
  options.set_cpu("znver3");
  v1::CompileKeyRecord record = describeCompileKey(graph, "cpu", options, "b1", "s");
  EXPECT_EQ(record.compile_key(), computeCompileKey(graph, "cpu", options, "b1", "s"));
  EXPECT_EQ(record.graph_name(), "linear");
  ASSERT_EQ(record.nodes_size(), 2);
  EXPECT_EQ(record.nodes(1).op(), "aten.relu.default");
  EXPECT_EQ(record.nodes(1).name(), "z");
  // Weights are not in the key: another parameter digest, the same record.
  v1::Graph reweighted = graph;
  *reweighted.mutable_parameters(0)->mutable_digest() = digestOf("w2");
  EXPECT_EQ(describeCompileKey(reweighted, "cpu", options, "b1", "s").SerializeAsString(),
            record.SerializeAsString());
}

TEST(KeyExplanationTest, EachComponentIsNamed) {
  v1::CompileOptions options;
  options.set_cpu("znver3");
  options.set_opt_level(2);
  v1::CompileKeyRecord base =
      describeCompileKey(twoNodeGraph("aten.relu.default"), "cpu", options, "b1", "");

  // Graph: the first differing node, with both ops.
  auto graphDiff = keyDifferences(
      describeCompileKey(twoNodeGraph("aten.gelu.default"), "cpu", options, "b1", ""), base);
  ASSERT_EQ(components(graphDiff), std::vector{v1::KEY_COMPONENT_GRAPH});
  EXPECT_NE(graphDiff[0].detail().find("node 1 'z': aten.gelu.default here, "
                                       "aten.relu.default"),
            std::string::npos)
      << graphDiff[0].detail();

  // Options: the field and both values.
  v1::CompileOptions o3 = options;
  o3.set_opt_level(3);
  auto optionsDiff = keyDifferences(
      describeCompileKey(twoNodeGraph("aten.relu.default"), "cpu", o3, "b1", ""), base);
  ASSERT_EQ(components(optionsDiff), std::vector{v1::KEY_COMPONENT_OPTIONS});
  EXPECT_NE(optionsDiff[0].detail().find("opt_level"), std::string::npos)
      << optionsDiff[0].detail();

  // Target features: the CPUs.
  v1::CompileOptions skylake = options;
  skylake.set_cpu("skylake-avx512");
  auto featureDiff = keyDifferences(
      describeCompileKey(twoNodeGraph("aten.relu.default"), "cpu", skylake, "b1", ""), base);
  ASSERT_EQ(components(featureDiff), std::vector{v1::KEY_COMPONENT_TARGET_FEATURES});
  EXPECT_NE(featureDiff[0].detail().find("'skylake-avx512' (none) here, 'znver3'"),
            std::string::npos)
      << featureDiff[0].detail();

  // Compiler build and salt together.
  auto both = keyDifferences(
      describeCompileKey(twoNodeGraph("aten.relu.default"), "cpu", options, "b2", "new"),
      base);
  EXPECT_EQ(components(both),
            (std::vector{v1::KEY_COMPONENT_COMPILER, v1::KEY_COMPONENT_SALT}));
  EXPECT_NE(both[1].detail().find("salt 'new' here, (none) cached"), std::string::npos)
      << both[1].detail();

  // Identical parts: nothing differs.
  EXPECT_TRUE(keyDifferences(base, base).empty());
}

class ExplainMissTest : public testing::StoreTest {};

TEST_F(ExplainMissTest, NamesTheNearestCachedKeyOfTheSameGraph) {
  FakeCompiler fake;
  auto cache = *CompileCache::open(*store, executables(), temp.path() / "ac",
                                   fake.function(), "b1", 1);
  v1::CompileOptions options;
  options.set_opt_level(2);
  v1::Graph relu = twoNodeGraph("aten.relu.default");
  ASSERT_TRUE(cache->compile(relu, "cpu", options).ok());
  v1::CompileOptions o3 = options;
  o3.set_opt_level(3);
  ASSERT_TRUE(cache->compile(relu, "cpu", o3).ok());

  // Cached: nothing to explain.
  v1::ExplainMissResponse hit = cache->explainMiss(relu, "cpu", options, 0);
  EXPECT_TRUE(hit.cached());
  EXPECT_EQ(hit.candidates_size(), 0);

  // One node changed: both cached keys are candidates, the one that differs
  // only in the graph first.
  v1::ExplainMissResponse miss =
      cache->explainMiss(twoNodeGraph("aten.gelu.default"), "cpu", options, 0);
  EXPECT_FALSE(miss.cached());
  ASSERT_EQ(miss.candidates_size(), 2);
  ASSERT_EQ(miss.candidates(0).differences_size(), 1);
  EXPECT_EQ(miss.candidates(0).differences(0).component(), v1::KEY_COMPONENT_GRAPH);
  EXPECT_TRUE(miss.candidates(0).has_executable());
  EXPECT_EQ(miss.candidates(1).differences_size(), 2);
  EXPECT_EQ(cache->explainMiss(twoNodeGraph("aten.gelu.default"), "cpu", options, 1)
                .candidates_size(),
            1);

  // A new salt: every key misses, and the salt is why.
  cache->setSalt("rotated");
  v1::ExplainMissResponse salted = cache->explainMiss(relu, "cpu", options, 0);
  EXPECT_FALSE(salted.cached());
  ASSERT_GE(salted.candidates_size(), 1);
  ASSERT_EQ(salted.candidates(0).differences_size(), 1);
  EXPECT_EQ(salted.candidates(0).differences(0).component(), v1::KEY_COMPONENT_SALT);

  // Another graph name has no candidates.
  v1::Graph other = relu;
  other.set_name("other");
  EXPECT_EQ(cache->explainMiss(other, "cpu", options, 0).candidates_size(), 0);
}

} // namespace
} // namespace kiln::server
