//===- DecomposeFractionalMaxPool.cpp - fractional max pooling as gathers -===//
//
// This file implements the decomposition of aten.fractional_max_pool: each
// pooled dim's window starts computed from the plane's sample as eager's
// kernel computes them, in the element type; every window's elements
// gathered from the flattened plane; then eager's scan result, the first
// maximum unless the window holds a NaN, when it is the last NaN.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "llvm/ADT/APFloat.h"

#include <limits>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// alpha = (In - K) / (Out - 1) as eager computes it in the element type:
/// both converted to it, divided (f16 and bf16 in f32), rounded to it.
double windowStride(Type element, int64_t span, int64_t steps) {
  const llvm::fltSemantics &own = cast<FloatType>(element).getFloatSemantics();
  const llvm::fltSemantics &work =
      element.getIntOrFloatBitWidth() < 32 ? llvm::APFloat::IEEEsingle() : own;
  bool inexact = false;
  auto inOwnType = [&](int64_t v) {
    llvm::APFloat f(static_cast<double>(v));
    f.convert(own, llvm::APFloat::rmNearestTiesToEven, &inexact);
    f.convert(work, llvm::APFloat::rmNearestTiesToEven, &inexact);
    return f;
  };
  llvm::APFloat alpha = inOwnType(span);
  alpha.divide(inOwnType(steps), llvm::APFloat::rmNearestTiesToEven);
  alpha.convert(own, llvm::APFloat::rmNearestTiesToEven, &inexact);
  alpha.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &inexact);
  return alpha.convertToDouble();
}

struct DecomposeFractionalMaxPool : OpRewritePattern<aten::FractionalMaxPoolOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::FractionalMaxPoolOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType inType = op.getSelf().getType();
    Type element = inType.getElementType();
    Type i64 = rewriter.getI64Type();
    ArrayRef<int64_t> kernel = op.getKernel();
    const int64_t pooled = static_cast<int64_t>(kernel.size());
    ArrayRef<int64_t> in = inType.getShape().take_back(pooled);
    ArrayRef<int64_t> out = op.getValues().getType().getShape().take_back(pooled);
    int64_t planes = 1;
    for (int64_t e : inType.getShape().drop_back(pooled))
      planes *= e;
    Value samples = b.view(op.getSamples(), {planes, pooled});
    auto int64 = [&](double v) { return b.constant(i64, v); };

    // The flattened plane index of every window element, shaped (planes,
    // out..., kernel...): a sum over the pooled dims of each window's
    // positions along its dim times that dim's stride.
    Value flat;
    int64_t stride = 1;
    for (int64_t d = pooled - 1; d >= 0; --d) {
      Value window = windowPositions(rewriter, b, samples, d, in[d], out[d], kernel[d], planes);
      SmallVector<int64_t> spread(1 + 2 * pooled, 1);
      spread[0] = planes;
      spread[1 + d] = out[d];
      spread[1 + pooled + d] = kernel[d];
      Value term = b.mul(i64, b.view(window, spread), int64(static_cast<double>(stride)));
      flat = flat ? b.add(i64, flat, term) : term;
      stride *= in[d];
    }
    int64_t positions = 1, window = 1;
    for (int64_t d = 0; d < pooled; ++d)
      positions *= out[d], window *= kernel[d];
    flat = b.view(flat, {planes, positions, window});
    Value plane = b.view(op.getSelf(), {planes, stride});
    auto gatheredType = RankedTensorType::get({planes, positions * window}, element);
    Value gathered = rewriter.create<aten::GatherOp>(
        loc, gatheredType, plane, b.view(flat, {planes, positions * window}),
        rewriter.getI64IntegerAttr(1));
    gathered = b.view(gathered, {planes, positions, window});

    // Eager's scan keeps the first maximum (a strict >) and then any NaN:
    // the last NaN where the window holds one.
    auto maskType = RankedTensorType::get({planes, positions, window}, rewriter.getI1Type());
    auto pickType = RankedTensorType::get({planes, positions, 1}, i64);
    Value nan = b.pointwise(maskType, "ne", {gathered, gathered});
    Value cleaned = b.pointwise(typeOf(gathered), "where",
                                {nan, b.constant(element, -std::numeric_limits<double>::infinity()),
                                 gathered});
    Value firstMax = rewriter.create<aten::ArgReduceOp>(loc, pickType, cleaned,
                                                        rewriter.getI64IntegerAttr(2),
                                                        /*keepdim=*/true, /*max=*/true);
    Value nanAt = b.pointwise(RankedTensorType::get({planes, positions, window}, i64), "where",
                              {nan, b.positions({window}), int64(-1)});
    Value lastNan = rewriter.create<aten::AmaxOp>(loc, pickType, nanAt,
                                                  rewriter.getDenseI64ArrayAttr({2}),
                                                  rewriter.getBoolAttr(true));
    Value pick = b.pointwise(pickType, "where",
                             {b.pointwise(pickType.clone(rewriter.getI1Type()), "ge",
                                          {lastNan, int64(0)}),
                              lastNan, firstMax});
    auto dim2 = rewriter.getI64IntegerAttr(2);
    Value values = rewriter.create<aten::GatherOp>(loc, pickType.clone(element), gathered, pick,
                                                   dim2);
    Value indices = rewriter.create<aten::GatherOp>(loc, pickType, flat, pick, dim2);
    rewriter.replaceOp(op, {b.view(values, op.getValues().getType().getShape()),
                            b.view(indices, op.getIndices().getType().getShape())});
    return success();
  }

private:
  /// The input positions of pooled dim `d`'s windows, (planes, out, kernel):
  /// window i < out - 1 starts at trunc((i + u) * alpha) - trunc(u * alpha),
  /// u the plane's sample and alpha = (in - kernel) / (out - 1), all in the
  /// element type; the last at in - kernel. A start past [0, in - kernel]
  /// (a sample outside [0, 1)) is clamped, so no window reads outside.
  static Value windowPositions(PatternRewriter &r, AtenBuilder &b, Value samples, int64_t d,
                               int64_t in, int64_t out, int64_t kernel, int64_t planes) {
    Location loc = samples.getLoc();
    Type element = typeOf(samples).getElementType();
    Type i64 = r.getI64Type();
    auto int64 = [&](double v) { return b.constant(i64, v); };
    const int64_t last = in - kernel;
    auto startsType = RankedTensorType::get({planes, out}, i64);
    Value starts;
    if (out > 1) {
      Value u = r.create<aten::SliceOp>(loc, RankedTensorType::get({planes, 1}, element), samples,
                                        r.getDenseI64ArrayAttr({0, d}),
                                        r.getDenseI64ArrayAttr({1, 1}));
      Value alpha = b.constant(element, windowStride(element, last, out - 1));
      Value index = b.convert(b.positions({out}), element);
      // trunc(v) for a v in [0, in]; anything else (NaN, a sample far
      // outside [0, 1)) converts as 0 and is clamped below.
      auto truncated = [&](Value v) {
        RankedTensorType type = typeOf(v);
        auto mask = type.clone(r.getI1Type());
        Value usable = b.pointwise(mask, "logical_and",
                                   {b.pointwise(mask, "ge", {v, b.constant(element, 0.0)}),
                                    b.pointwise(mask, "le", {v, b.constant(element, in)})});
        Value safe = b.pointwise(type, "where", {usable, v, b.constant(element, 0.0)});
        return b.pointwise(type.clone(i64), "copy", safe);
      };
      Value along = b.mul(element, b.add(element, index, u), alpha);
      starts = b.sub(i64, truncated(along), truncated(b.mul(element, u, alpha)));
      Value isLast = b.pointwise(RankedTensorType::get({out}, r.getI1Type()), "eq",
                                 {b.positions({out}), int64(static_cast<double>(out - 1))});
      starts = b.pointwise(startsType, "where", {isLast, int64(static_cast<double>(last)), starts});
      starts = b.pointwise(startsType, "minimum",
                           {b.pointwise(startsType, "maximum", {starts, int64(0)}),
                            int64(static_cast<double>(last))});
    } else {
      starts = r.create<aten::ConstantOp>(loc, i64, static_cast<double>(last),
                                          startsType.getShape());
    }
    return b.add(i64, b.view(starts, {planes, out, 1}), b.positions({kernel}));
  }
};

} // namespace

void kiln::populateFractionalPoolDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeFractionalMaxPool>(patterns.getContext());
}
