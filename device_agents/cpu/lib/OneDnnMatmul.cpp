//===- OneDnnMatmul.cpp - matrix-product call sites on oneDNN -------------===//
//
// This file implements MatmulSite: an f32 (batched) matrix product through
// oneDNN's matmul primitive on the artifact's row-major (or transposed)
// tensors. A weight that is a parameter of the call is reordered once into
// the layout oneDNN chose and kept; other operands are read in place.
//
//===----------------------------------------------------------------------===//
#include "OneDnnSites.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <cstring>

namespace kiln::agent::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

/// c = a @ b (+ bias), one product per batch entry, in f32.
void directMatmul(const kiln_rt_matmul &g, const float *a, const float *b,
                  const float *bias, float *c) {
  for (int64_t batch = 0; batch < g.batch; ++batch) {
    const float *A = a + batch * g.m * g.k;
    const float *B = b + batch * g.k * g.n;
    float *C = c + batch * g.m * g.n;
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        float sum = g.has_bias ? bias[j] : 0.0f;
        for (int64_t p = 0; p < g.k; ++p)
          sum += (g.a_transposed ? A[p * g.m + i] : A[i * g.k + p]) *
                 (g.b_transposed ? B[j * g.k + p] : B[p * g.n + j]);
        C[i * g.n + j] = sum;
      }
  }
}

} // namespace

/// The primitive; `weights` is the artifact's layout of b, `packedWeights`
/// the one the primitive reads (the same unless b is prepacked).
///
/// Where oneDNN would run a 2-D product with prepacked b on its generic
/// GEMM (`gemm:jit`: AVX2 CPUs, where oneDNN 2.6 has no brgemm matmul) and
/// it has a 1x1-convolution kernel for the same product, the product runs
/// as that convolution instead: a row-major a (m, k) is an NHWC image of m
/// pixels with k channels, b is the (n, k) filter and c (m, n) the NHWC
/// output. That kernel keeps b in its blocked layout and reached 80-85
/// GFLOP/s on a 91 GFLOP/s Zen 3 core where `gemm:jit` reached 40-69
/// (device_agents/README.md). ConvolutionSite is not reused for it: it
/// reorders activations into blocked layouts on every call, where this
/// reads and writes the row-major buffers as they are.
struct MatmulSite::Primitive {
  dnnl::primitive compute;
  memory::desc src, weights, bias, dst, packedWeights, scratchpad;
  std::optional<dnnl::reorder> pack;
  EpiloguePostOps post;
  std::string implementation;
  struct CallMemory;
  mutable ReusePool<CallMemory> memories; // one per call in flight

  /// `prepack`: let oneDNN choose b's layout (b is a parameter, reordered
  /// once); otherwise it reads b as stored.
  Primitive(const kiln_rt_matmul &g, bool prepack)
      : post(g.epilogue, g.batch > 1 ? 3 : 2,
             /*channelDim=*/g.batch > 1 ? 2 : 1, g.n) {
    auto f32 = memory::data_type::f32;
    // 2-D products as 2-D: oneDNN picks its GEMM kernels by rank.
    bool batched = g.batch > 1;
    auto dims = [&](int64_t rows, int64_t cols) {
      return batched ? memory::dims{g.batch, rows, cols}
                     : memory::dims{rows, cols};
    };
    Tag plain = batched ? Tag::abc : Tag::ab;
    Tag transposed = batched ? Tag::acb : Tag::ba;
    src = memory::desc(dims(g.m, g.k), f32, g.a_transposed ? transposed : plain);
    weights =
        memory::desc(dims(g.k, g.n), f32, g.b_transposed ? transposed : plain);
    dst = memory::desc(dims(g.m, g.n), f32, plain);
    if (g.has_bias) // one row, broadcast over rows and batch entries
      bias = memory::desc(batched ? memory::dims{1, 1, g.n}
                                  : memory::dims{1, g.n},
                          f32, plain);
    dnnl::matmul::desc desc(
        src, prepack ? memory::desc(dims(g.k, g.n), f32, Tag::any) : weights,
        bias, dst);
    auto pd = post.choose<dnnl::matmul::primitive_desc>(
        dst, "matmul", [&](const dnnl::primitive_attr &attributes) {
          return dnnl::matmul::primitive_desc(desc, attributes, engine());
        });
    if (prepack && !batched && !g.a_transposed &&
        std::string_view(pd.impl_info_str()).starts_with("gemm") &&
        adoptOneByOne(g))
      return;
    use(dnnl::matmul(pd), pd);
  }

  /// Runs `made`, whose descriptor `pd` chose b's layout (reordered into it
  /// when that is not how the artifact stores b, `weights`).
  void use(dnnl::primitive made, const dnnl::primitive_desc_base &pd) {
    compute = std::move(made);
    implementation = pd.impl_info_str();
    packedWeights = pd.weights_desc(0);
    scratchpad = pd.scratchpad_desc();
    if (packedWeights != weights)
      pack = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine(), weights, engine(), packedWeights));
  }

  /// Makes the product a 1x1 convolution when oneDNN has a jit 1x1 kernel
  /// for it (false, and nothing changed, otherwise).
  bool adoptOneByOne(const kiln_rt_matmul &g) {
    auto f32 = memory::data_type::f32;
    memory::desc image(memory::dims{1, g.k, g.m, 1}, f32, Tag::acdb);
    memory::desc output(memory::dims{1, g.n, g.m, 1}, f32, Tag::acdb);
    // b as stored: (n, k) is the filter's (out, in); (k, n) its (in, out).
    memory::desc filter(memory::dims{g.n, g.k, 1, 1}, f32,
                        g.b_transposed ? Tag::oihw : Tag::iohw);
    memory::desc channelBias;
    if (g.has_bias)
      channelBias = memory::desc(memory::dims{g.n}, f32, Tag::a);
    EpiloguePostOps convPost(g.epilogue, 4, /*channelDim=*/1, g.n);
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    try {
      dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::convolution_direct, image,
          memory::desc(memory::dims{g.n, g.k, 1, 1}, f32, Tag::any),
          channelBias, output, memory::dims{1, 1}, memory::dims{0, 0},
          memory::dims{0, 0});
      pd = convPost.choose<dnnl::convolution_forward::primitive_desc>(
          output, "matmul as a 1x1 convolution",
          [&](const dnnl::primitive_attr &attributes) {
            return dnnl::convolution_forward::primitive_desc(desc, attributes,
                                                             engine());
          });
    } catch (const dnnl::error &) {
      return false;
    }
    if (!std::string_view(pd->impl_info_str()).starts_with("jit_1x1"))
      return false;
    src = image;
    weights = filter;
    bias = channelBias;
    dst = output;
    post = std::move(convPost);
    use(dnnl::convolution_forward(*pd), *pd);
    return true;
  }
};

/// The memory objects of one call of a Primitive (its arguments map
/// included), made on first use and repointed at each call's buffers.
struct MatmulSite::Primitive::CallMemory {
  memory src, stored, weights, dst, scratchpad, bias;
  std::unordered_map<int, memory> arguments;

  explicit CallMemory(const Primitive &p)
      : src(wrap(p.src, nullptr)), stored(wrap(p.weights, nullptr)),
        weights(wrap(p.packedWeights, nullptr)), dst(wrap(p.dst, nullptr)),
        scratchpad(wrap(p.scratchpad, nullptr)) {
    arguments = {{DNNL_ARG_SRC, src},
                 {DNNL_ARG_WEIGHTS, weights},
                 {DNNL_ARG_DST, dst},
                 {DNNL_ARG_SCRATCHPAD, scratchpad}};
    if (!p.bias.is_zero()) {
      bias = wrap(p.bias, nullptr);
      arguments.emplace(DNNL_ARG_BIAS, bias);
    }
  }
};

MatmulSite::MatmulSite(const kiln_rt_matmul &geometry) : geometry(geometry) {}

MatmulSite::~MatmulSite() = default;

std::string MatmulSite::implementation() const {
  if (failed)
    return "direct loop";
  return primitive ? primitive->implementation : "not made yet";
}

void MatmulSite::run(int threads, const float *a, const float *b,
                     const float *bias, const EpilogueOperands &post,
                     float *c) {
  if (runOrFallBack(failed, "matmul",
                    [&] { runPrimitive(threads, a, b, bias, post, c); }))
    return;
  directMatmul(geometry, a, b, bias, c);
  applyEpilogue(geometry.epilogue, post, c, geometry.batch * geometry.m,
                geometry.n, 1);
}

void MatmulSite::runPrimitive(int threads, const float *a, const float *b,
                              const float *bias, const EpilogueOperands &post,
                              float *c) {
  dnnl::stream &stream = threadStream(threads);
  uint64_t serial = parameterSerial(b);
  {
    // The first call decides: b prepacked when it is a parameter.
    std::lock_guard<std::mutex> lock(createMutex);
    if (!primitive)
      primitive = std::make_unique<Primitive>(geometry, serial != 0);
  }
  const Primitive &p = *primitive;
  std::shared_ptr<void> packed;
  if (p.pack && serial != 0)
    packed = prepacked.get(serial, *p.pack, p.weights, p.packedWeights, b,
                           stream);
  auto pieces = scratch<2>({p.pack && !packed ? p.packedWeights.get_size() : 0,
                            p.scratchpad.get_size()});
  auto lease = p.memories.take(
      [&] { return std::make_unique<Primitive::CallMemory>(p); });
  Primitive::CallMemory &m = *lease;
  auto point = [](const memory &at, const void *data) {
    at.set_data_handle(const_cast<void *>(data));
  };
  // packedWeights is weights' own desc when b is read as stored.
  point(m.weights, packed   ? packed.get()
                   : p.pack ? pieces[0]
                            : static_cast<const void *>(b));
  if (p.pack && !packed) {
    point(m.stored, b);
    p.pack->execute(stream, m.stored, m.weights);
  }
  // The sum post-op adds what the destination holds: the residual.
  if (p.post.sumsResidual())
    std::memcpy(c, post.residual, p.dst.get_size());
  point(m.src, a);
  point(m.dst, c);
  point(m.scratchpad, pieces[1]);
  if (!p.bias.is_zero())
    point(m.bias, bias);
  p.post.addArguments(post, m.arguments);
  p.compute.execute(stream, m.arguments);
  p.post.runTail(stream, c, post);
  stream.wait();
}

} // namespace kiln::agent::onednn
