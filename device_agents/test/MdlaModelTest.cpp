//===- MdlaModelTest.cpp - the mdla artifact parser, numerics, cycles ------===//
//
// Tests of MdlaProgram (what it refuses, weight binding), Kiln's fixed-point
// model against the f32 reference and hand-computed values, and the cycle
// model's arithmetic.
//
//===----------------------------------------------------------------------===//
#include "MdlaTestModels.h"

#include "kiln/agent/mdla/CycleModel.h"
#include "kiln/agent/mdla/FixedPointModel.h"
#include "kiln/agent/mdla/MdlaProgram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::agent::mdla {
namespace {

using test::OnnxBuilder;

std::map<std::string, TensorView> convNetBindings(const std::vector<test::NamedTensor> &weights,
                                                  const std::vector<float> &input) {
  std::map<std::string, TensorView> bound;
  for (const auto &w : weights)
    bound[w.name] = {w.shape, w.data.data()};
  bound["x"] = {{1, 3, 8, 8}, input.data()};
  return bound;
}

TEST(MdlaProgramTest, ParsesTheConvNet) {
  auto program = MdlaProgram::parse(test::convNetModel());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->graphName(), "kiln_main");
  EXPECT_EQ(program->inputs().size(), 9u);
  EXPECT_EQ(program->layers().size(), 7u);
  ASSERT_EQ(program->outputs().size(), 1u);
  EXPECT_EQ(program->outputs()[0].shape, (std::vector<int64_t>{1, 5}));
}

TEST(MdlaProgramTest, RefusesAnOpTheDeviceDoesNotRunNamingIt) {
  OnnxBuilder b;
  b.input("x", {4});
  b.node("Erf", {"x"}, "y");
  b.output("y", {4});
  auto program = MdlaProgram::parse(b.bytes());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(program.status().message().find("layer 'y' (Erf): not an op the MDLA runs"),
            std::string::npos) << program.status();
}

TEST(MdlaProgramTest, RefusesUndefinedNamesNonF32InputsAndGarbage) {
  OnnxBuilder undefined;
  undefined.input("x", {4});
  undefined.node("Relu", {"nope"}, "y");
  undefined.output("y", {4});
  auto a = MdlaProgram::parse(undefined.bytes());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("reads 'nope'"), std::string::npos) << a.status();

  OnnxBuilder ints;
  ints.input("x", {4});
  ints.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::INT32);
  ints.node("Relu", {"x"}, "y");
  ints.output("y", {4});
  auto b = MdlaProgram::parse(ints.bytes());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("'x' is not an f32 tensor"), std::string::npos)
      << b.status();

  auto c = MdlaProgram::parse(std::string(100, '\x7f'));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);

  // An int64 shape read as a tensor, or returned as one (found by
  // fuzz_mdla_model: the evaluator looked it up among the tensors and threw).
  OnnxBuilder shapeAsTensor;
  shapeAsTensor.input("x", {4});
  shapeAsTensor.shape("s", {4});
  shapeAsTensor.node("Relu", {"s"}, "y");
  shapeAsTensor.output("y", {4});
  auto d = MdlaProgram::parse(shapeAsTensor.bytes());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("reads 's', an int64 shape, as an f32 tensor"),
            std::string::npos) << d.status();
  OnnxBuilder shapeOut;
  shapeOut.input("x", {4});
  shapeOut.shape("s", {4});
  shapeOut.node("Relu", {"x"}, "y");
  shapeOut.output("y", {4});
  shapeOut.output("s", {1});
  auto e = MdlaProgram::parse(shapeOut.bytes());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("graph output 's' is an int64 shape"),
            std::string::npos) << e.status();
  // Reshape's second input is where a shape belongs.
  OnnxBuilder reshape;
  reshape.input("x", {2, 2});
  reshape.shape("s", {4});
  reshape.node("Reshape", {"x", "s"}, "y");
  reshape.output("y", {4});
  EXPECT_TRUE(MdlaProgram::parse(reshape.bytes()).ok());
}

TEST(MdlaProgramTest, BindWeightsMakesThemInitializers) {
  auto program = MdlaProgram::parse(test::axpyModel(3));
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<float> a = {1, 2, 3};
  auto bound = program->bindWeights({{"a", TensorView{{3}, a.data()}}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  auto rebound = MdlaProgram::parse(*bound);
  ASSERT_TRUE(rebound.ok()) << rebound.status();
  ASSERT_EQ(rebound->inputs().size(), 1u);
  EXPECT_EQ(rebound->inputs()[0].name, "x");
  ASSERT_TRUE(rebound->constants().count("a"));
  EXPECT_EQ(rebound->constants().at("a").data, a);

  auto wrongShape = program->bindWeights({{"a", TensorView{{2}, a.data()}}});
  EXPECT_FALSE(wrongShape.ok());
  auto unknown = program->bindWeights({{"zzz", TensorView{{3}, a.data()}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'zzz'"), std::string::npos);
}

TEST(FixedPointModelTest, QuantizesToInt16WithAPowerOfTwoScale) {
  std::vector<float> data = {1.0f, -0.5f, 0.3f, 1.0e-6f};
  // max |x| = 1 = 0.5 * 2^1: 14 fraction bits.
  EXPECT_EQ(quantizeQ16(data), 14);
  EXPECT_EQ(data[0], 1.0f);
  EXPECT_EQ(data[1], -0.5f);
  EXPECT_EQ(data[2], std::nearbyint(0.3 * 16384) / 16384.0f);
  EXPECT_EQ(data[3], 0.0f);  // below the step, 2^-14

  std::vector<float> special = {NAN, INFINITY, -INFINITY, 3.0f};
  quantizeQ16(special);
  EXPECT_EQ(special[0], 0.0f);
  EXPECT_EQ(special[1], 32767.0f / 8192.0f);  // saturated at the largest step
  EXPECT_EQ(special[2], -4.0f);
  EXPECT_EQ(special[3], 3.0f);
}

TEST(FixedPointModelTest, ConvNetInQ16IsCloseToF32ButNotEqual) {
  auto program = MdlaProgram::parse(test::convNetModel());
  ASSERT_TRUE(program.ok()) << program.status();
  auto weights = test::convNetWeights();
  auto input = test::convNetInput();
  auto bound = convNetBindings(weights, input);
  auto reference = evaluate(*program, bound, Numerics::kF32);
  auto fixed = evaluate(*program, bound, Numerics::kQ16);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  double maxError = 0;
  for (size_t i = 0; i < 5; ++i)
    maxError = std::max(maxError, std::fabs(double(fixed->outputs[0].data[i]) -
                                            reference->outputs[0].data[i]));
  // Sigmoid outputs in (0, 1): 16-bit steps through five layers stay
  // within 2^-9; exact agreement would mean nothing was quantized.
  EXPECT_LT(maxError, 1.0 / 512);
  EXPECT_GT(maxError, 0.0);
  // The batch norm was folded into the convolution, as the device folds it
  // (the reference too, so the cycle estimate charges nothing for it).
  EXPECT_EQ(fixed->work[1].op, "BatchNormalization (folded)");
  EXPECT_EQ(reference->work[1].op, "BatchNormalization (folded)");
  EXPECT_EQ(layerCycles(reference->work[1], 0), 0);
  EXPECT_EQ(reference->work[0].macs, 4 * 64 * 27);
  EXPECT_EQ(reference->work[5].macs, 5 * 64);
}

TEST(FixedPointModelTest, ReferenceMatchesHandComputedConvAndPool) {
  // A 1x1x3x3 input: a 2x2 all-ones kernel (stride 1, no padding), and a
  // ceil-mode 2x2 max pool with stride 2 (2x2 where floor mode gives 1x1;
  // the windows past the edge hold what the input has there).
  OnnxBuilder b;
  b.input("x", {1, 1, 3, 3});
  b.constant("k", {1, 1, 2, 2}, {1, 1, 1, 1});
  b.node("Conv", {"x", "k"}, "c");
  auto &pool = b.node("MaxPool", {"x"}, "p");
  OnnxBuilder::ints(pool, "kernel_shape", {2, 2});
  OnnxBuilder::ints(pool, "strides", {2, 2});
  OnnxBuilder::integer(pool, "ceil_mode", 1);
  b.output("c", {1, 1, 2, 2});
  b.output("p", {1, 1, 2, 2});
  auto program = MdlaProgram::parse(b.bytes());
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto result = evaluate(*program, {{"x", TensorView{{1, 1, 3, 3}, x.data()}}}, Numerics::kF32);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outputs[0].data, (std::vector<float>{12, 16, 24, 28}));
  EXPECT_EQ(result->outputs[1].data, (std::vector<float>{5, 6, 8, 9}));
}

TEST(FixedPointModelTest, NamesAMissingOrMisshapenInput) {
  auto program = MdlaProgram::parse(test::axpyModel(4));
  ASSERT_TRUE(program.ok());
  std::vector<float> a(4), x(3);
  auto missing = evaluate(*program, {{"a", TensorView{{4}, a.data()}}}, Numerics::kQ16);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("input 'x' is not bound"), std::string::npos);
  auto misshapen = evaluate(*program, {{"a", TensorView{{4}, a.data()}},
                                       {"x", TensorView{{3}, x.data()}}},
                            Numerics::kQ16);
  ASSERT_FALSE(misshapen.ok());
  EXPECT_NE(misshapen.status().message().find("input 'x' is [3], the model takes [4]"),
            std::string::npos) << misshapen.status();
}

TEST(FixedPointModelTest, RefusesWorkPastItsBudgetNamingTheLayer) {
  auto program = MdlaProgram::parse(test::convNetModel());
  ASSERT_TRUE(program.ok());
  auto weights = test::convNetWeights();
  auto input = test::convNetInput();
  // The convolution alone is 6912 MACs plus its im2col copy.
  auto result = evaluate(*program, convNetBindings(weights, input), Numerics::kF32, 5000);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("layer 'conv' (Conv): the evaluation would exceed "
                                           "its work budget"),
            std::string::npos) << result.status();
  EXPECT_TRUE(evaluate(*program, convNetBindings(weights, input), Numerics::kF32, 100000).ok());
}

TEST(CycleModelTest, ALayerCostsTheLargerOfComputeAndMemoryPlusSetup) {
  CycleModel model;
  LayerWork conv;
  conv.macs = 64 * 1024 * 100;  // 64 output channels: every lane busy
  conv.outputChannels = 64;
  conv.activationBytes = 32 * 10;
  EXPECT_EQ(layerCycles(conv, conv.outputChannels, model), 6400 + 256);
  // 65 channels take two lane groups: 128/65 of the MACs' time.
  conv.macs = 65 * 1024 * 100;
  conv.outputChannels = 65;
  EXPECT_EQ(layerCycles(conv, conv.outputChannels, model), 12800 + 256);
  LayerWork copy;
  copy.activationBytes = 32 * 1000;  // memory-bound
  EXPECT_EQ(layerCycles(copy, 0, model), 1000 + 256);
  EXPECT_EQ(layerCycles(LayerWork{}, 0, model), 0);  // a reshape
  EXPECT_EQ(estimateCycles({copy, LayerWork{}}, model), 1256u);
}

} // namespace
} // namespace kiln::agent::mdla
