//===- DecomposeHistc.cpp - aten.histc as a scatter-add -------------------===//
//
// This file implements the decomposition of aten.histc: each element's bin
// computed as eager's CPU kernel computes it, in the element type,
// trunc((x - min) * bins / (max - min)) with the last bin closed at max,
// then a scatter-add of ones into bins + 1 counters, the last of which
// takes the elements outside [min, max] (and NaN) and is dropped. With
// min == max the range is the elements' own minimum and maximum, widened
// by 1 on each side when they are equal.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

struct DecomposeHistc : OpRewritePattern<aten::HistcOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::HistcOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType resultType = op.getType();
    Type element = resultType.getElementType();
    const int64_t bins = op.getBins();
    const int64_t count = typeOf(op.getSelf()).getNumElements();
    if (count == 0) {
      rewriter.replaceOpWithNewOp<aten::ConstantOp>(op, element, 0.0,
                                                    resultType.getShape());
      return success();
    }
    Value x = b.view(op.getSelf(), {count});
    auto scalar = RankedTensorType::get({}, element);
    auto flatMask = RankedTensorType::get({count}, rewriter.getI1Type());
    auto flat = RankedTensorType::get({count}, element);
    double lowest = op.getMin().convertToDouble(), highest = op.getMax().convertToDouble();
    Value lo = b.constant(element, lowest), hi = b.constant(element, highest);
    if (lowest == highest) {
      auto everything = rewriter.getDenseI64ArrayAttr({0});
      auto drop = rewriter.getBoolAttr(false);
      lo = rewriter.create<aten::AminOp>(loc, scalar, x, everything, drop);
      hi = rewriter.create<aten::AmaxOp>(loc, scalar, x, everything, drop);
      Value equal = b.pointwise(RankedTensorType::get({}, rewriter.getI1Type()), "eq",
                                {lo, hi});
      lo = b.pointwise(scalar, "where", {equal, b.sub(element, lo, b.constant(element, 1.0)), lo});
      hi = b.pointwise(scalar, "where", {equal, b.add(element, hi, b.constant(element, 1.0)), hi});
    }
    Value inRange = b.pointwise(flatMask, "logical_and",
                                {b.pointwise(flatMask, "ge", {x, lo}),
                                 b.pointwise(flatMask, "le", {x, hi})});
    // ((x - lo) * bins) / (hi - lo). Where that is not in [0, bins] (NaN or
    // an infinity: an infinite data range, where eager raises; an empty
    // range once rounded to the element type; an overflow) the element
    // counts nowhere, and the conversion to an integer only sees [0, bins].
    Value binCount = b.constant(element, static_cast<double>(bins));
    Value scaled = b.div(element, b.mul(element, b.sub(element, x, lo), binCount),
                         b.sub(element, hi, lo));
    Value bounded = b.pointwise(flatMask, "logical_and",
                                {b.pointwise(flatMask, "ge", {scaled, b.constant(element, 0.0)}),
                                 b.pointwise(flatMask, "le", {scaled, binCount})});
    inRange = b.pointwise(flatMask, "logical_and", {inRange, bounded});
    scaled = b.pointwise(flat, "where", {inRange, scaled, b.constant(element, 0.0)});
    Type i64 = rewriter.getI64Type();
    auto positions = RankedTensorType::get({count}, i64);
    Value bin = b.pointwise(positions, "minimum",
                            {b.pointwise(positions, "copy", scaled),
                             b.constant(i64, static_cast<double>(bins - 1))});
    bin = b.pointwise(positions, "where",
                      {inRange, bin, b.constant(i64, static_cast<double>(bins))});
    auto counters = RankedTensorType::get({bins + 1}, element);
    Value counts = rewriter.create<aten::ScatterOp>(
        loc, counters, rewriter.create<aten::ConstantOp>(loc, element, 0.0, counters.getShape()),
        bin, rewriter.create<aten::ConstantOp>(loc, element, 1.0, ArrayRef<int64_t>{count}),
        rewriter.getI64IntegerAttr(0), rewriter.getStringAttr("sum"));
    rewriter.replaceOpWithNewOp<aten::SliceOp>(op, resultType, counts,
                                               rewriter.getDenseI64ArrayAttr({0}),
                                               rewriter.getDenseI64ArrayAttr({1}));
    return success();
  }
};

} // namespace

void kiln::populateHistogramDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeHistc>(patterns.getContext());
}
