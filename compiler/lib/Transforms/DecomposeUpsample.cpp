//===- DecomposeUpsample.cpp - antialiased resampling as two products -----===//
//
// This file implements the decomposition of aten.upsample_aa (eager's
// _upsample_bilinear2d_aa and _upsample_bicubic2d_aa): the resampling is
// separable, each output row (column) a normalised weighted sum of input
// rows (columns), so it is two products with constant (out, in) weight
// tables, W first, then H. The weights follow eager's (and PIL's)
// antialiasing: output i centres at scale * (i + 0.5) in the input; the
// filter (triangle, or Keys cubic with a = -0.5) spans interp_size / 2
// input samples each side, times the scale when downsampling (its argument
// divided by the scale); the samples within int(center -+ support + 0.5),
// clipped to the input, take the filter's values normalised to sum 1.
// They are computed in double and stored in the tensor's type (f32 for
// f16 and bf16, which resample in f32). A dim whose extent stays is left
// alone, as eager leaves it, whatever scale factor was given.
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

/// Keys' cubic convolution kernel with a = -0.5, eager's antialiasing one.
double keysCubic(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0)
    return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0)
    return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

/// The (in, out) weights of one dim, row-major: entry (k, i) is input k's
/// weight in output i (the table the product of (..., in) rows takes).
std::vector<double> weightTable(int64_t in, int64_t out, bool alignCorners,
                                std::optional<double> given, bool cubic) {
  double scale;
  if (alignCorners)
    scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  else
    scale = given && *given > 0.0 ? 1.0 / *given
                                  : static_cast<double>(in) / static_cast<double>(out);
  const double halfWidth = cubic ? 2.0 : 1.0;
  const double support = scale >= 1.0 ? halfWidth * scale : halfWidth;
  const double invScale = scale >= 1.0 ? 1.0 / scale : 1.0;
  const int64_t most = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  std::vector<double> table(static_cast<size_t>(in * out), 0.0);
  std::vector<double> w;
  for (int64_t i = 0; i < out; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t first = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    int64_t count = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - first;
    count = std::clamp<int64_t>(count, 0, most);
    w.assign(static_cast<size_t>(count), 0.0);
    double total = 0.0;
    for (int64_t j = 0; j < count; ++j) {
      double x = (static_cast<double>(j + first) - center + 0.5) * invScale;
      w[j] = cubic ? keysCubic(x) : triangle(x);
      total += w[j];
    }
    for (int64_t j = 0; j < count; ++j)
      table[static_cast<size_t>((first + j) * out + i)] = total != 0.0 ? w[j] / total : w[j];
  }
  return table;
}

struct DecomposeUpsampleAa : OpRewritePattern<aten::UpsampleAaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::UpsampleAaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType type = op.getResult().getType();
    // f16 and bf16 (which eager's CPU kernel refuses) resample in f32,
    // rounded once at the end.
    Type element = type.getElementType();
    if (!element.isF32() && !element.isF64())
      element = rewriter.getF32Type();
    ArrayRef<int64_t> in = typeOf(op.getSelf()).getShape(), out = type.getShape();
    const int64_t planes = in[0] * in[1];
    const bool cubic = op.getMode() == "bicubic";
    auto weights = [&](int64_t d, FloatAttr scale) {
      std::optional<double> given;
      if (scale)
        given = scale.getValueAsDouble();
      std::vector<double> table = weightTable(in[d], out[d], op.getAlignCorners(), given, cubic);
      auto tableType = RankedTensorType::get({in[d], out[d]}, element);
      if (element.isF64())
        return b.constant(DenseElementsAttr::get(tableType, ArrayRef<double>(table)));
      std::vector<APFloat> rounded;
      for (double v : table) {
        APFloat f(v);
        bool lost;
        f.convert(cast<FloatType>(element).getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
        rounded.push_back(f);
      }
      return b.constant(DenseElementsAttr::get(tableType, rounded));
    };
    auto product = [&](Value rows, Value table, int64_t count, int64_t width) {
      return rewriter
          .create<aten::MmOp>(loc, RankedTensorType::get({count, width}, element), rows, table)
          .getResult();
    };
    // A dim whose extent stays is left as it is, whatever scale is given
    // (as eager skips it).
    Value x = b.convert(op.getSelf(), element);
    // Along W: (N C H, W) x (W, W_out).
    Value wide = b.view(x, {planes, in[2], in[3]});
    if (in[3] != out[3])
      wide = b.view(product(b.view(x, {planes * in[2], in[3]}),
                            weights(3, op.getScaleWAttr()), planes * in[2], out[3]),
                    {planes, in[2], out[3]});
    // Along H: (N C W_out, H) x (H, H_out), then back to (N, C, H_out, W_out).
    Value tall = wide;
    if (in[2] != out[2]) {
      Value columns = b.view(b.permute(wide, {0, 2, 1}), {planes * out[3], in[2]});
      Value product2 =
          product(columns, weights(2, op.getScaleHAttr()), planes * out[3], out[2]);
      tall = b.permute(b.view(product2, {planes, out[3], out[2]}), {0, 2, 1});
    }
    rewriter.replaceOp(op, b.convert(b.view(tall, type.getShape()), type.getElementType()));
    return success();
  }
};

} // namespace

void kiln::populateUpsampleDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeUpsampleAa>(patterns.getContext());
}
