//===- OneDnnConvolution.cpp - convolution call sites on oneDNN -----------===//
//
// This file implements ConvolutionSite: a forward f32 convolution of dense
// tensors, channels first or channels last, through a oneDNN primitive,
// with the reorders to and from the blocked layouts oneDNN's fastest
// kernels use, weights kept reordered per parameter, the site's epilogue as
// post-ops (a batch norm's scale and shift folded into weight parameters
// instead), Winograd's algorithm where the artifact allows it and oneDNN
// has it, and a direct loop for a geometry oneDNN refuses.
//
//===----------------------------------------------------------------------===//
#include "OneDnnSites.h"

#include "OneDnnFolding.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include <optional>
#include <unordered_map>

namespace kiln::agent::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

/// Dense row-major tags by rank: data (n, c, spatial...) or, channels
/// last, (n, spatial..., c); weights (o, i, spatial...) and grouped weights
/// (g, o, i, spatial...).
Tag dataTag(int64_t spatial, bool channelsLast) {
  if (channelsLast)
    return spatial == 1 ? Tag::nwc : spatial == 2 ? Tag::nhwc : Tag::ndhwc;
  return spatial == 1 ? Tag::ncw : spatial == 2 ? Tag::nchw : Tag::ncdhw;
}
Tag weightTag(int64_t spatial, bool grouped) {
  if (grouped)
    return spatial == 1 ? Tag::goiw : spatial == 2 ? Tag::goihw : Tag::goidhw;
  return spatial == 1 ? Tag::oiw : spatial == 2 ? Tag::oihw : Tag::oidhw;
}

/// Where element (n, channel, pixel) of a data tensor with `channels`
/// channels and `pixels` spatial positions lies, in either layout.
struct DataLayout {
  int64_t channels, pixels;
  bool channelsLast;
  int64_t at(int64_t n, int64_t channel, int64_t pixel) const {
    return channelsLast ? (n * pixels + pixel) * channels + channel
                        : (n * channels + channel) * pixels + pixel;
  }
};

/// out[n, f, o...] = bias[f] + sum over (c, k...) of
/// in[n, g*C/G + c, o*s - p + k*d] * w[f, c, k...], over 3 spatial dims
/// (unused ones of size 1), in the geometry's data layout.
void directConvolution(const kiln_rt_convolution &g, const float *input,
                       const float *weight, const float *bias,
                       float *output) {
  int64_t groupIn = g.in_channels / g.groups;
  int64_t groupOut = g.out_channels / g.groups;
  const int64_t *I = g.input, *K = g.kernel, *O = g.output;
  bool last = g.channels_last != 0;
  DataLayout in{g.in_channels, I[0] * I[1] * I[2], last};
  DataLayout out{g.out_channels, O[0] * O[1] * O[2], last};
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
                    sum += input[in.at(n, channel, (i0 * I[1] + i1) * I[2] + i2)] *
                           weight[(((f * groupIn + c) * K[0] + k0) * K[1] + k1) * K[2] + k2];
                  }
                }
              }
            output[out.at(n, f, (o0 * O[1] + o1) * O[2] + o2)] = sum;
          }
    }
}

/// Whether oneDNN may have a Winograd kernel for `g`: a 2-d 3x3
/// convolution of stride 1, undilated and ungrouped (oneDNN 2.6 has them on
/// AVX-512 only, and decides the rest: channels, padding, post-ops).
bool winogradShaped(const kiln_rt_convolution &g) {
  return g.spatial_rank == 2 && g.groups == 1 && g.kernel[0] == 3 &&
         g.kernel[1] == 3 && g.stride[0] == 1 && g.stride[1] == 1 &&
         g.dilation[0] == 1 && g.dilation[1] == 1;
}

/// The epilogue a primitive applies: without the scale and shift when they
/// are folded into its weights and bias.
kiln_rt_epilogue primitiveEpilogue(const kiln_rt_convolution &g,
                                   bool foldScaleShift) {
  kiln_rt_epilogue epilogue = g.epilogue;
  if (foldScaleShift)
    epilogue.has_scale_shift = 0;
  return epilogue;
}

} // namespace

/// The primitive and the layouts it chose; the artifact's own descs first.
/// With `foldScaleShift`, the epilogue's scale and shift are left to the
/// weights and bias (ScaleFoldedWeights), and the primitive always takes a
/// bias.
struct ConvolutionSite::Primitive {
  dnnl::convolution_forward convolution;
  memory::desc src, weights, bias, dst;       // the artifact's
  memory::desc convSrc, convWeights, convDst; // the primitive's
  memory::desc scratchpad;
  std::optional<dnnl::reorder> toConvSrc, toConvWeights, fromConvDst;
  /// The residual into convDst, for the sum post-op (when not plain).
  std::optional<dnnl::reorder> residualToConvDst;
  EpiloguePostOps post;
  std::string implementation; // oneDNN's name for the kernel it chose
  struct CallMemory;
  mutable ReusePool<CallMemory> memories; // one per call in flight

  /// oneDNN's Winograd kernel for `desc`, the epilogue fused, if it has one.
  std::optional<dnnl::convolution_forward::primitive_desc>
  winogradPrimitive(const dnnl::convolution_forward::desc &desc) const;

  Primitive(const kiln_rt_convolution &g, bool foldScaleShift,
            ConvolutionAlgorithms algorithms)
      : post(primitiveEpilogue(g, foldScaleShift), g.spatial_rank + 2,
             /*channelDim=*/1, g.out_channels) {
    int64_t spatial = g.spatial_rank;
    bool grouped = g.groups > 1;
    memory::dims srcDims = {g.batch, g.in_channels};
    memory::dims dstDims = {g.batch, g.out_channels};
    memory::dims weightDims =
        grouped ? memory::dims{g.groups, g.out_channels / g.groups,
                               g.in_channels / g.groups}
                : memory::dims{g.out_channels, g.in_channels};
    for (int64_t i = 0; i < spatial; ++i) {
      srcDims.push_back(g.input[i]);
      dstDims.push_back(g.output[i]);
      weightDims.push_back(g.kernel[i]);
    }
    memory::dims strides(g.stride, g.stride + spatial);
    memory::dims padBegin(g.pad_begin, g.pad_begin + spatial);
    memory::dims padEnd(g.pad_end, g.pad_end + spatial);
    memory::dims dilates; // oneDNN counts the gaps: PyTorch's dilation - 1
    for (int64_t i = 0; i < spatial; ++i)
      dilates.push_back(g.dilation[i] - 1);

    auto f32 = memory::data_type::f32;
    bool channelsLast = g.channels_last != 0;
    src = memory::desc(srcDims, f32, dataTag(spatial, channelsLast));
    dst = memory::desc(dstDims, f32, dataTag(spatial, channelsLast));
    weights = memory::desc(weightDims, f32, weightTag(spatial, grouped));
    if (g.has_bias || foldScaleShift)
      bias = memory::desc({g.out_channels}, f32, Tag::x);
    auto describe = [&](dnnl::algorithm algorithm) {
      return dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, algorithm,
          memory::desc(srcDims, f32, Tag::any),
          memory::desc(weightDims, f32, Tag::any), bias,
          memory::desc(dstDims, f32, Tag::any), strides, dilates, padBegin,
          padEnd);
    };
    std::optional<dnnl::convolution_forward::primitive_desc> winograd;
    if (algorithms == ConvolutionAlgorithms::Fastest && winogradShaped(g))
      winograd = winogradPrimitive(describe(dnnl::algorithm::convolution_winograd));
    auto pd = winograd ? *winograd
                       : post.choose<dnnl::convolution_forward::primitive_desc>(
                             dst, "convolution",
                             [&](const dnnl::primitive_attr &attributes) {
                               return dnnl::convolution_forward::primitive_desc(
                                   describe(dnnl::algorithm::convolution_direct),
                                   attributes, engine());
                             });
    implementation = pd.impl_info_str();
    convolution = dnnl::convolution_forward(pd);
    convSrc = pd.src_desc();
    convWeights = pd.weights_desc();
    convDst = pd.dst_desc();
    scratchpad = pd.scratchpad_desc();
    if (convSrc != src)
      toConvSrc = dnnl::reorder(
          dnnl::reorder::primitive_desc(engine(), src, engine(), convSrc));
    if (convWeights != weights)
      toConvWeights = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine(), weights, engine(), convWeights));
    if (convDst != dst)
      fromConvDst = dnnl::reorder(
          dnnl::reorder::primitive_desc(engine(), convDst, engine(), dst));
    if (convDst != dst && post.sumsResidual())
      residualToConvDst = dnnl::reorder(
          dnnl::reorder::primitive_desc(engine(), dst, engine(), convDst));
  }
};

/// oneDNN's Winograd kernel for `desc` with the whole epilogue fused, or
/// none: where oneDNN has none for the CPU (AVX2), the channel counts or
/// the post-ops, or only a reference one, the site stays direct.
std::optional<dnnl::convolution_forward::primitive_desc>
ConvolutionSite::Primitive::winogradPrimitive(
    const dnnl::convolution_forward::desc &desc) const {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  post.attach(attributes);
  try {
    dnnl::convolution_forward::primitive_desc pd(desc, attributes, engine(),
                                                 /*allow_empty=*/true);
    if (pd && !isReferenceImplementation(pd))
      return pd;
  } catch (const dnnl::error &) {
  }
  return std::nullopt;
}

/// The memory objects of one call of a Primitive (its arguments map
/// included), made on first use and repointed at each call's buffers.
struct ConvolutionSite::Primitive::CallMemory {
  memory src, weights, dst, convSrc, convWeights, convDst, scratchpad, bias,
      residual;
  std::unordered_map<int, memory> arguments;

  explicit CallMemory(const Primitive &p)
      : src(wrap(p.src, nullptr)), weights(wrap(p.weights, nullptr)),
        dst(wrap(p.dst, nullptr)),
        convSrc(p.toConvSrc ? wrap(p.convSrc, nullptr) : src),
        convWeights(wrap(p.convWeights, nullptr)),
        convDst(p.fromConvDst ? wrap(p.convDst, nullptr) : dst),
        scratchpad(wrap(p.scratchpad, nullptr)),
        residual(wrap(p.dst, nullptr)) {
    arguments = {{DNNL_ARG_SRC, convSrc},
                 {DNNL_ARG_WEIGHTS, convWeights},
                 {DNNL_ARG_DST, convDst},
                 {DNNL_ARG_SCRATCHPAD, scratchpad}};
    if (!p.bias.is_zero()) {
      bias = wrap(p.bias, nullptr);
      arguments.emplace(DNNL_ARG_BIAS, bias);
    }
  }
};

ConvolutionSite::ConvolutionSite(const kiln_rt_convolution &geometry,
                                 ConvolutionAlgorithms algorithms)
    : geometry(geometry), algorithms(algorithms) {
  try {
    primitive = std::make_unique<Primitive>(geometry, /*foldScaleShift=*/false,
                                            algorithms);
  } catch (const std::exception &error) {
    failed = true;
    spdlog::warn("oneDNN has no convolution for this geometry ({}); the "
                 "call site runs a direct loop",
                 error.what());
  }
}

ConvolutionSite::~ConvolutionSite() = default;

std::string ConvolutionSite::implementation() const {
  if (const Primitive *made = folded.load(std::memory_order_acquire))
    return made->implementation;
  return primitive ? primitive->implementation : "direct loop";
}

void ConvolutionSite::run(int threads, const float *input,
                          const float *weight, const float *bias,
                          const EpilogueOperands &post, float *output) {
  if (runOrFallBack(failed, "convolution", [&] {
        runPrimitive(threads, input, weight, bias, post, output);
      }))
    return;
  runDirectConvolution(geometry, input, weight, bias, post, output);
}

void runDirectConvolution(const kiln_rt_convolution &g, const float *input,
                          const float *weight, const float *bias,
                          const EpilogueOperands &post, float *output) {
  directConvolution(g, input, weight, bias, output);
  int64_t spatial = g.output[0] * g.output[1] * g.output[2];
  if (g.channels_last)
    applyEpilogue(g.epilogue, post, output, g.batch * spatial, g.out_channels, 1);
  else
    applyEpilogue(g.epilogue, post, output, g.batch, g.out_channels, spatial);
}

const ConvolutionSite::Primitive *ConvolutionSite::foldedPrimitive() {
  if (const Primitive *made = folded.load(std::memory_order_acquire))
    return made;
  std::lock_guard<std::mutex> lock(foldMutex);
  if (foldRefused)
    return nullptr;
  if (!foldedOwner) {
    try {
      foldedOwner = std::make_unique<Primitive>(geometry, /*foldScaleShift=*/true,
                                                algorithms);
    } catch (const std::exception &error) {
      foldRefused = true;
      spdlog::warn("oneDNN has no convolution for this geometry with the "
                   "batch norm folded into its weights ({}); the scale and "
                   "shift stay post-ops",
                   error.what());
      return nullptr;
    }
    folded.store(foldedOwner.get(), std::memory_order_release);
  }
  return foldedOwner.get();
}

void ConvolutionSite::runPrimitive(int threads, const float *input,
                                   const float *weight, const float *bias,
                                   const EpilogueOperands &post,
                                   float *output) {
  dnnl::stream &stream = threadStream(threads);
  uint64_t serial = parameterSerial(weight);
  // A batch norm after a convolution of parameter weights folds into them.
  if (serial != 0 && geometry.epilogue.has_scale_shift) {
    if (const Primitive *f = foldedPrimitive()) {
      FoldedOperands operands = foldedWeights.get(
          {serial, weight, geometry.out_channels,
           geometry.has_bias ? bias : nullptr, post.scale, post.shift},
          f->toConvWeights, f->weights, f->convWeights, stream);
      execute(*f, stream, input, operands.weights.get(), weight,
              operands.bias.get(), post, output);
      return;
    }
  }
  const Primitive &p = *primitive;
  std::shared_ptr<void> packed;
  if (serial != 0 && p.toConvWeights)
    packed = prepacked.get(serial, *p.toConvWeights, p.weights, p.convWeights,
                           weight, stream);
  execute(p, stream, input, packed.get(), weight, bias, post, output);
}

void ConvolutionSite::execute(const Primitive &p, dnnl::stream &stream,
                              const float *input, const void *packedWeights,
                              const float *weight, const float *bias,
                              const EpilogueOperands &post, float *output) {
  bool reorderWeights = p.toConvWeights && !packedWeights;
  auto pieces = scratch<4>(
      {p.toConvSrc ? p.convSrc.get_size() : 0,
       reorderWeights ? p.convWeights.get_size() : 0,
       p.fromConvDst ? p.convDst.get_size() : 0, p.scratchpad.get_size()});
  auto lease = p.memories.take(
      [&] { return std::make_unique<Primitive::CallMemory>(p); });
  Primitive::CallMemory &m = *lease;
  auto point = [](const memory &at, const void *data) {
    at.set_data_handle(const_cast<void *>(data));
  };
  point(m.src, input);
  point(m.weights, weight);
  point(m.dst, output);
  if (p.toConvSrc)
    point(m.convSrc, pieces[0]);
  point(m.convWeights, packedWeights    ? packedWeights
                       : reorderWeights ? pieces[1]
                                        : static_cast<const void *>(weight));
  if (p.fromConvDst)
    point(m.convDst, pieces[2]);
  point(m.scratchpad, pieces[3]);
  if (!p.bias.is_zero())
    point(m.bias, bias);
  if (p.toConvSrc)
    p.toConvSrc->execute(stream, m.src, m.convSrc);
  if (reorderWeights)
    p.toConvWeights->execute(stream, m.weights, m.convWeights);
  // The sum post-op adds what the destination holds: the residual.
  if (p.post.sumsResidual()) {
    if (p.residualToConvDst) {
      point(m.residual, post.residual);
      p.residualToConvDst->execute(stream, m.residual, m.convDst);
    } else {
      std::memcpy(output, post.residual, p.dst.get_size());
    }
  }
  p.post.addArguments(post, m.arguments);
  p.convolution.execute(stream, m.arguments);
  if (p.fromConvDst)
    p.fromConvDst->execute(stream, m.convDst, m.dst);
  p.post.runTail(stream, output, post);
  stream.wait();
}

} // namespace kiln::agent::onednn
