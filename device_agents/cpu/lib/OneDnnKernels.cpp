//===- OneDnnKernels.cpp - convolutions through oneDNN --------------------===//
//
// This file implements OneDnnKernels: forward f32 convolutions of dense
// row-major tensors through oneDNN primitives, with the reorders to and from
// the blocked layouts oneDNN's fastest kernels use, and a direct loop for a
// geometry oneDNN refuses.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/cpu/OneDnnKernels.h"


#include <dnnl.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <unordered_map>

// The OpenMP runtime oneDNN runs on (GNU libgomp); clang here ships no
// omp.h, and this is the one OpenMP routine the agent calls.
extern "C" void omp_set_num_threads(int threads);

namespace kiln::agent {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// Dense row-major tags by rank: data (n, c, spatial...), weights
/// (o, i, spatial...) and grouped weights (g, o, i, spatial...).
Tag dataTag(int64_t spatial) {
  return spatial == 1 ? Tag::ncw : spatial == 2 ? Tag::nchw : Tag::ncdhw;
}
Tag weightTag(int64_t spatial, bool grouped) {
  if (grouped)
    return spatial == 1 ? Tag::goiw : spatial == 2 ? Tag::goihw : Tag::goidhw;
  return spatial == 1 ? Tag::oiw : spatial == 2 ? Tag::oihw : Tag::oidhw;
}

/// A per-thread scratch area: the blocked tensors and oneDNN's scratchpad
/// of one call, grown to the largest call the thread made and reused.
class ScratchArena {
public:
  ~ScratchArena() { std::free(base); }
  /// `sizes.size()` 64-byte-aligned pieces of at least the given sizes.
  std::vector<void *> pieces(const std::vector<size_t> &sizes) {
    size_t total = 0;
    for (size_t size : sizes)
      total += round(size);
    if (total > capacity) {
      std::free(base);
      base = std::aligned_alloc(64, round(total));
      capacity = base ? round(total) : 0;
      if (!base)
        throw std::bad_alloc();
    }
    std::vector<void *> out;
    char *next = static_cast<char *>(base);
    for (size_t size : sizes) {
      out.push_back(next);
      next += round(size);
    }
    return out;
  }

private:
  static size_t round(size_t size) { return (size + 4095) / 4096 * 4096; }
  void *base = nullptr;
  size_t capacity = 0;
};

thread_local ScratchArena arena;

/// The parameters of the call this thread is making (CallParameters).
thread_local std::span<void *const> callParameters;
thread_local std::span<const uint64_t> callParameterSerials;

/// The serial of the parameter at `data`, or 0 when `data` is not one the
/// caller named (an activation, or a call without serials).
uint64_t parameterSerial(const void *data) {
  if (callParameterSerials.size() != callParameters.size())
    return 0;
  for (size_t i = 0; i < callParameters.size(); ++i)
    if (callParameters[i] == data)
      return callParameterSerials[i];
  return 0;
}

/// out[n, f, o...] = bias[f] + sum over (c, k...) of
/// in[n, g*C/G + c, o*s - p + k*d] * w[f, c, k...], over 3 spatial dims
/// (unused ones of size 1).
void directConvolution(const kiln_rt_convolution &g, const float *input,
                       const float *weight, const float *bias,
                       float *output) {
  int64_t groupIn = g.in_channels / g.groups;
  int64_t groupOut = g.out_channels / g.groups;
  const int64_t *I = g.input, *K = g.kernel, *O = g.output;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t f = 0; f < g.out_channels; ++f) {
      int64_t group = f / groupOut;
      for (int64_t o0 = 0; o0 < O[0]; ++o0)
        for (int64_t o1 = 0; o1 < O[1]; ++o1)
          for (int64_t o2 = 0; o2 < O[2]; ++o2) {
            float sum = g.has_bias ? bias[f] : 0.0f;
            for (int64_t c = 0; c < groupIn; ++c)
              for (int64_t k0 = 0; k0 < K[0]; ++k0) {
                int64_t i0 = o0 * g.stride[0] - g.pad_begin[0] + k0 * g.dilation[0];
                if (i0 < 0 || i0 >= I[0])
                  continue;
                for (int64_t k1 = 0; k1 < K[1]; ++k1) {
                  int64_t i1 = o1 * g.stride[1] - g.pad_begin[1] + k1 * g.dilation[1];
                  if (i1 < 0 || i1 >= I[1])
                    continue;
                  for (int64_t k2 = 0; k2 < K[2]; ++k2) {
                    int64_t i2 = o2 * g.stride[2] - g.pad_begin[2] + k2 * g.dilation[2];
                    if (i2 < 0 || i2 >= I[2])
                      continue;
                    int64_t channel = group * groupIn + c;
                    sum += input[(((n * g.in_channels + channel) * I[0] + i0) * I[1] + i1) * I[2] + i2] *
                           weight[(((f * groupIn + c) * K[0] + k0) * K[1] + k1) * K[2] + k2];
                  }
                }
              }
            output[(((n * g.out_channels + f) * O[0] + o0) * O[1] + o1) * O[2] + o2] = sum;
          }
    }
}

} // namespace

/// One call site: its geometry, and the oneDNN primitive with the layouts
/// it chose (nullopt when oneDNN refused the geometry).
struct OneDnnKernels::ConvolutionSite {
  kiln_rt_convolution geometry;
  struct Primitive {
    dnnl::convolution_forward convolution;
    memory::desc src, weights, bias, dst;             // the artifact's
    memory::desc convSrc, convWeights, convDst;       // the primitive's
    memory::desc scratchpad;
    std::optional<dnnl::reorder> toConvSrc, toConvWeights, fromConvDst;
  };
  std::optional<Primitive> primitive;

  explicit ConvolutionSite(const kiln_rt_convolution &g) : geometry(g) {
    try {
      primitive = create(g);
    } catch (const dnnl::error &error) {
      spdlog::warn("oneDNN has no convolution for this geometry ({}); the "
                    "call site runs a direct loop",
                    error.what());
    }
  }

  static Primitive create(const kiln_rt_convolution &g) {
    int64_t spatial = g.spatial_rank;
    bool grouped = g.groups > 1;
    memory::dims src = {g.batch, g.in_channels};
    memory::dims dst = {g.batch, g.out_channels};
    memory::dims weights = grouped ? memory::dims{g.groups, g.out_channels / g.groups,
                                                  g.in_channels / g.groups}
                                   : memory::dims{g.out_channels, g.in_channels};
    for (int64_t i = 0; i < spatial; ++i) {
      src.push_back(g.input[i]);
      dst.push_back(g.output[i]);
      weights.push_back(g.kernel[i]);
    }
    memory::dims strides(g.stride, g.stride + spatial);
    memory::dims padBegin(g.pad_begin, g.pad_begin + spatial);
    memory::dims padEnd(g.pad_end, g.pad_end + spatial);
    memory::dims dilates; // oneDNN counts the gaps: PyTorch's dilation - 1
    for (int64_t i = 0; i < spatial; ++i)
      dilates.push_back(g.dilation[i] - 1);

    auto f32 = memory::data_type::f32;
    Primitive p;
    p.src = memory::desc(src, f32, dataTag(spatial));
    p.dst = memory::desc(dst, f32, dataTag(spatial));
    p.weights = memory::desc(weights, f32, weightTag(spatial, grouped));
    if (g.has_bias)
      p.bias = memory::desc({g.out_channels}, f32, Tag::x);
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc(src, f32, Tag::any), memory::desc(weights, f32, Tag::any),
        p.bias, memory::desc(dst, f32, Tag::any), strides, dilates, padBegin,
        padEnd);
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_forward::primitive_desc pd(desc, attributes, cpuEngine());
    p.convolution = dnnl::convolution_forward(pd);
    p.convSrc = pd.src_desc();
    p.convWeights = pd.weights_desc();
    p.convDst = pd.dst_desc();
    p.scratchpad = pd.scratchpad_desc();
    dnnl::engine &engine = cpuEngine();
    if (p.convSrc != p.src)
      p.toConvSrc = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, p.src, engine, p.convSrc));
    if (p.convWeights != p.weights)
      p.toConvWeights = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, p.weights, engine, p.convWeights));
    if (p.convDst != p.dst)
      p.fromConvDst = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, p.convDst, engine, p.dst));
    return p;
  }

  void run(int threads, const float *input, const float *weight,
           const float *bias, float *output) {
    if (primitive) {
      try {
        runPrimitive(*primitive, threads, input, weight, bias, output);
        return;
      } catch (const dnnl::error &error) {
        spdlog::warn("oneDNN convolution failed ({}); running a direct loop",
                     error.what());
      }
    }
    directConvolution(geometry, input, weight, bias, output);
  }

private:
  /// The weights in the primitive's layout, reordered once per parameter
  /// (by its serial: OneDnnKernels::CallParameters) and kept while that
  /// parameter is the one this site is called with.
  std::shared_ptr<void> prepackedWeights(const Primitive &p, uint64_t serial,
                                         const float *weight,
                                         dnnl::stream &stream) {
    std::lock_guard<std::mutex> lock(packMutex);
    if (packed && packedSerial == serial)
      return packed;
    dnnl::engine &engine = cpuEngine();
    std::shared_ptr<void> fresh(
        std::aligned_alloc(64, (p.convWeights.get_size() + 63) / 64 * 64),
        &std::free);
    if (!fresh)
      throw std::bad_alloc();
    memory source(p.weights, engine, const_cast<float *>(weight));
    memory target(p.convWeights, engine, fresh.get());
    p.toConvWeights->execute(stream, source, target);
    stream.wait();
    packed = std::move(fresh);
    packedSerial = serial;
    return packed;
  }

  void runPrimitive(const Primitive &p, int threads, const float *input,
                    const float *weight, const float *bias, float *output) {
    dnnl::engine &engine = cpuEngine();
    // oneDNN sizes its parallel regions by the calling thread's OpenMP
    // setting: the agent's compute threads.
    omp_set_num_threads(threads);
    thread_local dnnl::stream stream(engine);
    uint64_t serial = p.toConvWeights ? parameterSerial(weight) : 0;
    std::shared_ptr<void> prepacked;
    if (serial != 0)
      prepacked = prepackedWeights(p, serial, weight, stream);
    std::vector<void *> scratch = arena.pieces(
        {p.toConvSrc ? p.convSrc.get_size() : 0,
         p.toConvWeights && !prepacked ? p.convWeights.get_size() : 0,
         p.fromConvDst ? p.convDst.get_size() : 0, p.scratchpad.get_size()});
    auto wrap = [&](const memory::desc &desc, const void *data) {
      return memory(desc, engine, const_cast<void *>(data));
    };
    memory src = wrap(p.src, input), weights = wrap(p.weights, weight);
    memory dst = wrap(p.dst, output);
    memory convSrc = p.toConvSrc ? wrap(p.convSrc, scratch[0]) : src;
    memory convWeights =
        prepacked         ? wrap(p.convWeights, prepacked.get())
        : p.toConvWeights ? wrap(p.convWeights, scratch[1])
                          : weights;
    memory convDst = p.fromConvDst ? wrap(p.convDst, scratch[2]) : dst;
    if (p.toConvSrc)
      p.toConvSrc->execute(stream, src, convSrc);
    if (p.toConvWeights && !prepacked)
      p.toConvWeights->execute(stream, weights, convWeights);
    std::unordered_map<int, memory> arguments = {
        {DNNL_ARG_SRC, convSrc},
        {DNNL_ARG_WEIGHTS, convWeights},
        {DNNL_ARG_DST, convDst},
        {DNNL_ARG_SCRATCHPAD, wrap(p.scratchpad, scratch[3])}};
    if (!p.bias.is_zero())
      arguments.emplace(DNNL_ARG_BIAS, wrap(p.bias, bias));
    p.convolution.execute(stream, arguments);
    if (p.fromConvDst)
      p.fromConvDst->execute(stream, convDst, dst);
    stream.wait();
  }

  std::mutex packMutex;
  std::shared_ptr<void> packed; // guarded by packMutex
  uint64_t packedSerial = 0;    // guarded by packMutex
};

OneDnnKernels::OneDnnKernels(int threads)
    : abi{{KILN_RT_KERNELS_ABI_VERSION, &OneDnnKernels::convolutionF32}, this},
      threads(threads < 1 ? 1 : threads) {}

OneDnnKernels::~OneDnnKernels() = default;

OneDnnKernels::CallParameters::CallParameters(
    std::span<void *const> pointers, std::span<const uint64_t> serials) {
  callParameters = pointers;
  callParameterSerials = serials;
}

OneDnnKernels::CallParameters::~CallParameters() {
  callParameters = {};
  callParameterSerials = {};
}

std::string OneDnnKernels::version() {
  const dnnl_version_t *v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch);
}

OneDnnKernels::ConvolutionSite &
OneDnnKernels::convolutionSite(const kiln_rt_convolution &geometry,
                               void **state) {
  auto *slot = reinterpret_cast<std::atomic<ConvolutionSite *> *>(state);
  if (ConvolutionSite *site = slot->load(std::memory_order_acquire))
    return *site;
  std::lock_guard<std::mutex> lock(mutex);
  if (ConvolutionSite *site = slot->load(std::memory_order_acquire))
    return *site;
  sites.push_back(std::make_unique<ConvolutionSite>(geometry));
  slot->store(sites.back().get(), std::memory_order_release);
  return *sites.back();
}

void OneDnnKernels::convolutionF32(const kiln_rt_kernel_library *library,
                                   const kiln_rt_convolution *geometry,
                                   void **state, const float *input,
                                   const float *weight, const float *bias,
                                   float *output) {
  OneDnnKernels &self = *reinterpret_cast<const Abi *>(library)->self;
  self.convolutionSite(*geometry, state)
      .run(self.threads, input, weight, bias, output);
}

} // namespace kiln::agent
