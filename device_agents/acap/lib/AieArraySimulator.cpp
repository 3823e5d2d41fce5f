//===- AieArraySimulator.cpp - Kiln's functional model of an AI Engine array //
#include "kiln/agent/acap/AieArraySimulator.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

namespace kiln::agent::acap {
namespace {

thread_local AieArraySimulator::RunCounters *currentRun = nullptr;

/// f32 -> bfloat16 -> f32, rounding to nearest even (NaN stays NaN).
float toBf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return std::bit_cast<float>(bits | 0x00400000u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

/// Runs body(begin, end) over [0, count) in up to `threads` contiguous
/// chunks, the calling thread taking the first.
template <typename Body>
void parallelFor(int64_t count, int threads, const Body &body) {
  int64_t chunks = std::min<int64_t>(std::max(threads, 1), count);
  if (chunks <= 1) {
    if (count > 0)
      body(int64_t(0), count);
    return;
  }
  std::vector<std::jthread> workers;
  int64_t step = (count + chunks - 1) / chunks;
  for (int64_t begin = step; begin < count; begin += step)
    workers.emplace_back([&body, begin, end = std::min(count, begin + step)] {
      body(begin, end);
    });
  body(int64_t(0), std::min(count, step));
}

/// relu as PyTorch defines it: NaN stays NaN, -0 becomes +0.
float relu(float y) { return y > 0.0f || std::isnan(y) ? y : 0.0f; }

/// The larger (`larger`) or smaller of a and b as the generated code's
/// maximumf/minimumf: NaN if either is, and +0 above -0.
float extremum(float a, float b, bool larger) {
  if (std::isnan(a) || std::isnan(b))
    return std::nanf("");
  if (a == b) // +0 and -0 compare equal
    return std::signbit(a) == larger ? b : a;
  return (a > b) == larger ? a : b;
}

/// The epilogue of kiln_rt_kernels.h on one result element of channel c:
/// bias, scale and shift, residual, activation, in that order.
struct Epilogue {
  const kiln_rt_epilogue &fields;
  bool hasBias;
  const float *bias, *scale, *shift, *residual;

  float apply(float y, int64_t channel, int64_t index) const {
    if (hasBias)
      y += bias[channel];
    if (fields.has_scale_shift)
      y = y * scale[channel] + shift[channel];
    if (fields.has_residual)
      y += residual[index];
    switch (fields.activation) {
    case KILN_RT_ACTIVATION_HARDSWISH:
      return y * std::min(std::max(y + 3.0f, 0.0f), 6.0f) / 6.0f;
    case KILN_RT_ACTIVATION_GELU:
      return y * (1.0f + std::erf(y / std::sqrt(2.0f))) / 2.0f;
    case KILN_RT_ACTIVATION_RELU:
      return relu(y);
    case KILN_RT_ACTIVATION_GELU_TANH: {
      const float inner = std::sqrt(2.0f / float(M_PI)) * (y + 0.044715f * y * y * y);
      return 0.5f * y * (1.0f + std::tanh(inner));
    }
    default:
      return y;
    }
  }
};

/// One step of an elementwise chain on one element (kiln_rt_kernels.h):
/// f32, NaN in gives NaN out for relu, maximum, minimum and clamp.
float chainStep(const kiln_rt_elementwise_step &step, float lhs, float rhs) {
  double scalarBits;
  std::memcpy(&scalarBits, &step.scalar, sizeof scalarBits);
  const float scalar = float(scalarBits);
  switch (step.op) {
  case KILN_RT_ELEMENTWISE_ADD:
    return lhs + scalar * rhs;
  case KILN_RT_ELEMENTWISE_SUB:
    return lhs - scalar * rhs;
  case KILN_RT_ELEMENTWISE_MUL:
    return lhs * rhs;
  case KILN_RT_ELEMENTWISE_DIV:
    return lhs / rhs;
  case KILN_RT_ELEMENTWISE_ADD_SCALAR:
    return lhs + scalar;
  case KILN_RT_ELEMENTWISE_MUL_SCALAR:
    return lhs * scalar;
  case KILN_RT_ELEMENTWISE_DIV_SCALAR:
    return lhs / scalar;
  case KILN_RT_ELEMENTWISE_RSUB_SCALAR:
    return scalar - lhs;
  case KILN_RT_ELEMENTWISE_RELU:
    return relu(lhs);
  case KILN_RT_ELEMENTWISE_NEG:
    return -lhs;
  case KILN_RT_ELEMENTWISE_MAXIMUM:
    return extremum(lhs, rhs, true);
  case KILN_RT_ELEMENTWISE_MINIMUM:
    return extremum(lhs, rhs, false);
  case KILN_RT_ELEMENTWISE_CLAMP_MIN: // a NaN bound is none
    return std::isnan(scalar) ? lhs : extremum(lhs, scalar, true);
  case KILN_RT_ELEMENTWISE_CLAMP_MAX:
    return std::isnan(scalar) ? lhs : extremum(lhs, scalar, false);
  default: // the plan's check refuses other ops
    return std::nanf("");
  }
}

/// Runs `body`, a kernel call: an exception (no thread, no memory) must
/// not unwind through the generated code that called it, so it fails the
/// run instead.
template <typename Body> void guarded(const Body &body) {
  try {
    body();
  } catch (const std::exception &e) {
    if (currentRun && currentRun->error.empty())
      currentRun->error = absl::StrCat("the simulated array failed a call: ", e.what());
  }
}

} // namespace

AieArraySimulator::RunScope::RunScope(RunCounters &counters)
    : previous(currentRun) {
  currentRun = &counters;
}

AieArraySimulator::RunScope::~RunScope() { currentRun = previous; }

AieArraySimulator::AieArraySimulator(v1::AiePlan plan, int threads)
    : sitePlan(std::move(plan)), threads(std::max(threads, 1)),
      bound(size_t(sitePlan.sites_size()), false) {
  installed.table.abi_version = KILN_RT_KERNELS_ABI_VERSION;
  installed.table.convolution_f32 = &AieArraySimulator::convolution;
  installed.table.matmul_f32 = &AieArraySimulator::matmul;
  installed.table.elementwise_f32 = &AieArraySimulator::elementwise;
  installed.self = this;
}

const v1::AieSite *AieArraySimulator::siteFor(const char *kind,
                                              const int64_t *geometry,
                                              int fields, void **state) const {
  if (void *known = __atomic_load_n(state, __ATOMIC_ACQUIRE))
    return static_cast<const v1::AieSite *>(known);
  // A call site's first call binds it to a site of the plan with its
  // geometry, one not bound yet: sites of equal geometry may have different
  // tiles (and cycles), and each call site is one of them.
  std::lock_guard<std::mutex> lock(bindMutex);
  if (void *known = __atomic_load_n(state, __ATOMIC_ACQUIRE))
    return static_cast<const v1::AieSite *>(known);
  const v1::AieSite *match = nullptr;
  for (int i = 0; i < sitePlan.sites_size(); ++i) {
    const v1::AieSite &site = sitePlan.sites(i);
    if (site.kind() != kind || site.geometry_size() != fields ||
        !std::equal(site.geometry().begin(), site.geometry().end(), geometry))
      continue;
    if (!bound[size_t(i)]) {
      match = &site;
      bound[size_t(i)] = true;
      break;
    }
    if (!match)
      match = &site; // more call sites than plan sites: share the first
  }
  if (match) {
    __atomic_store_n(state, const_cast<v1::AieSite *>(match), __ATOMIC_RELEASE);
    return match;
  }
  if (currentRun && currentRun->error.empty())
    currentRun->error = absl::StrCat(
        "the host code made a ", kind, " call with geometry [",
        absl::StrJoin(geometry, geometry + fields, ", "),
        "] that its AI Engine plan has no site for");
  return nullptr;
}

float AieArraySimulator::Call::operand(float value) const {
  return reference ? value : toBf16(value);
}

AieArraySimulator::Call AieArraySimulator::begin(const char *kind,
                                                 const int64_t *geometry,
                                                 int fields, void **state) const {
  Call call{siteFor(kind, geometry, fields, state),
            currentRun && currentRun->reference};
  if (call.site && currentRun && !call.reference) {
    currentRun->cycles += call.site->estimated_cycles();
    ++currentRun->calls;
  }
  return call;
}

void AieArraySimulator::matmul(const kiln_rt_kernel_library *library,
                               const kiln_rt_matmul *g, void **state,
                               const float *a, const float *b,
                               const float *bias, const float *scale,
                               const float *shift, const float *residual,
                               float *c) {
  guarded([&] { runMatmul(library, g, state, a, b, bias, scale, shift, residual, c); });
}

void AieArraySimulator::convolution(const kiln_rt_kernel_library *library,
                                    const kiln_rt_convolution *g, void **state,
                                    const float *input, const float *weight,
                                    const float *bias, const float *scale,
                                    const float *shift, const float *residual,
                                    float *output) {
  guarded([&] {
    runConvolution(library, g, state, input, weight, bias, scale, shift, residual, output);
  });
}

void AieArraySimulator::runMatmul(const kiln_rt_kernel_library *library,
                                  const kiln_rt_matmul *g, void **state,
                                  const float *a, const float *b,
                                  const float *bias, const float *scale,
                                  const float *shift, const float *residual,
                                  float *c) {
  const auto &self = *reinterpret_cast<const Installed *>(library)->self;
  const Call call = self.begin("matmul", reinterpret_cast<const int64_t *>(g),
                               KILN_RT_MATMUL_FIELDS, state);
  if (!call.site)
    return;
  auto round = [&call](float v) { return call.operand(v); };
  const int64_t m = g->m, n = g->n, k = g->k;
  const Epilogue epilogue{g->epilogue, g->has_bias != 0, bias, scale, shift, residual};
  for (int64_t batch = 0; batch < g->batch; ++batch) {
    const float *aBatch = a + batch * m * k;
    const float *bBatch = b + batch * k * n;
    // B as k rows of n, in the array's type (what the B channel streams).
    std::vector<float> bRows(size_t(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j)
        bRows[kk * n + j] = round(g->b_transposed ? bBatch[j * k + kk]
                                                  : bBatch[kk * n + j]);
    parallelFor(m, self.threads, [&](int64_t begin, int64_t end) {
      std::vector<float> acc(static_cast<size_t>(n));
      for (int64_t i = begin; i < end; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t kk = 0; kk < k; ++kk) {
          const float av = round(g->a_transposed ? aBatch[kk * m + i]
                                                 : aBatch[i * k + kk]);
          const float *row = &bRows[kk * n];
          for (int64_t j = 0; j < n; ++j)
            acc[j] += av * row[j];
        }
        float *out = c + (batch * m + i) * n;
        for (int64_t j = 0; j < n; ++j)
          out[j] = epilogue.apply(acc[j], j, (batch * m + i) * n + j);
      }
    });
  }
}

void AieArraySimulator::runConvolution(const kiln_rt_kernel_library *library,
                                       const kiln_rt_convolution *g, void **state,
                                       const float *input, const float *weight,
                                       const float *bias, const float *scale,
                                       const float *shift, const float *residual,
                                       float *output) {
  const auto &self = *reinterpret_cast<const Installed *>(library)->self;
  const Call call = self.begin("convolution", reinterpret_cast<const int64_t *>(g),
                               KILN_RT_CONVOLUTION_FIELDS, state);
  if (!call.site)
    return;
  auto round = [&call](float v) { return call.operand(v); };
  const int64_t groups = g->groups;
  const int64_t inPerGroup = g->in_channels / groups;
  const int64_t outPerGroup = g->out_channels / groups;
  const int64_t window = g->kernel[0] * g->kernel[1] * g->kernel[2];
  const int64_t depth = inPerGroup * window; // k of the implicit GEMM
  const int64_t inPixels = g->input[0] * g->input[1] * g->input[2];
  const int64_t outPixels = g->output[0] * g->output[1] * g->output[2];
  // Weights per group as k rows of the group's output channels.
  std::vector<float> wRows(size_t(groups * depth * outPerGroup));
  for (int64_t grp = 0; grp < groups; ++grp)
    for (int64_t o = 0; o < outPerGroup; ++o)
      for (int64_t kk = 0; kk < depth; ++kk)
        wRows[(grp * depth + kk) * outPerGroup + o] =
            round(weight[(grp * outPerGroup + o) * depth + kk]);
  const Epilogue epilogue{g->epilogue, g->has_bias != 0, bias, scale, shift, residual};
  const int64_t rows = g->batch * groups * outPixels;
  parallelFor(rows, self.threads, [&](int64_t begin, int64_t end) {
    std::vector<float> column(static_cast<size_t>(depth));
    std::vector<float> acc(static_cast<size_t>(outPerGroup));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t pixel = row % outPixels;
      const int64_t grp = (row / outPixels) % groups;
      const int64_t batch = row / (outPixels * groups);
      const int64_t o0 = pixel / (g->output[1] * g->output[2]);
      const int64_t o1 = (pixel / g->output[2]) % g->output[1];
      const int64_t o2 = pixel % g->output[2];
      // The window under this output pixel: what the tile DMA's address
      // generation gathers, zeros in the padding.
      const float *in = input + (batch * g->in_channels + grp * inPerGroup) * inPixels;
      for (int64_t ci = 0; ci < inPerGroup; ++ci)
        for (int64_t k0 = 0; k0 < g->kernel[0]; ++k0)
          for (int64_t k1 = 0; k1 < g->kernel[1]; ++k1)
            for (int64_t k2 = 0; k2 < g->kernel[2]; ++k2) {
              const int64_t i0 = o0 * g->stride[0] - g->pad_begin[0] + k0 * g->dilation[0];
              const int64_t i1 = o1 * g->stride[1] - g->pad_begin[1] + k1 * g->dilation[1];
              const int64_t i2 = o2 * g->stride[2] - g->pad_begin[2] + k2 * g->dilation[2];
              const bool inside = i0 >= 0 && i0 < g->input[0] && i1 >= 0 &&
                                  i1 < g->input[1] && i2 >= 0 && i2 < g->input[2];
              column[((ci * g->kernel[0] + k0) * g->kernel[1] + k1) * g->kernel[2] + k2] =
                  inside ? round(in[ci * inPixels + (i0 * g->input[1] + i1) * g->input[2] + i2])
                         : 0.0f;
            }
      std::fill(acc.begin(), acc.end(), 0.0f);
      const float *w = &wRows[size_t(grp * depth * outPerGroup)];
      for (int64_t kk = 0; kk < depth; ++kk) {
        const float value = column[kk];
        const float *wRow = w + kk * outPerGroup;
        for (int64_t o = 0; o < outPerGroup; ++o)
          acc[o] += value * wRow[o];
      }
      for (int64_t o = 0; o < outPerGroup; ++o) {
        const int64_t channel = grp * outPerGroup + o;
        const int64_t index = (batch * g->out_channels + channel) * outPixels + pixel;
        output[index] = epilogue.apply(acc[o], channel, index);
      }
    }
  });
}

void AieArraySimulator::elementwise(const kiln_rt_kernel_library *library,
                                    const kiln_rt_elementwise *g, void **state,
                                    const float *input0, const float *input1,
                                    const float *input2, const float *input3,
                                    float *output) {
  guarded([&] {
    runElementwise(library, g, state, {input0, input1, input2, input3}, output);
  });
}

void AieArraySimulator::runElementwise(
    const kiln_rt_kernel_library *library, const kiln_rt_elementwise *g,
    void **state,
    const std::array<const float *, KILN_RT_ELEMENTWISE_MAX_INPUTS> &inputs,
    float *output) {
  const auto &self = *reinterpret_cast<const Installed *>(library)->self;
  // The plan's check bounds inputs and steps and has every step read only
  // the inputs and earlier steps; a call binds only to a checked site.
  const Call call = self.begin("elementwise", reinterpret_cast<const int64_t *>(g),
                               KILN_RT_ELEMENTWISE_FIELDS, state);
  if (!call.site)
    return;
  const int64_t registers = g->inputs + g->steps;
  parallelFor(g->elements, self.threads, [&](int64_t begin, int64_t end) {
    std::array<float, KILN_RT_ELEMENTWISE_MAX_INPUTS + KILN_RT_ELEMENTWISE_MAX_STEPS> reg;
    for (int64_t e = begin; e < end; ++e) {
      for (int64_t i = 0; i < g->inputs; ++i)
        reg[size_t(i)] = inputs[size_t(i)][e];
      for (int64_t s = 0; s < g->steps; ++s) {
        const kiln_rt_elementwise_step &step = g->step[s];
        reg[size_t(g->inputs + s)] =
            chainStep(step, reg[size_t(step.lhs)], reg[size_t(step.rhs)]);
      }
      output[e] = reg[size_t(registers - 1)];
    }
  });
}

} // namespace kiln::agent::acap
