//===- FixedPointModel.cpp - Kiln's numeric model of the MDLA -------------===//
//
// This file implements evaluate(): one pass over the layers with a value
// table, each op a plain host kernel (convolution through im2col, products
// accumulated in f64, which holds int16 x int16 sums exactly), and in the
// fixed-point model a rounding of every weight and layer output to int16.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/mdla/FixedPointModel.h"

#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::agent::mdla {
namespace {

using Shape = std::vector<int64_t>;
using Status = absl::Status;

std::string shapeText(const Shape &shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

/// Output extent of a pooling or convolution window along one dim, with
/// PyTorch's ceil-mode rule (the last window starts inside the input or its
/// leading padding).
int64_t windowExtent(int64_t in, int64_t kernel, int64_t stride, int64_t padBegin,
                     int64_t padEnd, int64_t dilation, bool ceil) {
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t out = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

/// The most elements one tensor (or a convolution's im2col buffer, or a
/// pooling layer's window reads) may have: 2^28 (1 GiB of f32). An artifact
/// asking for more is refused rather than allowed to exhaust the host.
constexpr int64_t kMaxElements = kMaxTensorElements;

/// Whether the product of `factors` (each >= 0) is at most kMaxElements.
bool productWithin(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t factor : factors) {
    if (factor < 0)
      return false;
    if (factor == 0)
      return true;
    if (__builtin_mul_overflow(product, factor, &product) || product > kMaxElements)
      return false;
  }
  return true;
}

/// Window attributes as ONNX and PyTorch allow them: positive kernel,
/// stride and dilation; padding from 0 to under the dilated kernel's span.
bool validWindow(int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                 int64_t padEnd) {
  if (kernel < 1 || stride < 1 || dilation < 1 || kernel > kMaxElements ||
      dilation > kMaxElements || padBegin < 0 || padEnd < 0)
    return false;
  int64_t span = dilation * (kernel - 1) + 1;
  return padBegin < span && padEnd < span;
}

/// 1-d and 2-d spatial layers see every input as (N, C, H, W).
struct Spatial {
  int64_t n, c, h, w;
};

class Evaluator {
public:
  Evaluator(const MdlaProgram &program, Numerics numerics, int64_t workBudget)
      : program(program), numerics(numerics), budget(workBudget) {}

  absl::StatusOr<Evaluation> run(const std::map<std::string, TensorView> &bound);

private:
  using Status = absl::Status;

  Status fail(const Layer &layer, const std::string &why) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", layer.name, "' (", layer.op, "): ", why));
  }
  /// Takes `work` (MACs or window reads) from the budget; INVALID_ARGUMENT
  /// naming the layer when it does not fit.
  Status spend(const Layer &layer, int64_t work) {
    if (work > budget)
      return fail(layer, "the evaluation would exceed its work budget "
                         "(multiply-accumulates and window reads)");
    budget -= work;
    return absl::OkStatus();
  }
  /// A value by name: a layer output, or a source (graph input or
  /// constant), the latter rounded to int16 in the fixed-point model.
  const Tensor &read(const std::string &name);
  /// The f32 original of a source, or null for a layer output.
  const Tensor *source(const std::string &name) const;
  /// Stores a layer's result, rounded in the fixed-point model.
  void write(const std::string &name, Tensor value);
  void round(Tensor &tensor) {
    if (numerics == Numerics::kQ16)
      quantizeQ16(tensor.data);
  }

  Status conv(const Layer &layer, size_t index, LayerWork &work);
  Status batchNorm(const Layer &layer, LayerWork &work);
  Status pool(const Layer &layer, LayerWork &work);
  Status globalAveragePool(const Layer &layer, LayerWork &work);
  Status gemm(const Layer &layer, LayerWork &work);
  Status binary(const Layer &layer, LayerWork &work);
  Status unary(const Layer &layer, LayerWork &work);
  Status reshape(const Layer &layer);
  Status transpose(const Layer &layer, LayerWork &work);
  Status concat(const Layer &layer, LayerWork &work);

  /// Batch norms folded into the convolution before them, as the device
  /// folds them (in both numerics, so the f32 reference does the same
  /// layers' work): conv layer index -> BN layer index, and the reverse.
  void findFolds();

  const MdlaProgram &program;
  Numerics numerics;
  int64_t budget;
  std::map<std::string, Tensor> sources;
  std::map<std::string, Tensor> roundedSources;
  std::map<std::string, Tensor> values;
  std::map<size_t, size_t> foldedBn;   // conv index -> bn index
  std::map<size_t, size_t> foldedInto; // bn index -> conv index
};

const Tensor *Evaluator::source(const std::string &name) const {
  auto it = sources.find(name);
  return it == sources.end() ? nullptr : &it->second;
}

const Tensor &Evaluator::read(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  const Tensor &original = sources.at(name);
  if (numerics == Numerics::kF32)
    return original;
  auto [it, inserted] = roundedSources.try_emplace(name);
  if (inserted) {
    it->second = original;
    quantizeQ16(it->second.data);
  }
  return it->second;
}

void Evaluator::write(const std::string &name, Tensor value) {
  round(value);
  values[name] = std::move(value);
}

void Evaluator::findFolds() {
  std::map<std::string, int> readers;
  for (const Layer &layer : program.layers())
    for (const std::string &input : layer.inputs)
      ++readers[input];
  for (const Port &output : program.outputs())
    ++readers[output.name];
  std::map<std::string, size_t> producer;
  const auto &layers = program.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    producer[layers[i].outputs[0]] = i;
    if (layers[i].op != "BatchNormalization")
      continue;
    auto conv = producer.find(layers[i].inputs[0]);
    if (conv == producer.end() || layers[conv->second].op != "Conv" ||
        readers[layers[i].inputs[0]] != 1)
      continue;
    bool statsAreSources = true;
    for (size_t k = 1; k < 5; ++k)
      statsAreSources &= source(layers[i].inputs[k]) != nullptr;
    const Layer &c = layers[conv->second];
    for (size_t k = 1; k < c.inputs.size(); ++k)
      statsAreSources &= source(c.inputs[k]) != nullptr;
    if (!statsAreSources)
      continue;
    foldedBn[conv->second] = i;
    foldedInto[i] = conv->second;
  }
}

Status Evaluator::conv(const Layer &layer, size_t index, LayerWork &work) {
  const Tensor &x = read(layer.inputs[0]);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank != 3 && rank != 4)
    return fail(layer, absl::StrCat("input ", shapeText(x.shape), " is not 1-d or 2-d NC..."));
  // The weight and bias: the f32 originals, folded with a following batch
  // norm and rounded here (fixed-point), or as read.
  Tensor weight = numerics == Numerics::kQ16 && source(layer.inputs[1])
                      ? *source(layer.inputs[1]) : read(layer.inputs[1]);
  if (weight.shape.size() != x.shape.size())
    return fail(layer, "weight rank differs from the input's");
  int64_t cout = weight.shape[0];
  std::vector<float> bias(cout, 0.0f);
  if (layer.inputs.size() > 2) {
    const Tensor &b = numerics == Numerics::kQ16 && source(layer.inputs[2])
                          ? *source(layer.inputs[2]) : read(layer.inputs[2]);
    if (elementCount(b.shape) != cout)
      return fail(layer, "bias does not have one value per output channel");
    bias = b.data;
  }
  if (auto fold = foldedBn.find(index); fold != foldedBn.end()) {
    const Layer &bn = program.layers()[fold->second];
    const Tensor &gamma = *source(bn.inputs[1]), &beta = *source(bn.inputs[2]),
                 &mean = *source(bn.inputs[3]), &var = *source(bn.inputs[4]);
    if (elementCount(gamma.shape) != cout || elementCount(var.shape) != cout ||
        elementCount(beta.shape) != cout || elementCount(mean.shape) != cout)
      return fail(bn, "statistics do not have one value per channel");
    float eps = bn.floatAttr("epsilon", 1e-5f);
    int64_t per = cout ? elementCount(weight.shape) / cout : 0;
    for (int64_t o = 0; o < cout; ++o) {
      double scale = gamma.data[o] / std::sqrt(static_cast<double>(var.data[o]) + eps);
      for (int64_t k = 0; k < per; ++k)
        weight.data[o * per + k] = static_cast<float>(weight.data[o * per + k] * scale);
      bias[o] = static_cast<float>((bias[o] - mean.data[o]) * scale + beta.data[o]);
    }
  }
  if (numerics == Numerics::kQ16 && source(layer.inputs[1]))
    quantizeQ16(weight.data);

  Spatial in{x.shape[0], x.shape[1], rank == 4 ? x.shape[2] : 1, x.shape[rank - 1]};
  int64_t group = layer.intAttr("group", 1);
  int64_t kh = rank == 4 ? weight.shape[2] : 1, kw = weight.shape[rank - 1];
  std::vector<int64_t> strides = layer.intsAttr("strides", std::vector<int64_t>(rank - 2, 1));
  std::vector<int64_t> dil = layer.intsAttr("dilations", std::vector<int64_t>(rank - 2, 1));
  std::vector<int64_t> pads = layer.intsAttr("pads", std::vector<int64_t>(2 * (rank - 2), 0));
  if (group < 1 || group > std::max<int64_t>(in.c, 1) || in.c % group || cout % group ||
      weight.shape[1] * group != in.c ||
      strides.size() != size_t(rank - 2) || dil.size() != size_t(rank - 2) ||
      pads.size() != size_t(2 * (rank - 2)))
    return fail(layer, absl::StrCat("input ", shapeText(x.shape), " and weight ",
                                    shapeText(weight.shape), " do not fit group ",
                                    group, " and the window attributes"));
  int64_t sh = rank == 4 ? strides[0] : 1, sw = strides[rank - 3];
  int64_t dh = rank == 4 ? dil[0] : 1, dw = dil[rank - 3];
  int64_t ph = rank == 4 ? pads[0] : 0, pw = pads[rank - 3];
  int64_t phEnd = rank == 4 ? pads[2] : 0, pwEnd = pads[2 * (rank - 2) - 1];
  if (!validWindow(kh, sh, dh, ph, phEnd) || !validWindow(kw, sw, dw, pw, pwEnd))
    return fail(layer, "its kernel, strides, dilations or pads are out of range");
  int64_t oh = windowExtent(in.h, kh, sh, ph, phEnd, dh, false);
  int64_t ow = windowExtent(in.w, kw, sw, pw, pwEnd, dw, false);
  int64_t cinG = in.c / group, coutG = cout / group;
  // Each extent may be near 2^46 here: bound the products before forming them.
  if (!productWithin({oh, ow}) || !productWithin({in.n, cout, oh, ow}) ||
      !productWithin({cinG, kh, kw, oh, ow}))
    return fail(layer, "its output or im2col buffer would exceed 2^28 elements");
  int64_t k = cinG * kh * kw, p = oh * ow;
  Tensor y;
  y.shape = rank == 4 ? Shape{in.n, cout, oh, ow} : Shape{in.n, cout, ow};
  y.data.assign(in.n * cout * p, 0.0f);
  work.macs = in.n * cout * p * k;
  work.outputChannels = cout;
  work.activationBytes = 2 * (elementCount(x.shape) + elementCount(y.shape));
  work.weightBytes = 2 * (elementCount(weight.shape) + cout);
  RETURN_IF_ERROR(spend(layer, work.macs + in.n * group * k * p));  // + im2col
  if (y.data.empty()) {
    write(layer.outputs[0], std::move(y));
    return absl::OkStatus();
  }
  std::vector<float> cols(k * p);
  std::vector<double> acc(p);
  for (int64_t n = 0; n < in.n; ++n)
    for (int64_t g = 0; g < group; ++g) {
      // im2col: row (ci, i, j), column (oy, ox).
      for (int64_t ci = 0; ci < cinG; ++ci)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            float *row = cols.data() + ((ci * kh + i) * kw + j) * p;
            // An empty input (only padding is read) has no plane.
            const float *plane =
                x.data.empty() ? nullptr
                               : x.data.data() + ((n * in.c) + g * cinG + ci) * in.h * in.w;
            for (int64_t oy = 0; oy < oh; ++oy) {
              int64_t iy = oy * sh - ph + i * dh;
              for (int64_t ox = 0; ox < ow; ++ox) {
                int64_t ix = ox * sw - pw + j * dw;
                row[oy * ow + ox] = iy < 0 || iy >= in.h || ix < 0 || ix >= in.w
                                        ? 0.0f : plane[iy * in.w + ix];
              }
            }
          }
      for (int64_t o = 0; o < coutG; ++o) {
        int64_t co = g * coutG + o;
        std::fill(acc.begin(), acc.end(), static_cast<double>(bias[co]));
        const float *w = weight.data.data() + co * k;
        for (int64_t r = 0; r < k; ++r) {
          double wv = w[r];
          if (wv == 0.0)
            continue;
          const float *row = cols.data() + r * p;
          for (int64_t q = 0; q < p; ++q)
            acc[q] += wv * row[q];
        }
        float *dst = y.data.data() + (n * cout + co) * p;
        for (int64_t q = 0; q < p; ++q)
          dst[q] = static_cast<float>(acc[q]);
      }
    }
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

Status Evaluator::batchNorm(const Layer &layer, LayerWork &work) {
  const Tensor &x = read(layer.inputs[0]);
  if (x.shape.size() < 2)
    return fail(layer, "input has rank < 2");
  int64_t c = x.shape[1], inner = 1;
  for (size_t d = 2; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  const Tensor &gamma = read(layer.inputs[1]), &beta = read(layer.inputs[2]),
               &mean = read(layer.inputs[3]), &var = read(layer.inputs[4]);
  for (const Tensor *t : {&gamma, &beta, &mean, &var})
    if (elementCount(t->shape) != c)
      return fail(layer, "statistics do not have one value per channel");
  float eps = layer.floatAttr("epsilon", 1e-5f);
  Tensor y{x.shape, std::vector<float>(x.data.size())};
  for (int64_t n = 0; n < x.shape[0]; ++n)
    for (int64_t ch = 0; ch < c; ++ch) {
      double scale = gamma.data[ch] / std::sqrt(static_cast<double>(var.data[ch]) + eps);
      double shift = beta.data[ch] - mean.data[ch] * scale;
      int64_t base = (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i)
        y.data[base + i] = static_cast<float>(x.data[base + i] * scale + shift);
    }
  work.vectorOps = elementCount(x.shape);
  work.activationBytes = 4 * elementCount(x.shape);
  work.weightBytes = 2 * 4 * c;
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

Status Evaluator::pool(const Layer &layer, LayerWork &work) {
  const Tensor &x = read(layer.inputs[0]);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank != 3 && rank != 4)
    return fail(layer, absl::StrCat("input ", shapeText(x.shape), " is not 1-d or 2-d NC..."));
  size_t spatial = rank - 2;
  std::vector<int64_t> kernel = layer.intsAttr("kernel_shape", {});
  std::vector<int64_t> strides = layer.intsAttr("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dil = layer.intsAttr("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = layer.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || dil.size() != spatial ||
      pads.size() != 2 * spatial)
    return fail(layer, "window attributes do not match the input's rank");
  bool isMax = layer.op == "MaxPool", ceil = layer.intAttr("ceil_mode", 0) != 0;
  bool includePad = layer.intAttr("count_include_pad", 0) != 0;
  Spatial in{x.shape[0], x.shape[1], rank == 4 ? x.shape[2] : 1, x.shape[rank - 1]};
  auto at = [&](const std::vector<int64_t> &v, int d2, int64_t fallback) {
    return rank == 4 ? v[d2] : (d2 == 0 ? fallback : v[0]);
  };
  int64_t kh = at(kernel, 0, 1), kw = at(kernel, 1, 0);
  int64_t sh = at(strides, 0, 1), sw = at(strides, 1, 0);
  int64_t dh = at(dil, 0, 1), dw = at(dil, 1, 0);
  int64_t ph = rank == 4 ? pads[0] : 0, pw = pads[spatial - 1];
  int64_t phEnd = rank == 4 ? pads[2] : 0, pwEnd = pads[2 * spatial - 1];
  if (!validWindow(kh, sh, dh, ph, phEnd) || !validWindow(kw, sw, dw, pw, pwEnd))
    return fail(layer, "its kernel, strides, dilations or pads are out of range");
  int64_t oh = windowExtent(in.h, kh, sh, ph, phEnd, dh, ceil);
  int64_t ow = windowExtent(in.w, kw, sw, pw, pwEnd, dw, ceil);
  if (!productWithin({in.n, in.c, oh, ow, kh, kw}))
    return fail(layer, "its output's window reads would exceed 2^28");
  RETURN_IF_ERROR(spend(layer, in.n * in.c * oh * ow * kh * kw));
  Tensor y;
  y.shape = rank == 4 ? Shape{in.n, in.c, oh, ow} : Shape{in.n, in.c, ow};
  y.data.resize(in.n * in.c * oh * ow);
  for (int64_t plane = 0; plane < in.n * in.c; ++plane) {
    const float *src = x.data.empty() ? nullptr : x.data.data() + plane * in.h * in.w;
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            int64_t iy = oy * sh - ph + i * dh, ix = ox * sw - pw + j * dw;
            if (iy < in.h + phEnd && ix < in.w + pwEnd)
              ++padded;
            if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w)
              continue;
            double v = src[iy * in.w + ix];
            best = std::isnan(v) || v > best ? v : best;
            sum += v;
            ++inside;
          }
        double divisor = includePad ? padded : inside;
        y.data[(plane * oh + oy) * ow + ox] =
            static_cast<float>(isMax ? best : (divisor ? sum / divisor : 0.0));
      }
  }
  work.vectorOps = elementCount(y.shape) * kh * kw;
  work.activationBytes = 2 * (elementCount(x.shape) + elementCount(y.shape));
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

Status Evaluator::globalAveragePool(const Layer &layer, LayerWork &work) {
  const Tensor &x = read(layer.inputs[0]);
  if (x.shape.size() < 3)
    return fail(layer, "input has rank < 3");
  int64_t planes = x.shape[0] * x.shape[1];
  int64_t inner = elementCount(x.shape) / std::max<int64_t>(planes, 1);
  Tensor y;
  y.shape = x.shape;
  std::fill(y.shape.begin() + 2, y.shape.end(), 1);
  y.data.resize(planes);
  for (int64_t plane = 0; plane < planes; ++plane) {
    double sum = 0;
    for (int64_t i = 0; i < inner; ++i)
      sum += x.data[plane * inner + i];
    y.data[plane] = static_cast<float>(inner ? sum / inner : 0.0);
  }
  work.vectorOps = elementCount(x.shape);
  work.activationBytes = 2 * (elementCount(x.shape) + planes);
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

Status Evaluator::gemm(const Layer &layer, LayerWork &work) {
  const Tensor &a = read(layer.inputs[0]), &b = read(layer.inputs[1]);
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return fail(layer, "A and B must be 2-d");
  bool transB = layer.intAttr("transB", 0) != 0;
  int64_t m = a.shape[0], k = a.shape[1];
  int64_t n = transB ? b.shape[0] : b.shape[1];
  if ((transB ? b.shape[1] : b.shape[0]) != k)
    return fail(layer, absl::StrCat("A ", shapeText(a.shape), " and B ",
                                    shapeText(b.shape), " do not multiply"));
  double alpha = layer.floatAttr("alpha", 1.0f), beta = layer.floatAttr("beta", 1.0f);
  const Tensor *c = layer.inputs.size() > 2 ? &read(layer.inputs[2]) : nullptr;
  // C broadcasts to (M, N): a scalar, (N), (1, N), (M, 1) or (M, N).
  int64_t cRows = 1, cCols = 1;
  if (c) {
    if (c->shape.size() == 2) {
      cRows = c->shape[0];
      cCols = c->shape[1];
    } else if (c->shape.size() == 1) {
      cCols = c->shape[0];
    } else if (!c->shape.empty()) {
      return fail(layer, "C has rank > 2");
    }
    if ((cRows != 1 && cRows != m) || (cCols != 1 && cCols != n))
      return fail(layer, absl::StrCat("C ", shapeText(c->shape),
                                      " does not broadcast to [", m, ", ", n, "]"));
  }
  if (!productWithin({m, n}))
    return fail(layer, "its output would exceed 2^28 elements");
  RETURN_IF_ERROR(spend(layer, m * n * std::max<int64_t>(k, 1)));
  Tensor y{{m, n}, std::vector<float>(m * n)};
  std::vector<double> acc(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t r = 0; r < k; ++r) {
      double av = a.data[i * k + r];
      if (transB)
        for (int64_t j = 0; j < n; ++j)
          acc[j] += av * b.data[j * k + r];
      else
        for (int64_t j = 0; j < n; ++j)
          acc[j] += av * b.data[r * n + j];
    }
    for (int64_t j = 0; j < n; ++j) {
      double cv = c ? c->data[(cRows == 1 ? 0 : i) * cCols + (cCols == 1 ? 0 : j)] : 0.0;
      y.data[i * n + j] = static_cast<float>(alpha * acc[j] + beta * cv);
    }
  }
  work.macs = m * n * k;
  work.outputChannels = n;
  work.activationBytes = 2 * (m * k + m * n);
  work.weightBytes = 2 * (k * n + (c ? elementCount(c->shape) : 0));
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

Status Evaluator::binary(const Layer &layer, LayerWork &work) {
  const Tensor &a = read(layer.inputs[0]), &b = read(layer.inputs[1]);
  size_t rank = std::max(a.shape.size(), b.shape.size());
  Shape shape(rank), sa(rank, 1), sb(rank, 1);
  std::copy(a.shape.begin(), a.shape.end(), sa.begin() + (rank - a.shape.size()));
  std::copy(b.shape.begin(), b.shape.end(), sb.begin() + (rank - b.shape.size()));
  for (size_t d = 0; d < rank; ++d) {
    if (sa[d] != sb[d] && sa[d] != 1 && sb[d] != 1)
      return fail(layer, absl::StrCat(shapeText(a.shape), " and ", shapeText(b.shape),
                                      " do not broadcast"));
    shape[d] = sa[d] == 1 ? sb[d] : sa[d];
  }
  if (!withinElementLimit(shape) || !productWithin({elementCount(shape)}))
    return fail(layer, "its broadcast output would exceed 2^28 elements");
  // Strides of each operand over the result's index (0 where broadcast).
  Shape strideA(rank), strideB(rank);
  for (int64_t d = static_cast<int64_t>(rank) - 1, ka = 1, kb = 1; d >= 0; --d) {
    strideA[d] = sa[d] == 1 ? 0 : ka;
    strideB[d] = sb[d] == 1 ? 0 : kb;
    ka *= sa[d];
    kb *= sb[d];
  }
  Tensor y{shape, std::vector<float>(elementCount(shape))};
  Shape index(rank, 0);
  int64_t ia = 0, ib = 0;
  char op = layer.op[0];  // 'A'dd, 'S'ub, 'M'ul
  for (size_t e = 0; e < y.data.size(); ++e) {
    double x = a.data[ia], z = b.data[ib];
    y.data[e] = static_cast<float>(op == 'A' ? x + z : op == 'S' ? x - z : x * z);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      ia += strideA[d];
      ib += strideB[d];
      if (++index[d] < shape[d])
        break;
      ia -= strideA[d] * shape[d];
      ib -= strideB[d] * shape[d];
      index[d] = 0;
    }
  }
  work.vectorOps = elementCount(shape);
  work.activationBytes = 2 * (elementCount(a.shape) + elementCount(b.shape) + elementCount(shape));
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

Status Evaluator::unary(const Layer &layer, LayerWork &work) {
  Tensor y = read(layer.inputs[0]);
  for (float &v : y.data) {
    if (layer.op == "Relu")
      v = v > 0.0f || std::isnan(v) ? v : 0.0f;
    else if (layer.op == "Tanh")
      v = std::tanh(v);
    else
      v = 1.0f / (1.0f + std::exp(-v));
  }
  work.vectorOps = elementCount(y.shape);
  work.activationBytes = 4 * elementCount(y.shape);
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

Status Evaluator::reshape(const Layer &layer) {
  Tensor y = read(layer.inputs[0]);
  auto shape = program.shapes().find(layer.inputs[1]);
  if (shape == program.shapes().end())
    return fail(layer, "its shape is not a constant");
  // ONNX's rules: 0 copies the input's dim, one -1 is inferred.
  Shape target = shape->second;
  int64_t unknown = -1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == 0 && d < y.shape.size())
      target[d] = y.shape[d];
    if (target[d] == -1 && unknown < 0) {
      unknown = static_cast<int64_t>(d);
      target[d] = 1;
    }
  }
  bool valid = withinElementLimit(target);
  if (valid && unknown >= 0) {
    int64_t known = elementCount(target);
    target[unknown] = known > 0 ? elementCount(y.shape) / known : 0;
  }
  if (!valid || elementCount(target) != elementCount(y.shape))
    return fail(layer, absl::StrCat("cannot view ", shapeText(y.shape), " as ",
                                    shapeText(shape->second)));
  y.shape = target;
  values[layer.outputs[0]] = std::move(y);  // layout only: no rounding
  return absl::OkStatus();
}

Status Evaluator::transpose(const Layer &layer, LayerWork &work) {
  const Tensor &x = read(layer.inputs[0]);
  if (x.shape.size() != 2)
    return fail(layer, "only 2-d tensors are transposed");
  int64_t r = x.shape[0], c = x.shape[1];
  Tensor y{{c, r}, std::vector<float>(x.data.size())};
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      y.data[j * r + i] = x.data[i * c + j];
  work.activationBytes = 4 * elementCount(x.shape);
  values[layer.outputs[0]] = std::move(y);
  return absl::OkStatus();
}

Status Evaluator::concat(const Layer &layer, LayerWork &work) {
  std::vector<const Tensor *> parts;
  for (const std::string &name : layer.inputs)
    parts.push_back(&read(name));
  int64_t rank = static_cast<int64_t>(parts[0]->shape.size());
  int64_t axis = layer.intAttr("axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return fail(layer, absl::StrCat("axis ", layer.intAttr("axis", 0), " is out of range"));
  Shape shape = parts[0]->shape;
  shape[axis] = 0;
  for (const Tensor *part : parts) {
    if (static_cast<int64_t>(part->shape.size()) != rank)
      return fail(layer, "inputs differ in rank");
    shape[axis] += part->shape[axis];
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && part->shape[d] != parts[0]->shape[d])
        return fail(layer, "inputs differ outside the axis");
  }
  if (!withinElementLimit(shape))
    return fail(layer, "its output would exceed 2^28 elements");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= shape[d];
  Tensor y{shape, {}};
  y.data.reserve(elementCount(shape));
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor *part : parts) {
      int64_t chunk = part->shape[axis] * inner;
      y.data.insert(y.data.end(), part->data.begin() + o * chunk,
                    part->data.begin() + (o + 1) * chunk);
    }
  work.activationBytes = 4 * elementCount(shape);
  write(layer.outputs[0], std::move(y));
  return absl::OkStatus();
}

absl::StatusOr<Evaluation>
Evaluator::run(const std::map<std::string, TensorView> &bound) {
  for (const Port &port : program.inputs()) {
    auto it = bound.find(port.name);
    if (it == bound.end())
      return absl::InvalidArgumentError(
          absl::StrCat("input '", port.name, "' is not bound"));
    if (it->second.shape != port.shape)
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", port.name, "' is ", shapeText(it->second.shape), ", the model takes ",
          shapeText(port.shape)));
    const float *data = it->second.data;
    sources[port.name] = Tensor{port.shape,
                                std::vector<float>(data, data + elementCount(port.shape))};
  }
  for (const auto &[name, tensor] : program.constants())
    sources[name] = tensor;
  findFolds();
  Evaluation result;
  const auto &layers = program.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer &layer = layers[i];
    LayerWork work;
    work.name = layer.name;
    work.op = layer.op;
    Status status;
    if (auto folded = foldedInto.find(i); folded != foldedInto.end()) {
      // Folded into the convolution: its output is that convolution's.
      values[layer.outputs[0]] = values.at(layers[folded->second].outputs[0]);
      work.op = "BatchNormalization (folded)";
    } else if (layer.op == "Conv") {
      status = conv(layer, i, work);
    } else if (layer.op == "BatchNormalization") {
      status = batchNorm(layer, work);
    } else if (layer.op == "MaxPool" || layer.op == "AveragePool") {
      status = pool(layer, work);
    } else if (layer.op == "GlobalAveragePool") {
      status = globalAveragePool(layer, work);
    } else if (layer.op == "Gemm") {
      status = gemm(layer, work);
    } else if (layer.op == "Add" || layer.op == "Sub" || layer.op == "Mul") {
      status = binary(layer, work);
    } else if (layer.op == "Relu" || layer.op == "Tanh" || layer.op == "Sigmoid") {
      status = unary(layer, work);
    } else if (layer.op == "Reshape") {
      status = reshape(layer);
    } else if (layer.op == "Transpose") {
      status = transpose(layer, work);
    } else if (layer.op == "Concat") {
      status = concat(layer, work);
    } else if (layer.op == "Identity") {
      values[layer.outputs[0]] = read(layer.inputs[0]);
    } else {
      status = fail(layer, "not an op this model runs");
    }
    if (!status.ok())
      return status;
    result.work.push_back(std::move(work));
  }
  for (const Port &port : program.outputs()) {
    Tensor out = read(port.name);
    if (out.shape != port.shape)
      return absl::InvalidArgumentError(absl::StrCat(
          "output '", port.name, "' came out ", shapeText(out.shape),
          ", the model declares ", shapeText(port.shape)));
    result.outputs.push_back(std::move(out));
  }
  return result;
}

} // namespace

int quantizeQ16(std::vector<float> &data) {
  float largest = 0.0f;
  for (float v : data)
    if (std::isfinite(v))
      largest = std::max(largest, std::fabs(v));
  int exponent = 0;
  if (largest > 0.0f)
    std::frexp(largest, &exponent);  // largest = m * 2^exponent, m in [0.5, 1)
  int fraction = std::clamp(15 - exponent, -32, 48);
  double scale = std::ldexp(1.0, fraction), inverse = std::ldexp(1.0, -fraction);
  for (float &v : data) {
    double q = std::isnan(v) ? 0.0 : std::nearbyint(static_cast<double>(v) * scale);
    q = std::clamp(q, -32768.0, 32767.0);
    v = static_cast<float>(q * inverse);
  }
  return fraction;
}

absl::StatusOr<Evaluation> evaluate(const MdlaProgram &program,
                                    const std::map<std::string, TensorView> &bound,
                                    Numerics numerics, int64_t workBudget) {
  return Evaluator(program, numerics, workBudget).run(bound);
}

} // namespace kiln::agent::mdla
