//===- CompileKeyTest.cpp - what the compile key covers -------------------===//
//
// This file implements tests that the compile key ignores weights and graph
// names and changes with shapes, ops, target, options and compiler build.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CompileKey.h"

#include "kiln/Compiler/Compile.h"

#include "FakeCompiler.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using testing::linearGraph;

std::string keyOf(const v1::Graph &graph, const std::string &target = "cpu",
                  int optLevel = 0, const std::string &buildId = "build-1") {
  v1::CompileOptions options;
  options.set_opt_level(optLevel);
  return computeCompileKey(graph, target, options, buildId);
}

TEST(CompileKeyTest, IsHexSha256) {
  std::string key = keyOf(linearGraph(2, 16, 4, digestOf("w")));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_TRUE(validateDigest([&] {
                v1::Digest d;
                d.set_hash(key);
                return d;
              }())
                  .ok());
}

TEST(CompileKeyTest, ExcludesWeights) {
  EXPECT_EQ(keyOf(linearGraph(2, 16, 4, digestOf("weights v1"))),
            keyOf(linearGraph(2, 16, 4, digestOf("fine-tuned weights v2"))));
}

TEST(CompileKeyTest, IgnoresGraphName) {
  v1::Graph a = linearGraph(2, 16, 4, digestOf("w"));
  v1::Graph b = a;
  b.set_name("renamed");
  EXPECT_EQ(keyOf(a), keyOf(b));
}

TEST(CompileKeyTest, ChangesWithShapes) {
  v1::Digest w = digestOf("w");
  EXPECT_NE(keyOf(linearGraph(2, 16, 4, w)), keyOf(linearGraph(3, 16, 4, w)));
  EXPECT_NE(keyOf(linearGraph(2, 16, 4, w)), keyOf(linearGraph(2, 16, 5, w)));
}

TEST(CompileKeyTest, ChangesWithOps) {
  v1::Digest w = digestOf("w");
  EXPECT_NE(keyOf(linearGraph(2, 16, 4, w, "aten.mm.default")),
            keyOf(linearGraph(2, 16, 4, w, "aten.matmul.default")));
}

TEST(CompileKeyTest, ChangesWithParameterNamesAndTypes) {
  v1::Graph a = linearGraph(2, 16, 4, digestOf("w"));
  v1::Graph b = a;
  b.mutable_parameters(0)->mutable_value()->set_name("weight");
  EXPECT_NE(keyOf(a), keyOf(b));
  v1::Graph c = a;
  c.mutable_parameters(0)->mutable_value()->mutable_type()->set_dtype(
      v1::DTYPE_F16);
  EXPECT_NE(keyOf(a), keyOf(c));
}

TEST(CompileKeyTest, ChangesWithTargetOptionsAndBuildId) {
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  std::string base = keyOf(graph, "cpu", 0, "build-1");
  EXPECT_NE(base, keyOf(graph, "riscv64", 0, "build-1"));
  EXPECT_NE(base, keyOf(graph, "cpu", 1, "build-1"));
  EXPECT_NE(base, keyOf(graph, "cpu", 0, "build-2"));
}

TEST(CompileKeyTest, OptLevelZeroMeansTheCompilersDefault) {
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  EXPECT_EQ(keyOf(graph, "cpu", 0),
            keyOf(graph, "cpu", compiler::kDefaultOptLevel));
  EXPECT_NE(keyOf(graph, "cpu", 0),
            keyOf(graph, "cpu", compiler::kDefaultOptLevel + 1));
}

TEST(CompileKeyTest, IgnoresStageDumps) {
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  v1::CompileOptions dumped;
  dumped.set_dump_stages(true);
  EXPECT_EQ(computeCompileKey(graph, "cpu", dumped, "b"),
            computeCompileKey(graph, "cpu", v1::CompileOptions(), "b"));
}

TEST(CompileKeyTest, FieldsDoNotRunTogether) {
  v1::Graph graph = linearGraph(2, 16, 4, digestOf("w"));
  EXPECT_NE(keyOf(graph, "cpu", 0, "x"), keyOf(graph, "cpux", 0, ""));
}

} // namespace
} // namespace kiln::server
