//===- KernelLibraryTest.cpp - artifacts that call oneDNN through the agent -===//
//
// This file tests the kernel-library path of CpuBackend: shared objects
// built at test time around the real target-runtime source
// (compiler/runtime/kiln_rt_kernels.c) call kiln_rt_convolution_f32 as
// generated code does, and the results are checked against a reference
// convolution computed here in double precision.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/cpu/CpuBackend.h"

#include "../cpu/lib/OneDnnEpilogue.h"
#include "../cpu/lib/OneDnnSites.h"
#include "../cpu/lib/OneDnnSupport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

namespace kiln::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

/// The CPU the tests' backends serve: the host's, or the named
/// KILN_TEST_AGENT_CPU. ctest runs this file a second time as x86-64-v3,
/// which limits oneDNN to its AVX2 kernels on any host (the first backend
/// of a process sets the limit), so AVX-512 hosts test the AVX2 path too.
absl::StatusOr<CpuModel> testCpu() {
  const char *name = std::getenv("KILN_TEST_AGENT_CPU");
  return CpuBackend::advertisedCpu(name ? name : "");
}

/// The runtime source, self-contained (its header inlined).
std::string kernelRuntimeSource() {
  std::string header = test::readFileBytes(
      std::string(KILN_TEST_RUNTIME_DIR) + "/kiln_rt_kernels.h");
  std::string source = test::readFileBytes(
      std::string(KILN_TEST_RUNTIME_DIR) + "/kiln_rt_kernels.c");
  return absl::StrReplaceAll(source, {{"#include \"kiln_rt_kernels.h\"", header}});
}

struct Convolution {
  kiln_rt_convolution g{};
  int64_t inputSize() const {
    return g.batch * g.in_channels * g.input[0] * g.input[1] * g.input[2];
  }
  int64_t weightSize() const {
    return g.out_channels * (g.in_channels / g.groups) * g.kernel[0] *
           g.kernel[1] * g.kernel[2];
  }
  int64_t outputSize() const {
    return g.batch * g.out_channels * g.output[0] * g.output[1] * g.output[2];
  }
};

/// `spatial` dims of input `in`, kernel `k`, stride, padding, dilation;
/// the output size follows PyTorch's formula.
Convolution convolution(int64_t batch, int64_t channels, int64_t filters,
                        int64_t groups, bool bias, std::vector<int64_t> in,
                        std::vector<int64_t> k, int64_t stride, int64_t pad,
                        int64_t dilation) {
  Convolution c;
  c.g.spatial_rank = static_cast<int64_t>(in.size());
  c.g.batch = batch;
  c.g.in_channels = channels;
  c.g.out_channels = filters;
  c.g.groups = groups;
  c.g.has_bias = bias;
  for (int i = 0; i < 3; ++i) {
    bool used = i < static_cast<int>(in.size());
    c.g.input[i] = used ? in[i] : 1;
    c.g.kernel[i] = used ? k[i] : 1;
    c.g.stride[i] = used ? stride : 1;
    c.g.pad_begin[i] = c.g.pad_end[i] = used ? pad : 0;
    c.g.dilation[i] = used ? dilation : 1;
    c.g.output[i] =
        used ? (in[i] + 2 * pad - dilation * (k[i] - 1) - 1) / stride + 1 : 1;
  }
  return c;
}

/// A geometry struct as the int64 array the compiler writes.
template <typename Geometry> std::vector<int64_t> fieldsOf(const Geometry &g) {
  std::vector<int64_t> fields(sizeof g / sizeof(int64_t));
  std::memcpy(fields.data(), &g, sizeof g);
  return fields;
}

/// kiln_invoke(buffers = {weight, bias, scale, shift, input, residual,
/// output}) calling the runtime with `c`'s geometry, as generated code does.
std::string convolutionKernelSource(const Convolution &c) {
  return absl::StrCat(kernelRuntimeSource(), R"(
static const int64_t geometry[] = {)", absl::StrJoin(fieldsOf(c.g), ", "), R"(};
static void *state;
void kiln_invoke(void **b) {
  kiln_rt_convolution_f32(geometry, &state, b[4], b[0], b[1], b[2], b[3], b[5], b[6]);
}
)");
}

/// The epilogue in double precision on a reference result of shape
/// (outer, channels, inner).
void applyReferenceEpilogue(const kiln_rt_epilogue &e, std::vector<double> &y,
                            int64_t channels, int64_t inner,
                            const std::vector<float> &scale,
                            const std::vector<float> &shift,
                            const std::vector<float> &residual) {
  for (size_t at = 0; at < y.size(); ++at) {
    int64_t c = static_cast<int64_t>(at) / inner % channels;
    double v = y[at];
    if (e.has_scale_shift)
      v = v * scale[c] + shift[c];
    if (e.has_residual)
      v += residual[at];
    switch (e.activation) {
    case KILN_RT_ACTIVATION_HARDSWISH:
      v = v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0;
      break;
    case KILN_RT_ACTIVATION_GELU:
      v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      break;
    case KILN_RT_ACTIVATION_GELU_TANH:
      v = 0.5 * v *
          (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
      break;
    default:
      break;
    }
    y[at] = v;
  }
}

std::vector<double> referenceConvolution(const kiln_rt_convolution &g,
                                         const std::vector<float> &x,
                                         const std::vector<float> &w,
                                         const std::vector<float> &b) {
  int64_t cin = g.in_channels / g.groups, cout = g.out_channels / g.groups;
  const int64_t *I = g.input, *K = g.kernel, *O = g.output;
  std::vector<double> y;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t f = 0; f < g.out_channels; ++f)
      for (int64_t o0 = 0; o0 < O[0]; ++o0)
        for (int64_t o1 = 0; o1 < O[1]; ++o1)
          for (int64_t o2 = 0; o2 < O[2]; ++o2) {
            double sum = g.has_bias ? b[f] : 0.0;
            for (int64_t c = 0; c < cin; ++c)
              for (int64_t k0 = 0; k0 < K[0]; ++k0)
                for (int64_t k1 = 0; k1 < K[1]; ++k1)
                  for (int64_t k2 = 0; k2 < K[2]; ++k2) {
                    int64_t i[3] = {o0 * g.stride[0] - g.pad_begin[0] + k0 * g.dilation[0],
                                    o1 * g.stride[1] - g.pad_begin[1] + k1 * g.dilation[1],
                                    o2 * g.stride[2] - g.pad_begin[2] + k2 * g.dilation[2]};
                    bool inside = true;
                    for (int d = 0; d < 3; ++d)
                      inside = inside && i[d] >= 0 && i[d] < I[d];
                    if (!inside)
                      continue;
                    int64_t channel = f / cout * cin + c;
                    sum += double(x[(((n * g.in_channels + channel) * I[0] + i[0]) * I[1] + i[1]) * I[2] + i[2]]) *
                           double(w[(((f * cin + c) * K[0] + k0) * K[1] + k1) * K[2] + k2]);
                  }
            y.push_back(sum);
          }
  return y;
}

/// kiln_invoke(buffers = {b, bias, scale, shift, a, residual, c}) calling
/// kiln_rt_matmul_f32 with `g`, as generated code does (b first: it is the
/// parameter).
std::string matmulKernelSource(const kiln_rt_matmul &g) {
  return absl::StrCat(kernelRuntimeSource(), R"(
static const int64_t geometry[] = {)", absl::StrJoin(fieldsOf(g), ", "), R"(};
static void *state;
void kiln_invoke(void **b) {
  kiln_rt_matmul_f32(geometry, &state, b[4], b[0], b[1], b[2], b[3], b[5], b[6]);
}
)");
}

std::vector<double> referenceMatmul(const kiln_rt_matmul &g,
                                    const std::vector<float> &a,
                                    const std::vector<float> &b,
                                    const std::vector<float> &bias) {
  std::vector<double> c;
  for (int64_t batch = 0; batch < g.batch; ++batch)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = g.has_bias ? bias[j] : 0.0;
        for (int64_t p = 0; p < g.k; ++p) {
          double x = g.a_transposed ? a[(batch * g.k + p) * g.m + i]
                                    : a[(batch * g.m + i) * g.k + p];
          double y = g.b_transposed ? b[(batch * g.n + j) * g.k + p]
                                    : b[(batch * g.k + p) * g.n + j];
          sum += x * y;
        }
        c.push_back(sum);
      }
  return c;
}

std::vector<float> randomFloats(int64_t n, std::mt19937 &random) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float &value : values)
    value = uniform(random);
  return values;
}

/// Random operands of a convolution call with an epilogue, drawn in this
/// order from `random`, and the call's result in double precision.
struct ConvolutionOperands {
  std::vector<float> x, w, b, scale, shift, residual;

  ConvolutionOperands(const Convolution &c, std::mt19937 &random)
      : x(randomFloats(c.inputSize(), random)),
        w(randomFloats(c.weightSize(), random)),
        b(randomFloats(c.g.out_channels, random)),
        scale(randomFloats(c.g.out_channels, random)),
        shift(randomFloats(c.g.out_channels, random)),
        residual(randomFloats(c.outputSize(), random)) {}

  std::vector<double> expected(const Convolution &c) const {
    std::vector<double> y = referenceConvolution(c.g, x, w, b);
    applyReferenceEpilogue(c.g.epilogue, y, c.g.out_channels,
                           c.g.output[0] * c.g.output[1] * c.g.output[2],
                           scale, shift, residual);
    return y;
  }
};

class KernelLibraryTest : public ::testing::Test {
protected:
  /// What loading the shared object built from `source` answers when its
  /// manifest names `library` and `convolutionAlgorithm` (`elements`: the
  /// axpy record's size).
  absl::Status loadStatus(const std::string &name, const std::string &source,
                          const std::string &library,
                          const std::string &convolutionAlgorithm = "",
                          int elements = 1) {
    auto path = test::compileSharedObject(dir.path(), name, source);
    if (!path.ok())
      return path.status();
    v1::ExecutableRecord record =
        test::axpyRecord(elements, test::readFileBytes(*path));
    record.mutable_manifest()->set_kernel_library(library);
    record.mutable_manifest()->set_convolution_algorithm(convolutionAlgorithm);
    CpuBackend backend;
    return backend.loadExecutable(record, *path).status();
  }

  /// A backend of `threads` compute threads and, loaded in it, the shared
  /// object built from `source` with a manifest naming oneDNN (null, with
  /// a test failure, when that fails).
  struct Loaded {
    std::unique_ptr<CpuBackend> backend;
    std::shared_ptr<LoadedExecutable> executable;
  };
  Loaded load(const std::string &name, const std::string &source,
              int threads, const std::string &convolutionAlgorithm = "") {
    absl::StatusOr<CpuModel> cpu = testCpu();
    if (!cpu.ok()) {
      ADD_FAILURE() << cpu.status();
      return Loaded{};
    }
    Loaded loaded{std::make_unique<CpuBackend>(*cpu, threads), {}};
    auto path = test::compileSharedObject(dir.path(), name, source);
    EXPECT_TRUE(path.ok()) << path.status();
    if (!path.ok())
      return loaded;
    v1::ExecutableRecord record =
        test::axpyRecord(1, test::readFileBytes(*path));
    record.mutable_manifest()->set_kernel_library("onednn");
    record.mutable_manifest()->set_convolution_algorithm(convolutionAlgorithm);
    auto executable = loaded.backend->loadExecutable(record, *path);
    EXPECT_TRUE(executable.ok()) << executable.status();
    if (executable.ok())
      loaded.executable = *executable;
    return loaded;
  }

  /// Builds `c`'s kernel, runs it on `threads` compute threads with random
  /// data and checks every element against the reference (f32 accumulation
  /// in another order: 1e-4 relative to the largest term sum).
  void expectMatchesReference(const Convolution &c, int threads,
                              const std::string &convolutionAlgorithm = "") {
    Loaded kernel = load("conv", convolutionKernelSource(c), threads,
                         convolutionAlgorithm);
    ASSERT_TRUE(kernel.executable);
    std::mt19937 random(7);
    ConvolutionOperands operands(c, random);
    auto &[x, w, b, scale, shift, residual] = operands;
    std::vector<float> y(c.outputSize(), NAN);
    std::vector<double> expected = operands.expected(c);
    int64_t spatial = c.g.output[0] * c.g.output[1] * c.g.output[2];
    if (c.g.channels_last) {
      // The reference is channels first: the call's data goes channels
      // last, and so does the expected output.
      int64_t inPixels = c.g.input[0] * c.g.input[1] * c.g.input[2];
      x = channelsLast(x, c.g.batch, c.g.in_channels, inPixels);
      residual = channelsLast(residual, c.g.batch, c.g.out_channels, spatial);
      expected = channelsLast(expected, c.g.batch, c.g.out_channels, spatial);
    }
    double terms = double(c.g.in_channels / c.g.groups) * c.g.kernel[0] *
                   c.g.kernel[1] * c.g.kernel[2];
    // Twice without parameter serials, then twice with (the weights
    // prepacked, a batch norm folded into them): the second call of each
    // reuses what the first prepared.
    uint64_t serials[] = {21, 22, 23, 24};
    for (int call = 0; call < 4; ++call) {
      std::fill(y.begin(), y.end(), NAN);
      void *parameters[] = {w.data(), b.data(), scale.data(), shift.data()};
      void *inputs[] = {x.data(), residual.data()};
      void *outputs[] = {y.data()};
      CallBuffers buffers{parameters, inputs, outputs};
      if (call >= 2)
        buffers.parameterSerials = serials;
      ASSERT_TRUE(kernel.backend->run(*kernel.executable, buffers).ok());
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_NEAR(y[i], expected[i], 1e-5 * (terms + 1))
            << "element " << i << " of call " << call;
    }
    // The direct loop and its epilogue (where oneDNN failed at the site;
    // the routing is OneDnnFallBackTest's), in the same layout.
    std::vector<float> direct(c.outputSize(), NAN);
    onednn::runDirectConvolution(c.g, x.data(), w.data(), b.data(),
                                 {scale.data(), shift.data(), residual.data()},
                                 direct.data());
    for (size_t i = 0; i < direct.size(); ++i)
      ASSERT_NEAR(direct[i], expected[i], 1e-5 * (terms + 1)) << "element " << i;
  }

  /// `values` of shape (batch, channels, pixels) stored as (batch, pixels,
  /// channels).
  template <typename T>
  static std::vector<T> channelsLast(const std::vector<T> &values,
                                     int64_t batch, int64_t channels,
                                     int64_t pixels) {
    std::vector<T> moved(values.size());
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t p = 0; p < pixels; ++p)
          moved[(n * pixels + p) * channels + c] =
              values[(n * channels + c) * pixels + p];
    return moved;
  }

  /// `g` on `threads` threads with random data, three calls: with the
  /// parameter's serial (prepacked when b is reordered), the same serial
  /// again, and none; each checked against the reference.
  void expectMatmulMatchesReference(const kiln_rt_matmul &g, int threads) {
    Loaded kernel = load("matmul", matmulKernelSource(g), threads);
    ASSERT_TRUE(kernel.executable);
    std::mt19937 random(11);
    std::vector<float> a = randomFloats(g.batch * g.m * g.k, random),
                       b = randomFloats(g.batch * g.k * g.n, random),
                       bias = randomFloats(g.n, random),
                       scale = randomFloats(g.n, random),
                       shift = randomFloats(g.n, random),
                       residual = randomFloats(g.batch * g.m * g.n, random),
                       c(g.batch * g.m * g.n);
    std::vector<double> expected = referenceMatmul(g, a, b, bias);
    applyReferenceEpilogue(g.epilogue, expected, g.n, 1, scale, shift,
                           residual);
    std::vector<uint64_t> serials = {41, 42, 43, 44};
    for (std::span<const uint64_t> named :
         {std::span<const uint64_t>(serials), std::span<const uint64_t>(serials),
          std::span<const uint64_t>()}) {
      std::fill(c.begin(), c.end(), NAN);
      void *parameters[] = {b.data(), bias.data(), scale.data(), shift.data()};
      void *inputs[] = {a.data(), residual.data()};
      void *outputs[] = {c.data()};
      CallBuffers buffers{parameters, inputs, outputs};
      buffers.parameterSerials = named;
      ASSERT_TRUE(kernel.backend->run(*kernel.executable, buffers).ok());
      for (size_t i = 0; i < c.size(); ++i)
        ASSERT_NEAR(c[i], expected[i], 1e-5 * (g.k + 1)) << "element " << i;
    }
  }

  test::TempDir dir;
};

TEST_F(KernelLibraryTest, LinearWithTransposedWeightAndBias) {
  // nn.Linear 96 -> 200 on 33 rows: b stored (n, k).
  expectMatmulMatchesReference({1, 33, 200, 96, 0, 1, 1}, 2);
}

TEST_F(KernelLibraryTest, PlainMatmulWithoutBias) {
  expectMatmulMatchesReference({1, 17, 40, 64, 0, 0, 0}, 1);
}

TEST_F(KernelLibraryTest, BatchedProductsWithTransposedOperands) {
  // Attention's scores (b transposed) and a transposed a, batch 6.
  expectMatmulMatchesReference({6, 20, 20, 16, 0, 1, 0}, 2);
  expectMatmulMatchesReference({6, 12, 9, 16, 1, 0, 1}, 1);
}

TEST_F(KernelLibraryTest, StridedPaddedConvolutionWithBias) {
  expectMatchesReference(
      convolution(2, 3, 16, 1, true, {11, 9}, {3, 3}, 2, 1, 1), 1);
}

TEST_F(KernelLibraryTest, WideConvolutionOnTwoThreads) {
  expectMatchesReference(
      convolution(1, 64, 64, 1, true, {14, 14}, {3, 3}, 1, 1, 1), 2);
}

TEST_F(KernelLibraryTest, GroupedDilatedOneDimensionalWithoutBias) {
  expectMatchesReference(
      convolution(2, 8, 12, 4, false, {20}, {3}, 1, 2, 2), 1);
}

TEST_F(KernelLibraryTest, DepthwiseThreeDimensional) {
  expectMatchesReference(
      convolution(1, 6, 6, 6, true, {5, 6, 7}, {3, 3, 3}, 1, 1, 1), 2);
}

TEST_F(KernelLibraryTest, PointwiseStrideTwo) {
  expectMatchesReference(
      convolution(3, 32, 48, 1, false, {9, 9}, {1, 1}, 2, 0, 1), 1);
}

/// `c` with an epilogue.
Convolution withEpilogue(Convolution c, kiln_rt_epilogue epilogue) {
  c.g.epilogue = epilogue;
  return c;
}

TEST_F(KernelLibraryTest, ResnetTailBatchNormAndResidualFused) {
  // 64 channels: oneDNN's own layout, so the residual is reordered into
  // the destination for the sum post-op.
  expectMatchesReference(
      withEpilogue(convolution(2, 64, 64, 1, false, {10, 10}, {3, 3}, 1, 1, 1),
                   {1, 1, KILN_RT_ACTIVATION_NONE}),
      2);
}

TEST_F(KernelLibraryTest, ResnetTailWithResidualAndHardswish) {
  expectMatchesReference(
      withEpilogue(convolution(1, 64, 32, 1, true, {9, 9}, {3, 3}, 1, 1, 1),
                   {1, 1, KILN_RT_ACTIVATION_HARDSWISH}),
      2);
}

TEST_F(KernelLibraryTest, FusedEpiloguesRunOnJitKernels) {
  // oneDNN 2.6's AVX2 convolutions take a sum post-op only as the first:
  // a batch norm's scale and shift then the residual left them only the
  // reference kernel, ~100x slower (resnet18 took 5 s on a Zen 3). The site
  // then applies the residual and activation as a separate oneDNN step.
  absl::StatusOr<CpuModel> cpu = testCpu();
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  CpuBackend backend(*cpu, 1); // limits oneDNN's ISA as an agent does
  for (kiln_rt_epilogue epilogue :
       {kiln_rt_epilogue{1, 1, KILN_RT_ACTIVATION_NONE},
        kiln_rt_epilogue{1, 1, KILN_RT_ACTIVATION_HARDSWISH},
        kiln_rt_epilogue{0, 1, KILN_RT_ACTIVATION_GELU},
        kiln_rt_epilogue{1, 0, KILN_RT_ACTIVATION_HARDSWISH}}) {
    Convolution c = withEpilogue(
        convolution(1, 64, 64, 1, false, {56, 56}, {3, 3}, 1, 1, 1), epilogue);
    onednn::ConvolutionSite site(c.g);
    EXPECT_THAT(site.implementation(), Not(StartsWith("ref")))
        << "epilogue {" << epilogue.has_scale_shift << ", "
        << epilogue.has_residual << ", " << epilogue.activation
        << "}, oneDNN ISA " << static_cast<int>(dnnl::get_effective_cpu_isa());
  }
}

TEST_F(KernelLibraryTest, LinearsWithPrepackedWeightsAvoidTheGenericGemm) {
  // oneDNN 2.6 runs an f32 matmul on AVX2 through its generic GEMM, which
  // repacks b on every call (40-69 GFLOP/s on a 91 GFLOP/s Zen 3 core); a
  // 2-D product with b a parameter runs as a 1x1 convolution there instead
  // (80-85). Every epilogue, both layouts of b, checked against the
  // reference too.
  absl::StatusOr<CpuModel> cpu = testCpu();
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  CpuBackend backend(*cpu, 1); // limits oneDNN's ISA as an agent does
  for (kiln_rt_matmul g : {kiln_rt_matmul{1, 64, 512, 256, 0, 1, 1},
                           kiln_rt_matmul{1, 7, 40, 24, 0, 0, 0},
                           kiln_rt_matmul{1, 30, 48, 16, 0, 1, 1,
                                          {1, 1, KILN_RT_ACTIVATION_HARDSWISH}},
                           kiln_rt_matmul{1, 30, 48, 16, 0, 0, 1,
                                          {1, 0, KILN_RT_ACTIVATION_GELU}}}) {
    expectMatmulMatchesReference(g, 2);
    std::mt19937 random(5);
    std::vector<float> a = randomFloats(g.m * g.k, random),
                       b = randomFloats(g.k * g.n, random),
                       bias = randomFloats(g.n, random),
                       scale = randomFloats(g.n, random),
                       shift = randomFloats(g.n, random),
                       residual = randomFloats(g.m * g.n, random),
                       c(g.m * g.n);
    onednn::MatmulSite site(g);
    void *parameters[] = {b.data()};
    uint64_t serials[] = {77};
    onednn::setCallParameters(parameters, serials);
    site.run(1, a.data(), b.data(), bias.data(),
             {scale.data(), shift.data(), residual.data()}, c.data());
    onednn::setCallParameters({}, {});
    EXPECT_THAT(site.implementation(), Not(StartsWith("gemm")))
        << "oneDNN ISA " << static_cast<int>(dnnl::get_effective_cpu_isa());
    EXPECT_THAT(site.implementation(), Not(StartsWith("ref")));
  }
}

TEST_F(KernelLibraryTest, SmallConvolutionWithResidualAndGelu) {
  // 3 output channels: a plain destination, the residual copied in.
  expectMatchesReference(
      withEpilogue(convolution(1, 4, 3, 1, true, {7, 6}, {3, 3}, 1, 1, 1),
                   {0, 1, KILN_RT_ACTIVATION_GELU}),
      1);
}

TEST_F(KernelLibraryTest, MobilenetDepthwiseBatchNormHardswish) {
  expectMatchesReference(
      withEpilogue(convolution(1, 16, 16, 16, false, {12, 12}, {3, 3}, 2, 1, 1),
                   {1, 0, KILN_RT_ACTIVATION_HARDSWISH}),
      2);
}

/// `c` with its data channels last.
Convolution withChannelsLast(Convolution c) {
  c.g.channels_last = 1;
  return c;
}

TEST_F(KernelLibraryTest, ChannelsLastConvolutionsWithEpilogues) {
  // What kiln-convert-aten-to-kernel-calls hands oneDNN on x86-64: a
  // strided stem, a depthwise layer with a batch norm and hardswish, a
  // resnet tail with a batch norm and a residual (the residual channels
  // last too), and 1-d and 3-d data.
  expectMatchesReference(
      withChannelsLast(convolution(2, 3, 16, 1, true, {11, 9}, {3, 3}, 2, 1, 1)), 1);
  expectMatchesReference(
      withChannelsLast(withEpilogue(
          convolution(1, 16, 16, 16, false, {12, 12}, {3, 3}, 2, 1, 1),
          {1, 0, KILN_RT_ACTIVATION_HARDSWISH})),
      2);
  expectMatchesReference(
      withChannelsLast(withEpilogue(
          convolution(2, 64, 64, 1, false, {10, 10}, {3, 3}, 1, 1, 1),
          {1, 1, KILN_RT_ACTIVATION_NONE})),
      2);
  expectMatchesReference(
      withChannelsLast(withEpilogue(
          convolution(1, 4, 3, 1, true, {7, 6}, {3, 3}, 1, 1, 1),
          {0, 1, KILN_RT_ACTIVATION_GELU})),
      1);
  expectMatchesReference(
      withChannelsLast(convolution(2, 8, 12, 4, false, {20}, {3}, 1, 2, 2)), 1);
  expectMatchesReference(
      withChannelsLast(convolution(1, 6, 6, 6, true, {5, 6, 7}, {3, 3, 3}, 1, 1, 1)),
      2);
}

TEST_F(KernelLibraryTest, LinearGeluAndLinearResidual) {
  kiln_rt_matmul gelu{1, 24, 64, 32, 0, 1, 1, {0, 0, KILN_RT_ACTIVATION_GELU}};
  expectMatmulMatchesReference(gelu, 2);
  kiln_rt_matmul residual{1, 24, 32, 64, 0, 1, 1, {0, 1, KILN_RT_ACTIVATION_NONE}};
  expectMatmulMatchesReference(residual, 1);
  kiln_rt_matmul batched{3, 10, 12, 8, 0, 0, 0,
                         {1, 1, KILN_RT_ACTIVATION_GELU_TANH}};
  expectMatmulMatchesReference(batched, 2);
}

TEST_F(KernelLibraryTest, FusedActivationsKeepNaNs) {
  // PyTorch's activations return NaN for NaN; the library's must too (its
  // relu and clip do not, which is why the ABI has neither).
  for (int64_t activation : {KILN_RT_ACTIVATION_HARDSWISH, KILN_RT_ACTIVATION_GELU,
                             KILN_RT_ACTIVATION_GELU_TANH}) {
    Convolution c = withEpilogue(
        convolution(1, 16, 16, 1, false, {4, 4}, {1, 1}, 1, 0, 1),
        {0, 0, activation});
    Loaded kernel = load("nan", convolutionKernelSource(c), 1);
    ASSERT_TRUE(kernel.executable);
    std::vector<float> x(c.inputSize(), 1.0f), w(c.weightSize(), 0.5f),
        y(c.outputSize());
    x[0] = NAN; // channel 0, position 0: every output channel's position 0
    void *parameters[] = {w.data(), nullptr, nullptr, nullptr};
    void *inputs[] = {x.data(), nullptr};
    void *outputs[] = {y.data()};
    ASSERT_TRUE(kernel.backend
                    ->run(*kernel.executable, CallBuffers{parameters, inputs, outputs})
                    .ok());
    for (int64_t f = 0; f < c.g.out_channels; ++f)
      EXPECT_TRUE(std::isnan(y[f * 16])) << "activation " << activation << " channel " << f << " gave " << y[f * 16];
    EXPECT_FALSE(std::isnan(y[1]));
  }
}

TEST_F(KernelLibraryTest, WeightsAreReorderedOncePerParameterSerial) {
  Convolution c = convolution(1, 64, 64, 1, true, {12, 12}, {3, 3}, 1, 1, 1);
  Loaded kernel = load("conv", convolutionKernelSource(c), 2);
  ASSERT_TRUE(kernel.executable);
  std::vector<float> x(c.inputSize(), 0.5f), w(c.weightSize(), 0.25f),
      b(c.g.out_channels, 1.0f), y(c.outputSize());
  auto run = [&](std::vector<uint64_t> serials) {
    // No epilogue: its operands are never read.
    void *parameters[] = {w.data(), b.data(), nullptr, nullptr};
    void *inputs[] = {x.data(), nullptr};
    void *outputs[] = {y.data()};
    CallBuffers buffers{parameters, inputs, outputs};
    buffers.parameterSerials = serials;
    EXPECT_TRUE(kernel.backend->run(*kernel.executable, buffers).ok());
    return y;
  };
  auto expected = [&] { return referenceConvolution(c.g, x, w, b); };
  // An interior output sums 64 channels x 9 taps of 0.5 * w, plus the bias.
  size_t interior = 13; // (row 1, column 1) of the first channel
  std::vector<double> first = expected();
  EXPECT_NEAR(run({7, 8, 0, 0})[interior], first[interior], 1e-3);
  // The contract: a serial names its bytes. Changing them under the same
  // serial shows the site kept its reordered copy...
  std::fill(w.begin(), w.end(), -0.5f);
  EXPECT_NEAR(run({7, 8, 0, 0})[interior], first[interior], 1e-3);
  // ...which a new serial, or a call without serials, does not use.
  std::vector<double> second = expected();
  ASSERT_GT(std::abs(second[interior] - first[interior]), 10.0);
  EXPECT_NEAR(run({9, 8, 0, 0})[interior], second[interior], 1e-3);
  std::fill(w.begin(), w.end(), 0.125f);
  std::vector<double> third = expected();
  EXPECT_NEAR(run({})[interior], third[interior], 1e-3);
}

TEST_F(KernelLibraryTest, BatchNormFoldsIntoWeightParameters) {
  // With the weights a parameter, a batch norm's scale and shift fold into
  // them and the bias (oneDNN's AVX2 binary post-ops cost 2-4x a 1x1
  // convolution). The folded copy is kept for the same serial and the same
  // scale, shift and bias values, and made again when any of them changes.
  Convolution c = withEpilogue(
      convolution(1, 16, 24, 1, true, {10, 10}, {1, 1}, 1, 0, 1),
      {1, 1, KILN_RT_ACTIVATION_HARDSWISH});
  std::mt19937 random(11);
  ConvolutionOperands operands(c, random);
  auto &[x, w, b, scale, shift, residual] = operands;
  std::vector<float> y(c.outputSize());
  onednn::ConvolutionSite site(c.g);
  auto runAndCheck = [&](uint64_t serial, const char *what) {
    void *parameters[] = {w.data()};
    uint64_t serials[] = {serial};
    onednn::setCallParameters(parameters, serials);
    std::fill(y.begin(), y.end(), NAN);
    site.run(2, x.data(), w.data(), b.data(),
             {scale.data(), shift.data(), residual.data()}, y.data());
    onednn::setCallParameters({}, {});
    std::vector<double> expected = operands.expected(c);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], expected[i], 1e-4) << what << ", element " << i;
  };
  runAndCheck(5, "first fold");
  EXPECT_THAT(site.implementation(), Not(StartsWith("ref")));
  runAndCheck(5, "kept fold");
  scale[3] = -2.0f;
  runAndCheck(5, "a new scale");
  shift[0] = 7.0f;
  runAndCheck(5, "a new shift");
  b[c.g.out_channels - 1] = 3.0f;
  runAndCheck(5, "a new bias");
  std::fill(w.begin(), w.end(), 0.5f);
  runAndCheck(6, "new weights");
  // Without a serial the weights are an activation: nothing is folded or
  // kept, and the scale and shift are post-ops.
  std::fill(w.begin(), w.end(), -0.25f);
  runAndCheck(0, "unnamed weights");
}

TEST_F(KernelLibraryTest, ConcurrentCallsOfOneSiteKeepTheirOwnBuffers) {
  // A site reuses its calls' oneDNN memory objects; calls in flight at once
  // (an agent runs tasks on several threads) must each get their own.
  Convolution c = withEpilogue(
      convolution(1, 8, 16, 1, true, {9, 9}, {3, 3}, 1, 1, 1),
      {1, 0, KILN_RT_ACTIVATION_NONE});
  kiln_rt_matmul g{1, 12, 24, 16, 0, 1, 1};
  std::mt19937 random(13);
  std::vector<float> w = randomFloats(c.weightSize(), random),
                     b = randomFloats(c.g.out_channels, random),
                     scale = randomFloats(c.g.out_channels, random),
                     shift = randomFloats(c.g.out_channels, random),
                     mb = randomFloats(g.k * g.n, random),
                     mbias = randomFloats(g.n, random);
  onednn::ConvolutionSite convolutionSite(c.g);
  onednn::MatmulSite matmulSite(g);
  int64_t spatial = c.g.output[0] * c.g.output[1];
  auto worker = [&](unsigned seed, int *mismatches) {
    std::mt19937 own(seed);
    void *parameters[] = {w.data(), mb.data()};
    uint64_t serials[] = {31, 32};
    onednn::setCallParameters(parameters, serials);
    for (int call = 0; call < 40; ++call) {
      std::vector<float> x = randomFloats(c.inputSize(), own),
                         y(c.outputSize(), NAN),
                         a = randomFloats(g.m * g.k, own), z(g.m * g.n, NAN);
      convolutionSite.run(1, x.data(), w.data(), b.data(),
                          {scale.data(), shift.data(), y.data()}, y.data());
      matmulSite.run(1, a.data(), mb.data(), mbias.data(),
                     {z.data(), z.data(), z.data()}, z.data());
      std::vector<double> want = referenceConvolution(c.g, x, w, b);
      applyReferenceEpilogue(c.g.epilogue, want, c.g.out_channels, spatial,
                             scale, shift, {});
      for (size_t i = 0; i < y.size(); ++i)
        *mismatches += std::abs(y[i] - want[i]) > 1e-4;
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          double sum = mbias[j];
          for (int64_t k = 0; k < g.k; ++k)
            sum += double(a[i * g.k + k]) * mb[j * g.k + k];
          *mismatches += std::abs(z[i * g.n + j] - sum) > 1e-4;
        }
    }
    onednn::setCallParameters({}, {});
  };
  int mismatches[3] = {0, 0, 0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 3; ++t)
    threads.emplace_back(worker, 100 + t, &mismatches[t]);
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(mismatches[0] + mismatches[1] + mismatches[2], 0);
}

TEST_F(KernelLibraryTest, TwoLoadsOfOneArtifactShareItsKernelLibrary) {
  // dlopen gives both loads one handle: one installed table, one set of
  // state slots. Releasing either load (the later one here, whose install
  // would have replaced the first's) must leave the other working; under
  // ASan a per-load library is a use-after-free.
  kiln_rt_matmul g{1, 9, 24, 32, 0, 1, 1};
  Loaded kernel = load("shared", matmulKernelSource(g), 2);
  ASSERT_TRUE(kernel.executable);
  auto path = dir.path() / "shared.so";
  v1::ExecutableRecord record = test::axpyRecord(1, test::readFileBytes(path));
  record.mutable_manifest()->set_kernel_library("onednn");
  std::mt19937 random(3);
  std::vector<float> a = randomFloats(g.m * g.k, random),
                     b = randomFloats(g.n * g.k, random),
                     bias = randomFloats(g.n, random), c(g.m * g.n);
  std::vector<double> expected = referenceMatmul(g, a, b, bias);
  auto run = [&](LoadedExecutable &executable) {
    std::fill(c.begin(), c.end(), NAN);
    void *parameters[] = {b.data(), bias.data(), nullptr, nullptr};
    void *inputs[] = {a.data(), nullptr};
    void *outputs[] = {c.data()};
    ASSERT_TRUE(kernel.backend
                    ->run(executable, CallBuffers{parameters, inputs, outputs})
                    .ok());
    for (size_t i = 0; i < c.size(); ++i)
      ASSERT_NEAR(c[i], expected[i], 1e-5 * (g.k + 1)) << "element " << i;
  };
  run(*kernel.executable);
  for (int round = 0; round < 2; ++round) {
    auto second = kernel.backend->loadExecutable(record, path);
    ASSERT_TRUE(second.ok()) << second.status();
    run(**second);
    second->reset();
    run(*kernel.executable);
  }
}

TEST(OneDnnFallBackTest, ErrorsFallBackToTheDirectLoopWithoutUnwinding) {
  std::atomic<bool> failed{false};
  int ran = 0;
  // A good run: the primitive's path, not the loop.
  EXPECT_TRUE(onednn::runOrFallBack(failed, "test", [&] { ++ran; }));
  // A failed allocation sends this call only to the loop.
  EXPECT_FALSE(onednn::runOrFallBack(
      failed, "test", [&] { throw std::bad_alloc(); }));
  EXPECT_FALSE(failed);
  EXPECT_TRUE(onednn::runOrFallBack(failed, "test", [&] { ++ran; }));
  // A oneDNN error sends the site to the loop for good.
  EXPECT_FALSE(onednn::runOrFallBack(failed, "test", [&] {
    throw dnnl::error(dnnl_unimplemented, "no implementation");
  }));
  EXPECT_TRUE(failed);
  EXPECT_FALSE(onednn::runOrFallBack(failed, "test", [&] { ++ran; }));
  EXPECT_EQ(ran, 2);
}

TEST_F(KernelLibraryTest, AgentsReportTheLibrary) {
  CpuBackend backend;
  auto devices = backend.describeDevices();
  ASSERT_TRUE(devices.ok());
  const auto &properties = devices->front().properties();
  EXPECT_EQ(properties.at("kernel_libraries"), "onednn");
  EXPECT_THAT(properties.at("onednn_version"), ::testing::StartsWith("2."));
}

/// The instruction set `backend`'s oneDNN kernels use, as it reports it
/// (its device's onednn_isa).
std::string onednnIsa(CpuBackend &backend) {
  absl::StatusOr<std::vector<v1::Device>> devices = backend.describeDevices();
  return devices.ok() && !devices->empty()
             ? devices->front().properties().at("onednn_isa")
             : "";
}

TEST_F(KernelLibraryTest, WinogradConvolutionsMatchTheReference) {
  // "auto": the 3x3 stride-1 convolutions resnet's blocks are made of, on
  // Winograd's kernels where oneDNN has them (AVX-512), with their
  // epilogues; the same 1e-5-per-term bound as every other site.
  for (int threads : {1, 2}) {
    expectMatchesReference(
        convolution(2, 64, 64, 1, true, {14, 14}, {3, 3}, 1, 1, 1), threads, "auto");
    expectMatchesReference(
        withEpilogue(convolution(1, 128, 128, 1, false, {9, 9}, {3, 3}, 1, 1, 1),
                     {1, 1, KILN_RT_ACTIVATION_NONE}),
        threads, "auto");
    Convolution channelsLast =
        withEpilogue(convolution(2, 32, 48, 1, true, {12, 10}, {3, 3}, 1, 1, 1),
                     {0, 1, KILN_RT_ACTIVATION_NONE});
    channelsLast.g.channels_last = 1;
    expectMatchesReference(channelsLast, threads, "auto");
  }
}

TEST_F(KernelLibraryTest, OnlyTheFastestAlgorithmsTakeWinograd) {
  absl::StatusOr<CpuModel> cpu = testCpu();
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  CpuBackend backend(*cpu, 1); // limits oneDNN's ISA as an agent does
  bool avx512 = onednnIsa(backend).starts_with("avx512");
  Convolution block = withEpilogue(
      convolution(1, 64, 64, 1, false, {56, 56}, {3, 3}, 1, 1, 1),
      {0, 1, KILN_RT_ACTIVATION_NONE});
  // oneDNN 2.6 has Winograd kernels on AVX-512 only: on an AVX2 agent (the
  // x86-64-v3 run of this file) the site stays direct.
  onednn::ConvolutionSite fastest(block.g, onednn::ConvolutionAlgorithms::Fastest);
  if (avx512)
    EXPECT_THAT(fastest.implementation(), HasSubstr("wino"));
  else
    EXPECT_THAT(fastest.implementation(), Not(HasSubstr("wino")));
  EXPECT_THAT(fastest.implementation(), Not(StartsWith("ref")));
  onednn::ConvolutionSite direct(block.g, onednn::ConvolutionAlgorithms::Direct);
  EXPECT_THAT(direct.implementation(), Not(HasSubstr("wino")));
  // Strided, 1x1 and grouped convolutions have no Winograd form.
  for (Convolution other :
       {convolution(1, 64, 64, 1, false, {56, 56}, {3, 3}, 2, 1, 1),
        convolution(1, 64, 64, 1, false, {56, 56}, {1, 1}, 1, 0, 1),
        convolution(1, 64, 64, 4, false, {56, 56}, {3, 3}, 1, 1, 1)}) {
    onednn::ConvolutionSite site(other.g, onednn::ConvolutionAlgorithms::Fastest);
    EXPECT_THAT(site.implementation(), Not(HasSubstr("wino")));
  }
}

/// A 1x1 convolution's kernel source: something to load.
std::string tinyConvolutionSource() {
  return convolutionKernelSource(convolution(1, 1, 1, 1, false, {3}, {1}, 1, 0, 1));
}

TEST_F(KernelLibraryTest, AnUnknownConvolutionAlgorithmIsRefusedNamingIt) {
  absl::Status refused = loadStatus("conv", tinyConvolutionSource(), "onednn", "fft");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("'fft'"));
  EXPECT_THAT(refused.message(), HasSubstr("knows: auto, direct"));
}

TEST_F(KernelLibraryTest, AnUnknownLibraryIsRefusedNamingIt) {
  absl::Status refused = loadStatus("conv", tinyConvolutionSource(), "mkl");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("'mkl'"));
  EXPECT_THAT(refused.message(), HasSubstr("provides: onednn"));
}

TEST_F(KernelLibraryTest, AManifestNamingALibraryNeedsTheRuntimesSetter) {
  absl::Status refused =
      loadStatus("axpy", test::axpyKernelSource(4), "onednn", "", /*elements=*/4);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("exports no kiln_rt_set_kernel_library"));
}

TEST_F(KernelLibraryTest, AnotherAbiVersionIsRefused) {
  std::string source = absl::StrReplaceAll(
      tinyConvolutionSource(),
      {{absl::StrCat("#define KILN_RT_KERNELS_ABI_VERSION ", KILN_RT_KERNELS_ABI_VERSION),
        "#define KILN_RT_KERNELS_ABI_VERSION 99"}});
  absl::Status refused = loadStatus("future", source, "onednn");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("ABI"));
}

} // namespace
} // namespace kiln::agent
