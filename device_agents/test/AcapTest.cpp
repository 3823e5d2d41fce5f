//===- AcapTest.cpp - the AI Engine array model, simulator and acap agent --===//
//
// Tests of Kiln's model of an AI Engine array (site products, plan checks),
// the simulator's numerics against hand-computed bf16 arithmetic, and the
// acap backend on real xclbins that kiln-compile builds: XRT reads them, the
// simulated device runs them and counts, and what it refuses.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/acap/AcapBackend.h"
#include "kiln/agent/acap/AcapArtifact.h"
#include "kiln/agent/acap/AieArraySimulator.h"
#include "kiln/common/AieArray.h"
#include "kiln/common/ChildProcess.h"
#include "kiln/common/TensorTypes.h"

#include "google/protobuf/text_format.h"

#include <gtest/gtest.h>

#include <xrt/xclbin.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>

namespace kiln::agent::acap {
namespace {

using test::TempDir;

const v1::AieArray &array() { return *aie::lookupArray(aie::kDefaultArray); }

std::vector<int64_t> matmulGeometry(int64_t m, int64_t n, int64_t k,
                                    int64_t hasResidual = 0) {
  return {1, m, n, k, 0, 0, 0, 0, hasResidual, 0};
}

/// A 2-D convolution's kiln_rt_convolution fields.
std::vector<int64_t> convGeometry(int64_t in, int64_t out, int64_t groups,
                                  int64_t side, int64_t kernel, int64_t pad,
                                  int64_t outSide, bool bias,
                                  kiln_rt_epilogue epilogue = {}) {
  return {2, 1, in, out, groups, bias ? 1 : 0,
          side, side, 1, kernel, kernel, 1, outSide, outSide, 1,
          1, 1, 1, pad, pad, 0, pad, pad, 0, 1, 1, 1,
          epilogue.has_scale_shift, epilogue.has_residual, epilogue.activation,
          /*channels_last=*/0};
}

int64_t bitsOf(double value) { return std::bit_cast<int64_t>(value); }

/// A kiln_rt_elementwise's fields: `steps` as {op, lhs, rhs, scalar}.
std::vector<int64_t> chainGeometry(int64_t elements, int64_t inputs,
                                   std::vector<kiln_rt_elementwise_step> steps) {
  kiln_rt_elementwise chain{};
  chain.elements = elements;
  chain.inputs = inputs;
  chain.steps = int64_t(steps.size());
  std::copy(steps.begin(), steps.end(), chain.step);
  const auto *fields = reinterpret_cast<const int64_t *>(&chain);
  return {fields, fields + KILN_RT_ELEMENTWISE_FIELDS};
}

v1::AiePlan planOf(std::vector<std::pair<std::string, std::vector<int64_t>>> sites) {
  v1::AiePlan plan;
  *plan.mutable_array() = array();
  int first = 0;
  for (auto &[kind, geometry] : sites) {
    v1::AieSite &site = *plan.add_sites();
    site.set_index(plan.sites_size() - 1);
    site.set_kind(kind);
    site.mutable_geometry()->Add(geometry.begin(), geometry.end());
    site.set_block_m(8);
    site.set_block_n(8);
    site.set_block_k(8);
    site.set_dma_in_channels(2);
    site.set_dma_out_channels(1);
    site.set_first_tile(first++);
    site.set_tiles(1);
    site.set_estimated_cycles(1000 + first);
  }
  return plan;
}

float bf16(float v) {
  uint32_t bits = std::bit_cast<uint32_t>(v);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

TEST(AieArrayModelTest, SeesSitesAsProducts) {
  auto conv = aie::siteProducts("convolution", convGeometry(8, 16, 2, 6, 3, 1, 6, true));
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ(conv->problems, 2); // batch 1 x 2 groups
  EXPECT_EQ(conv->m, 36);       // 6 x 6 output pixels
  EXPECT_EQ(conv->n, 8);        // output channels per group
  EXPECT_EQ(conv->k, 4 * 9);    // input channels per group x window
  auto product = aie::siteProducts("matmul", matmulGeometry(5, 7, 9, 1));
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->m * product->n * product->k, 5 * 7 * 9);
  EXPECT_TRUE(product->hasResidual);

  const std::vector<int64_t> three = {1, 2, 3};
  EXPECT_EQ(aie::siteProducts("matmul", three).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(aie::siteProducts("convolution", convGeometry(8, 16, 3, 6, 3, 1, 6, false))
                .status().message(),
            "a convolution call site's geometry has 3 groups for 8 -> 16 channels");
  EXPECT_EQ(aie::siteProducts("fft", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Past Kiln's bounds (2^20 per extent, 2^50 MACs): refused, not overflowed.
  const std::vector<int64_t> huge = matmulGeometry(1 << 20, 1 << 20, 1 << 20);
  EXPECT_EQ(aie::siteProducts("matmul", huge).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Channels-last data is oneDNN's; the array streams channels first.
  std::vector<int64_t> last = convGeometry(8, 16, 2, 6, 3, 1, 6, true);
  last.back() = 1;
  EXPECT_EQ(aie::siteProducts("convolution", last).status().message(),
            "a convolution call site's geometry is channels last, which the "
            "array does not take");
  std::vector<int64_t> window = convGeometry(8, 8, 1, 6, 3, 1, 6, false);
  window[9] = window[10] = window[11] = 1 << 20; // a 2^60 window
  EXPECT_EQ(aie::siteProducts("convolution", window).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AieArrayModelTest, SeesChainsAsStreamsAndChecksTheirSteps) {
  auto chain = aie::siteProducts(
      "elementwise", chainGeometry(1000, 2, {{KILN_RT_ELEMENTWISE_ADD, 0, 1, bitsOf(1.0)},
                                             {KILN_RT_ELEMENTWISE_RELU, 2, 0, 0}}));
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_TRUE(chain->elementwise);
  EXPECT_EQ(chain->m, 1000);
  EXPECT_EQ(chain->k, 2);
  EXPECT_EQ(chain->inputs, 2);
  // Double-buffered f32 blocks of both inputs and the output.
  EXPECT_EQ(aie::blockMemoryBytes(*chain, 256, 1, 1), 2 * 3 * 256 * 4);
  // One tile, blocks of 256: 1000 elements of two inputs on two channels
  // (1000 cycles), 2 steps of 63 vector ops, 1000 cycles out, the last
  // block's 256 drain cycles, 256 of setup.
  v1::AieSite site;
  site.set_block_m(256);
  site.set_tiles(1);
  EXPECT_EQ(aie::siteCycles(*chain, site, array()), 256 + 1000 + 256);
  // Four tiles, a block each (512 cycles), but in one column: its
  // interface tile brings 2 x 4000 bytes from DDR on 2 channels of 4 bytes.
  site.set_tiles(4);
  EXPECT_EQ(aie::siteCycles(*chain, site, array()), 256 + 1000);
  site.set_tiles(16); // two columns: 500 cycles of DDR, under the tiles' 512
  EXPECT_EQ(aie::siteCycles(*chain, site, array()), 256 + 512);

  auto refused = [](std::vector<int64_t> geometry) {
    return std::string(aie::siteProducts("elementwise", geometry).status().message());
  };
  EXPECT_EQ(refused(chainGeometry(8, 1, {{KILN_RT_ELEMENTWISE_RELU, 1, 0, 0}})),
            "a elementwise call site's geometry has step 0 reading register 1 and 0 of 1");
  EXPECT_EQ(refused(chainGeometry(8, 1, {{KILN_RT_ELEMENTWISE_MUL, 0, 1, 0}})),
            "a elementwise call site's geometry has step 0 reading register 0 and 1 of 1");
  EXPECT_EQ(refused(chainGeometry(8, 1, {{99, 0, 0, 0}})),
            "a elementwise call site's geometry has step 0 of unknown op 99");
  EXPECT_EQ(refused(chainGeometry(8, 5, {{KILN_RT_ELEMENTWISE_NEG, 0, 0, 0}})),
            "a elementwise call site's geometry has 5 inputs");
  EXPECT_EQ(refused(chainGeometry(0, 1, {{KILN_RT_ELEMENTWISE_NEG, 0, 0, 0}})),
            "a elementwise call site's geometry has 0 elements");
  EXPECT_EQ(refused(chainGeometry(8, 1, {})), "a elementwise call site's geometry has 0 steps");
  std::vector<int64_t> stray = chainGeometry(8, 1, {{KILN_RT_ELEMENTWISE_NEG, 0, 0, 0}});
  stray.back() = 7; // the last unused step's scalar
  EXPECT_EQ(refused(stray), "a elementwise call site's geometry has an unused step 7 that is not 0");
  EXPECT_EQ(refused({1, 2, 3}), "a elementwise call site's geometry has 3 fields, not 35");
}

TEST(AieArrayModelTest, ChecksThatAPlanFits) {
  v1::AiePlan plan = planOf({{"matmul", matmulGeometry(4, 4, 4)},
                             {"matmul", matmulGeometry(8, 8, 8)}});
  EXPECT_TRUE(aie::checkPlanFits(plan, array()).ok());

  v1::AiePlan other = plan;
  other.mutable_array()->set_name("aie-ml-999");
  EXPECT_EQ(aie::checkPlanFits(other, array()).message(),
            "the plan is for AI Engine array 'aie-ml-999', this device's array is 'aie-ml-304'");

  v1::AiePlan shared = plan;
  shared.mutable_sites(1)->set_first_tile(0);
  EXPECT_EQ(aie::checkPlanFits(shared, array()).code(),
            absl::StatusCode::kFailedPrecondition);

  v1::AiePlan wild = plan;
  wild.mutable_sites(0)->set_block_m(1 << 30);
  EXPECT_EQ(aie::checkPlanFits(wild, array()).code(), absl::StatusCode::kInvalidArgument);

  v1::AiePlan big = plan;
  big.mutable_sites(0)->set_block_m(128);
  big.mutable_sites(0)->set_block_n(128);
  big.mutable_sites(0)->set_block_k(256);
  absl::Status memory = aie::checkPlanFits(big, array());
  EXPECT_EQ(memory.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(memory.message().find("bytes of data memory per tile; a tile has 63488"),
            std::string::npos) << memory;

  v1::AiePlan channels = plan;
  channels.mutable_sites(1)->set_dma_in_channels(3);
  EXPECT_NE(aie::checkPlanFits(channels, array()).message().find(
                "uses 3 input and 1 output DMA channels per tile; a tile has 2 and 2"),
            std::string::npos);

  v1::AiePlan outside = plan;
  outside.mutable_sites(1)->set_first_tile(304);
  EXPECT_NE(aie::checkPlanFits(outside, array()).message().find("the array has 304 tiles"),
            std::string::npos);
}

TEST(AieArraySimulatorTest, ProductsRoundOperandsToBf16AndAccumulateInF32) {
  // 1 + 2^-9 is not a bfloat16 (8 bits of mantissa): it rounds to 1 on the
  // array and stays itself in the f32 reference.
  const float odd = 1.0f + std::ldexp(1.0f, -9);
  std::vector<int64_t> geometry = matmulGeometry(2, 2, 3);
  AieArraySimulator simulator(planOf({{"matmul", geometry}}), 2);
  std::vector<float> a = {odd, 2.0f, 3.0f, -1.0f, 0.5f, odd};
  std::vector<float> b = {1.0f, odd, 2.0f, -2.0f, 0.25f, 4.0f};
  void *state = nullptr;
  auto call = [&](bool reference) {
    std::vector<float> c(4, -99.0f);
    AieArraySimulator::RunCounters counters;
    counters.reference = reference;
    AieArraySimulator::RunScope scope(counters);
    simulator.table()->matmul_f32(
        simulator.table(), reinterpret_cast<const kiln_rt_matmul *>(geometry.data()),
        &state, a.data(), b.data(), nullptr, nullptr, nullptr, nullptr, c.data());
    return std::make_pair(c, counters);
  };
  auto [array, counted] = call(false);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      float expected = 0;
      for (int k = 0; k < 3; ++k)
        expected += bf16(a[i * 3 + k]) * bf16(b[k * 2 + j]);
      EXPECT_EQ(array[i * 2 + j], expected) << i << "," << j;
    }
  EXPECT_EQ(counted.cycles, 1001);
  EXPECT_EQ(counted.calls, 1);
  auto [reference, uncounted] = call(true);
  EXPECT_FLOAT_EQ(reference[0], odd * 1.0f + 2.0f * 2.0f + 3.0f * 0.25f);
  EXPECT_NE(reference[0], array[0]);
  EXPECT_EQ(uncounted.cycles, 0);
}

TEST(AieArraySimulatorTest, ConvolutionsAreImplicitProductsWithTheirEpilogue) {
  // 2 -> 2 channels, 3x3 input, 3x3 kernel, padding 1; values small
  // integers, so every product and sum is exact.
  kiln_rt_epilogue epilogue{1, 1, KILN_RT_ACTIVATION_HARDSWISH};
  std::vector<int64_t> geometry = convGeometry(2, 2, 1, 3, 3, 1, 3, true, epilogue);
  AieArraySimulator simulator(planOf({{"convolution", geometry}}), 3);
  std::vector<float> input(18), weight(36), bias = {1, -2}, scale = {0.5f, 2},
                                shift = {-1, 0.25f}, residual(18), output(18);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = float(int(i % 5) - 2);
  for (size_t i = 0; i < weight.size(); ++i)
    weight[i] = float(int(i % 3) - 1);
  for (size_t i = 0; i < residual.size(); ++i)
    residual[i] = float(i % 4) * 0.5f;
  void *state = nullptr;
  AieArraySimulator::RunCounters counters;
  {
    AieArraySimulator::RunScope scope(counters);
    simulator.table()->convolution_f32(
        simulator.table(), reinterpret_cast<const kiln_rt_convolution *>(geometry.data()),
        &state, input.data(), weight.data(), bias.data(), scale.data(), shift.data(),
        residual.data(), output.data());
  }
  ASSERT_TRUE(counters.error.empty()) << counters.error;
  for (int o = 0; o < 2; ++o)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 3; ++x) {
        double sum = 0;
        for (int c = 0; c < 2; ++c)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              int iy = y - 1 + ky, ix = x - 1 + kx;
              if (iy >= 0 && iy < 3 && ix >= 0 && ix < 3)
                sum += input[(c * 3 + iy) * 3 + ix] * weight[((o * 2 + c) * 3 + ky) * 3 + kx];
            }
        double v = (sum + bias[o]) * scale[o] + shift[o] + residual[(o * 3 + y) * 3 + x];
        v = v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
        EXPECT_NEAR(output[(o * 3 + y) * 3 + x], v, 1e-6) << o << "," << y << "," << x;
      }
}

TEST(AieArraySimulatorTest, ChainsComputeInF32AndKeepNaNAsPyTorchDoes) {
  // out = max(clamp(relu(a - 2 b), max=1.5), c) * -0.5, then 3 - out.
  std::vector<int64_t> geometry = chainGeometry(
      6, 3,
      {{KILN_RT_ELEMENTWISE_SUB, 0, 1, bitsOf(2.0)},
       {KILN_RT_ELEMENTWISE_RELU, 3, 0, 0},
       {KILN_RT_ELEMENTWISE_CLAMP_MAX, 4, 0, bitsOf(1.5)},
       {KILN_RT_ELEMENTWISE_MAXIMUM, 5, 2, 0},
       {KILN_RT_ELEMENTWISE_MUL_SCALAR, 6, 0, bitsOf(-0.5)},
       {KILN_RT_ELEMENTWISE_RSUB_SCALAR, 7, 0, bitsOf(3.0)}});
  AieArraySimulator simulator(planOf({{"elementwise", geometry}}), 2);
  const float nan = std::nanf("");
  // 1 + 2^-9 is not a bfloat16: a chain keeps it (f32, not rounded).
  const float odd = 1.0f + std::ldexp(1.0f, -9);
  std::vector<float> a = {nan, -4.0f, 1.0f, 10.0f, odd, 0.5f};
  std::vector<float> b = {0.0f, 0.0f, 0.25f, 0.0f, 0.0f, 0.0f};
  std::vector<float> c = {0.0f, -1.0f, 0.0f, 2.0f, -9.0f, nan};
  auto run = [&](bool reference) {
    std::vector<float> out(6, -99.0f);
    void *state = nullptr;
    AieArraySimulator::RunCounters counters;
    counters.reference = reference;
    AieArraySimulator::RunScope scope(counters);
    simulator.table()->elementwise_f32(
        simulator.table(), reinterpret_cast<const kiln_rt_elementwise *>(geometry.data()),
        &state, a.data(), b.data(), c.data(), nullptr, out.data());
    EXPECT_TRUE(counters.error.empty()) << counters.error;
    return std::make_pair(out, counters.cycles);
  };
  auto [out, cycles] = run(false);
  EXPECT_TRUE(std::isnan(out[0]));          // relu(NaN) is NaN
  EXPECT_EQ(out[1], 3.0f - 0.0f * -0.5f);   // relu(-4) = 0, max(0, -1) = 0
  EXPECT_EQ(out[2], 3.0f - 0.5f * -0.5f);   // 1 - 2 * 0.25
  EXPECT_EQ(out[3], 3.0f - 2.0f * -0.5f);   // clamp(10) = 1.5 < c = 2
  EXPECT_EQ(out[4], 3.0f - odd * -0.5f);    // not rounded to bf16
  EXPECT_TRUE(std::isnan(out[5]));          // maximum(x, NaN) is NaN
  EXPECT_EQ(cycles, 1001);
  auto [reference, uncounted] = run(true);
  for (size_t i = 1; i < 5; ++i)
    EXPECT_EQ(reference[i], out[i]) << i;
  EXPECT_EQ(uncounted, 0);
}

TEST(AieArraySimulatorTest, TheArraysReluEpilogueKeepsNaN) {
  kiln_rt_epilogue epilogue{0, 0, KILN_RT_ACTIVATION_RELU};
  std::vector<int64_t> geometry = matmulGeometry(1, 3, 1);
  std::copy(&epilogue.has_scale_shift, &epilogue.has_scale_shift + 3, geometry.begin() + 7);
  AieArraySimulator simulator(planOf({{"matmul", geometry}}), 1);
  std::vector<float> a = {1.0f}, b = {-2.0f, std::nanf(""), 3.0f}, c(3);
  void *state = nullptr;
  AieArraySimulator::RunCounters counters;
  AieArraySimulator::RunScope scope(counters);
  simulator.table()->matmul_f32(
      simulator.table(), reinterpret_cast<const kiln_rt_matmul *>(geometry.data()),
      &state, a.data(), b.data(), nullptr, nullptr, nullptr, nullptr, c.data());
  EXPECT_EQ(c[0], 0.0f);
  EXPECT_TRUE(std::isnan(c[1]));
  EXPECT_EQ(c[2], 3.0f);
}

TEST(AieArraySimulatorTest, CallSitesOfEqualGeometryEachTakeTheirOwnPlanSite) {
  // Two sites of one geometry with different tiles (and cycles), as the
  // planner may give repeated layers: a run through both call sites counts
  // both, each call site keeps its site.
  std::vector<int64_t> geometry = matmulGeometry(2, 2, 2);
  v1::AiePlan plan = planOf({{"matmul", geometry}, {"matmul", geometry}});
  plan.mutable_sites(1)->set_tiles(3);
  plan.mutable_sites(1)->set_estimated_cycles(5000);
  AieArraySimulator simulator(plan, 1);
  std::vector<float> a(4, 1), b(4, 1), c(4);
  void *first = nullptr, *second = nullptr;
  AieArraySimulator::RunCounters counters;
  {
    AieArraySimulator::RunScope scope(counters);
    for (int call = 0; call < 2; ++call)
      for (void **state : {&first, &second})
        simulator.table()->matmul_f32(
            simulator.table(), reinterpret_cast<const kiln_rt_matmul *>(geometry.data()),
            state, a.data(), b.data(), nullptr, nullptr, nullptr, nullptr, c.data());
  }
  EXPECT_EQ(counters.cycles, 2 * (1001 + 5000));
  EXPECT_NE(first, second);
  EXPECT_EQ(c, std::vector<float>(4, 2));
}

TEST(AieArraySimulatorTest, ACallThePlanLacksFailsTheRun) {
  AieArraySimulator simulator(planOf({{"matmul", matmulGeometry(2, 2, 2)}}), 1);
  std::vector<int64_t> other = matmulGeometry(2, 2, 3);
  std::vector<float> a(6, 1), b(6, 1), c(4, -7);
  void *state = nullptr;
  AieArraySimulator::RunCounters counters;
  {
    AieArraySimulator::RunScope scope(counters);
    simulator.table()->matmul_f32(
        simulator.table(), reinterpret_cast<const kiln_rt_matmul *>(other.data()),
        &state, a.data(), b.data(), nullptr, nullptr, nullptr, nullptr, c.data());
  }
  EXPECT_EQ(counters.error, "the host code made a matmul call with geometry "
                            "[1, 2, 2, 3, 0, 0, 0, 0, 0, 0] that its AI Engine "
                            "plan has no site for");
  EXPECT_EQ(c, std::vector<float>(4, -7));
  EXPECT_EQ(state, nullptr);
}

/// An acap xclbin kiln-compile builds from `graph` (a test graph of the
/// compiler's lit tests), and its manifest.
struct Compiled {
  std::filesystem::path xclbin;
  v1::ExecutableRecord record;
};

absl::StatusOr<Compiled> compileForAcap(const TempDir &dir, const std::string &graph,
                                        const std::string &hostCpu) {
  Compiled out;
  out.xclbin = dir.path() / "model.xclbin";
  std::filesystem::path log = dir.path() / "compile.log";
  auto exit = runChildProcess(
      {KILN_TEST_KILN_COMPILE, std::string(KILN_TEST_COMPILER_TESTS) + "/" + graph,
       "--target", "acap", "--acap-host-cpu", hostCpu, "-o", out.xclbin.string()},
      log);
  if (!exit.ok())
    return exit.status();
  if (!exit->succeeded())
    return absl::InternalError(test::readFileBytes(log));
  std::string manifest = test::readFileBytes(out.xclbin.string() + ".manifest.textproto");
  if (!google::protobuf::TextFormat::ParseFromString(manifest,
                                                     out.record.mutable_manifest()))
    return absl::InternalError("unreadable manifest");
  return out;
}

TEST(AcapArtifactTest, XrtReadsKilnsXclbin) {
  TempDir dir;
  auto compiled = compileForAcap(dir, "Analysis/op-report-conv.textproto", "x86-64-v2");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto artifact = readAcapArtifact(compiled->xclbin);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_EQ(artifact->platform, "kiln:acap:aie-ml-304:1");
  EXPECT_EQ(artifact->uuid.size(), 36u);
  EXPECT_EQ(artifact->hostSymbol, "kiln_invoke");
  EXPECT_EQ(artifact->hostImage.substr(0, 4), "\x7f" "ELF");
  // The convolution, and the relu after the pooling as a chain of its own
  // (sites in the order of their geometry globals in the host code).
  ASSERT_EQ(artifact->plan.sites_size(), 2);
  EXPECT_EQ(artifact->plan.sites(0).kind(), "elementwise");
  EXPECT_EQ(artifact->plan.sites(1).kind(), "convolution");

  // Refused with what is wrong, and never read past the file: a magic
  // with nothing after it (which XRT 2.13 itself accepts), a header whose
  // sizes exceed the file, and no magic at all.
  auto refusal = [&](const std::string &bytes) {
    test::writeFileBytes(dir.path() / "bad.xclbin", bytes);
    auto read = readAcapArtifact(dir.path() / "bad.xclbin");
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(read.status().message());
  };
  EXPECT_NE(refusal("xclbin2 but nothing else").find("shorter than an xclbin header"),
            std::string::npos);
  std::string truncated = test::readFileBytes(compiled->xclbin);
  truncated.resize(truncated.size() - 100);
  EXPECT_NE(refusal(truncated).find("the file has"), std::string::npos);
  EXPECT_NE(refusal(std::string(600, 'x')).find("does not start with the xclbin2 magic"),
            std::string::npos);
  // A header that claims more than the file: XRT 2.13 itself copies past
  // the end of such a file (found by fuzz_acap_artifact).
  std::string longer = test::readFileBytes(compiled->xclbin);
  uint64_t claimed = longer.size() + 4096;
  std::memcpy(longer.data() + offsetof(axlf, m_header) + offsetof(axlf_header, m_length),
              &claimed, sizeof claimed);
  EXPECT_NE(refusal(longer).find("the file has"), std::string::npos);
  // A section kind XRT would parse (IP_LAYOUT) is refused before it does.
  std::string foreign = test::readFileBytes(compiled->xclbin);
  uint32_t ipLayout = IP_LAYOUT;
  std::memcpy(foreign.data() + offsetof(axlf, m_sections) +
                  offsetof(axlf_section_header, m_sectionKind),
              &ipLayout, sizeof ipLayout);
  EXPECT_NE(refusal(foreign).find("which Kiln's acap target does not write"),
            std::string::npos);
}

TEST(AcapBackendTest, WithoutABoardOrSimulateServesNothingAndSaysWhy) {
  auto backend = AcapBackend::create({});
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto devices = (*backend)->describeDevices();
  ASSERT_TRUE(devices.ok());
  EXPECT_TRUE(devices->empty());
  EXPECT_NE((*backend)->unavailableReason().find("XRT found no Versal board"),
            std::string::npos) << (*backend)->unavailableReason();
  EXPECT_NE((*backend)->unavailableReason().find("--simulate"), std::string::npos);

  AcapBackendConfig unknown;
  unknown.array = "aie-2";
  EXPECT_EQ(AcapBackend::create(unknown).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AcapBackendTest, TheSimulatedArrayRunsKilnsXclbinAndCounts) {
  AcapBackendConfig config;
  config.simulate = true;
  config.threads = 2;
  auto backend = AcapBackend::create(config);
  ASSERT_TRUE(backend.ok());
  auto devices = (*backend)->describeDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  const auto &properties = (*devices)[0].properties();
  EXPECT_EQ(properties.at("simulated"), "true");
  EXPECT_EQ(properties.at("array"), "aie-ml-304");
  EXPECT_EQ(properties.at("kernel_libraries"), "aie");
  EXPECT_EQ(properties.at("numeric_type"), "bf16*bf16+f32");

  TempDir dir;
  auto compiled = compileForAcap(dir, "Analysis/op-report-conv.textproto", "x86-64-v2");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto loaded = (*backend)->loadExecutable(compiled->record, compiled->xclbin);
  ASSERT_TRUE(loaded.ok()) << loaded.status();

  const v1::ExecutableManifest &manifest = compiled->record.manifest();
  std::vector<std::vector<float>> storage;
  std::vector<void *> parameters, inputs, outputs;
  auto allocate = [&](const v1::ManifestArgument &arg, std::vector<void *> &into) {
    storage.emplace_back(size_t(elementCount(arg.type())));
    for (size_t i = 0; i < storage.back().size(); ++i)
      storage.back()[i] = float(int(i * 7 % 11) - 5) * 0.125f;
    into.push_back(storage.back().data());
  };
  storage.reserve(16);
  for (const auto &arg : manifest.parameters())
    allocate(arg, parameters);
  for (const auto &arg : manifest.inputs())
    allocate(arg, inputs);
  for (const auto &arg : manifest.outputs())
    allocate(arg, outputs);
  CallBuffers buffers{parameters, inputs, outputs};
  auto counters = (*backend)->run(**loaded, buffers);
  ASSERT_TRUE(counters.ok()) << counters.status();
  auto artifact = readAcapArtifact(compiled->xclbin);
  ASSERT_TRUE(artifact.ok());
  // One call of the one site per run.
  EXPECT_EQ(counters->estimated_cycles(), artifact->plan.estimated_cycles());
  EXPECT_GT(counters->estimated_cycles(), 0);
  EXPECT_EQ(counters->numeric_error().numeric_type(), "bf16*bf16+f32");
  EXPECT_GT(counters->numeric_error().max_abs_reference(), 0);
  EXPECT_LE(counters->numeric_error().max_abs_error(),
            std::ldexp(counters->numeric_error().max_abs_reference(), -6));
}

TEST(AcapBackendTest, RefusesWhatItCannotRun) {
  AcapBackendConfig config;
  config.simulate = true;
  auto backend = AcapBackend::create(config);
  ASSERT_TRUE(backend.ok());
  TempDir dir;
  // Host code for the board's Arm cores: not runnable on this machine.
  auto board = compileForAcap(dir, "Analysis/op-report-conv.textproto", "cortex-a72");
  ASSERT_TRUE(board.ok()) << board.status();
  auto loaded = (*backend)->loadExecutable(board->record, board->xclbin);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(loaded.status().message().find("compile with options.acap.host_cpu"),
            std::string::npos) << loaded.status();

  v1::ExecutableRecord elf = board->record;
  elf.mutable_manifest()->set_format("elf-shared-object");
  EXPECT_EQ((*backend)->loadExecutable(elf, board->xclbin).status().code(),
            absl::StatusCode::kFailedPrecondition);

  test::writeFileBytes(dir.path() / "bad.xclbin", std::string(600, 'x'));
  auto bad = (*backend)->loadExecutable(board->record, dir.path() / "bad.xclbin");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

} // namespace
} // namespace kiln::agent::acap
