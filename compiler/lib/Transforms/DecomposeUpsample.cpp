//===- DecomposeUpsample.cpp - separable resampling as two products -------===//
//
// This file implements the decomposition of aten.upsample_separable (eager's
// _upsample_bilinear2d_aa and _upsample_bicubic2d_aa, and its uint8
// upsample_bilinear2d and upsample_bicubic2d): the resampling is
// separable, each output row (column) a weighted sum of input rows
// (columns), so it is two products with constant (in, out) weight tables,
// W first, then H, as eager's separable kernel runs. A dim whose extent
// stays is left alone, as eager leaves it, whatever scale factor was given.
//
// The taps follow eager's HelperInterpBase, computed in double:
// - antialiased (PIL's): output i centres at scale * (i + 0.5) in the
//   input; the filter (triangle, or Keys cubic with a = -0.5) spans
//   interp_size / 2 input samples each side, times the scale when
//   downsampling (its argument divided by the scale); the samples within
//   int(center -+ support + 0.5), clipped to the input, take the filter's
//   values normalised to sum 1;
// - plain: 2 (4) taps around floorf of the source index, with the triangle
//   (Keys cubic, a = -0.75) of their distance; taps past an edge add onto
//   the edge sample's weight.
// Floating-point tensors resample in their type (f32 for f16 and bf16).
// uint8 values (carried in i16) resample in fixed point, as eager's uint8
// kernel: int16 weights scaled by 2^p, and each pass rounded and clamped
// to [0, 255] (the uint8 image eager keeps between the passes).
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

double triangle(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

/// Keys' cubic convolution kernel: a = -0.5 antialiased (PIL's), -0.75
/// plain (OpenCV's), as eager picks them.
double keysCubic(double x, double a) {
  x = std::abs(x);
  if (x < 1.0)
    return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0)
    return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

/// One dim's taps: output i reads inputs first[i], first[i] + 1, ... with
/// weights[i] (as many as it reads).
struct Taps {
  std::vector<int64_t> first;
  std::vector<std::vector<double>> weights;
  double largest = 0.0;
};

/// area_pixel_compute_scale: input samples per output sample.
double scaleOf(int64_t in, int64_t out, bool alignCorners, std::optional<double> given) {
  if (alignCorners)
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return given && *given > 0.0 ? 1.0 / *given
                               : static_cast<double>(in) / static_cast<double>(out);
}

/// The antialiased taps (_compute_indices_min_size_weights_aa).
Taps antialiasedTaps(int64_t in, int64_t out, double scale, bool cubic) {
  const double halfWidth = cubic ? 2.0 : 1.0;
  const double support = scale >= 1.0 ? halfWidth * scale : halfWidth;
  const double invScale = scale >= 1.0 ? 1.0 / scale : 1.0;
  const int64_t most = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  Taps taps;
  for (int64_t i = 0; i < out; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t first = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    int64_t count = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - first;
    count = std::clamp<int64_t>(count, 0, most);
    std::vector<double> w(static_cast<size_t>(count), 0.0);
    double total = 0.0;
    for (int64_t j = 0; j < count; ++j) {
      double x = (static_cast<double>(j + first) - center + 0.5) * invScale;
      w[j] = cubic ? keysCubic(x, -0.5) : triangle(x);
      total += w[j];
    }
    if (total != 0.0)
      for (double &v : w) {
        v /= total;
        taps.largest = std::max(taps.largest, v);
      }
    taps.first.push_back(first);
    taps.weights.push_back(std::move(w));
  }
  return taps;
}

/// The plain interpolation's taps (_compute_indices_min_size_weights).
Taps interpolationTaps(int64_t in, int64_t out, double scale, bool alignCorners, bool cubic) {
  const int64_t size = cubic ? 4 : 2, support = size / 2;
  Taps taps;
  for (int64_t i = 0; i < out; ++i) {
    double real = alignCorners ? scale * static_cast<double>(i)
                               : scale * (static_cast<double>(i) + 0.5) - 0.5;
    if (!alignCorners && !cubic && real < 0.0)
      real = 0.0;
    // Eager floors in float (floorf of the double).
    const int64_t index = std::min<int64_t>(
        static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
    const double lambda = std::clamp(real - static_cast<double>(index), 0.0, 1.0);
    const int64_t lowest = index - support + 1;
    const int64_t first = std::max<int64_t>(lowest, 0);
    const int64_t count =
        std::clamp<int64_t>(std::min<int64_t>(index + support + 1, in) - first, 0, size);
    std::vector<double> w(static_cast<size_t>(size), 0.0);
    int64_t slot = 0;
    for (int64_t j = 0; j < size; ++j) {
      double x = static_cast<double>(j + 1 - support) - lambda;
      double v = cubic ? keysCubic(x, -0.75) : triangle(x);
      if (lowest + j <= 0)
        slot = 0;
      else if (lowest + j >= in - 1)
        slot = count - 1;
      if (slot >= size)
        continue;
      w[slot] += v;
      taps.largest = std::max(taps.largest, w[slot]);
      ++slot;
    }
    w.resize(static_cast<size_t>(count));
    taps.first.push_back(first);
    taps.weights.push_back(std::move(w));
  }
  return taps;
}

/// The (in, out) table of `taps`, row-major: entry (k, i) is input k's
/// weight in output i (the table the product of (..., in) rows takes).
std::vector<double> tableOf(const Taps &taps, int64_t in) {
  const int64_t out = static_cast<int64_t>(taps.first.size());
  std::vector<double> table(static_cast<size_t>(in * out), 0.0);
  for (int64_t i = 0; i < out; ++i)
    for (auto [j, w] : llvm::enumerate(taps.weights[i]))
      table[static_cast<size_t>((taps.first[i] + static_cast<int64_t>(j)) * out + i)] = w;
  return table;
}

/// Eager's fixed-point precision for uint8: the first p (at most 22) at
/// which the largest weight times 2^(p + 1) rounds to 2^15 or more.
int64_t precisionOf(const Taps &taps) {
  int64_t p = 0;
  for (; p < 22; ++p)
    if (static_cast<int64_t>(0.5 + taps.largest * static_cast<double>(int64_t(1) << (p + 1))) >=
        (1 << 15))
      break;
  return p;
}

struct DecomposeUpsampleSeparable : OpRewritePattern<aten::UpsampleSeparableOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::UpsampleSeparableOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType type = op.getResult().getType();
    // f16 and bf16 (which eager's CPU kernel refuses) resample in f32,
    // rounded once at the end; uint8 values in i32 fixed point.
    const bool fixedPoint = isa<IntegerType>(type.getElementType());
    Type element = type.getElementType();
    if (fixedPoint)
      element = rewriter.getI32Type();
    else if (!element.isF32() && !element.isF64())
      element = rewriter.getF32Type();
    ArrayRef<int64_t> in = typeOf(op.getSelf()).getShape(), out = type.getShape();
    const int64_t planes = in[0] * in[1];
    const bool cubic = op.getMode() == "bicubic";
    auto tapsOf = [&](int64_t d, FloatAttr given) {
      std::optional<double> scaleGiven;
      if (given)
        scaleGiven = given.getValueAsDouble();
      double scale = scaleOf(in[d], out[d], op.getAlignCorners(), scaleGiven);
      return op.getAntialias() ? antialiasedTaps(in[d], out[d], scale, cubic)
                               : interpolationTaps(in[d], out[d], scale, op.getAlignCorners(),
                                                   cubic);
    };
    // One pass: (count, in) rows times the (in, out) table, then, in fixed
    // point, rounded and clamped to uint8 as eager stores each pass.
    auto pass = [&](Value rows, int64_t d, FloatAttr given, int64_t count) -> Value {
      Taps taps = tapsOf(d, given);
      std::vector<double> table = tableOf(taps, in[d]);
      auto tableType = RankedTensorType::get({in[d], out[d]}, element);
      auto resultType = RankedTensorType::get({count, out[d]}, element);
      Value weights;
      int64_t precision = 0;
      if (fixedPoint) {
        precision = precisionOf(taps);
        std::vector<int32_t> scaled;
        for (double w : table) {
          double v = w * static_cast<double>(int64_t(1) << precision);
          scaled.push_back(static_cast<int16_t>(
              v < 0 ? static_cast<int32_t>(-0.5 + v) : static_cast<int32_t>(0.5 + v)));
        }
        weights = b.constant(DenseElementsAttr::get(tableType, ArrayRef<int32_t>(scaled)));
      } else if (element.isF64()) {
        weights = b.constant(DenseElementsAttr::get(tableType, ArrayRef<double>(table)));
      } else {
        std::vector<APFloat> rounded;
        for (double v : table) {
          APFloat f(v);
          bool lost;
          f.convert(cast<FloatType>(element).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &lost);
          rounded.push_back(f);
        }
        weights = b.constant(DenseElementsAttr::get(tableType, rounded));
      }
      Value product =
          rewriter.create<aten::MmOp>(loc, resultType, rows, weights).getResult();
      if (!fixedPoint)
        return product;
      // (sum + 2^(p-1)) >> p (eager's int arithmetic: an arithmetic shift),
      // clamped to [0, 255].
      Value half = b.constant(element, static_cast<double>(int64_t(1) << (precision - 1)));
      Value shifted = b.pointwise(resultType, "bitwise_right_shift",
                                  {b.add(element, product, half),
                                   b.constant(element, static_cast<double>(precision))});
      return b.pointwise(resultType, "clamp", {shifted}, {0.0, 255.0});
    };
    // A dim whose extent stays is left as it is, whatever scale is given
    // (as eager skips it).
    Value x = b.convert(op.getSelf(), element);
    // Along W: (N C H, W) x (W, W_out).
    Value wide = b.view(x, {planes, in[2], in[3]});
    if (in[3] != out[3])
      wide = b.view(pass(b.view(x, {planes * in[2], in[3]}), 3, op.getScaleWAttr(),
                         planes * in[2]),
                    {planes, in[2], out[3]});
    // Along H: (N C W_out, H) x (H, H_out), then back to (N, C, H_out, W_out).
    Value tall = wide;
    if (in[2] != out[2]) {
      Value columns = b.view(b.permute(wide, {0, 2, 1}), {planes * out[3], in[2]});
      Value product = pass(columns, 2, op.getScaleHAttr(), planes * out[3]);
      tall = b.permute(b.view(product, {planes, out[3], out[2]}), {0, 2, 1});
    }
    rewriter.replaceOp(op, b.convert(b.view(tall, type.getShape()), type.getElementType()));
    return success();
  }
};

} // namespace

void kiln::populateUpsampleDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeUpsampleSeparable>(patterns.getContext());
}
