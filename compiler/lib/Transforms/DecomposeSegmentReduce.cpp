//===- DecomposeSegmentReduce.cpp - segment reductions as masked ones -----===//
//
// This file implements the decomposition of aten.segment_reduce: with the
// data viewed (P, N, Q) around its axis and the segments' bounds (P, S) as
// starts and ends, a (P, S, N) mask of which positions each segment holds
// selects the data, the rest set to the reduction's identity, and one
// reduction over N gives (P, S, Q); then `initial` is taken in as eager's
// kernel takes it (mean divides by the segment's length last).
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <limits>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

struct DecomposeSegmentReduce : OpRewritePattern<aten::SegmentReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::SegmentReduceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType dataType = op.getData().getType();
    Type element = dataType.getElementType();
    Type i64 = rewriter.getI64Type();
    const int64_t axis = static_cast<int64_t>(op.getAxis());
    ArrayRef<int64_t> shape = dataType.getShape();
    int64_t outer = 1, inner = 1;
    for (int64_t e : shape.take_front(axis))
      outer *= e;
    for (int64_t e : shape.drop_front(axis + 1))
      inner *= e;
    const int64_t length = shape[axis];
    const int64_t segments = op.getType().getDimSize(axis);
    StringRef reduce = op.getReduce();

    // Each segment's [start, end) along the axis, (P, S).
    auto boundsType = RankedTensorType::get({outer, segments}, i64);
    Value bounds = b.convert(op.getBounds(), i64);
    Value starts, ends;
    if (op.getOffsets()) {
      bounds = b.view(bounds, {outer, segments + 1});
      auto from = [&](int64_t at) {
        return rewriter.create<aten::SliceOp>(loc, boundsType, bounds,
                                              rewriter.getDenseI64ArrayAttr({0, at}),
                                              rewriter.getDenseI64ArrayAttr({1, 1}))
            .getResult();
      };
      starts = from(0);
      ends = from(1);
    } else {
      Value lengths = b.view(bounds, {outer, segments});
      ends = rewriter.create<aten::CumsumOp>(loc, boundsType, lengths,
                                             rewriter.getI64IntegerAttr(1),
                                             rewriter.getBoolAttr(false));
      starts = b.sub(i64, ends, lengths);
    }
    Value position = b.positions({length});
    auto maskType = RankedTensorType::get({outer, segments, length}, rewriter.getI1Type());
    Value holds = b.pointwise(
        maskType, "logical_and",
        {b.pointwise(maskType, "ge", {position, b.view(starts, {outer, segments, 1})}),
         b.pointwise(maskType, "lt", {position, b.view(ends, {outer, segments, 1})})});

    const double inf = std::numeric_limits<double>::infinity();
    double identity = reduce == "max" ? -inf : reduce == "min" ? inf : reduce == "prod" ? 1.0 : 0.0;
    auto spreadType = RankedTensorType::get({outer, segments, length, inner}, element);
    Value masked = b.pointwise(spreadType, "where",
                               {b.view(holds, {outer, segments, length, 1}),
                                b.view(op.getData(), {outer, 1, length, inner}),
                                b.constant(element, identity)});
    auto reducedType = RankedTensorType::get({outer, segments, inner}, element);
    auto overAxis = rewriter.getDenseI64ArrayAttr({2});
    auto drop = rewriter.getBoolAttr(false);
    Value result;
    if (reduce == "max")
      result = rewriter.create<aten::AmaxOp>(loc, reducedType, masked, overAxis, drop);
    else if (reduce == "min")
      result = rewriter.create<aten::AminOp>(loc, reducedType, masked, overAxis, drop);
    else if (reduce == "prod")
      result = rewriter.create<aten::ProdOp>(loc, reducedType, masked, overAxis, drop);
    else
      result = b.sum(reducedType, masked, {2});

    std::optional<APFloat> initial = op.getInitial();
    Value start = initial ? b.constant(element, initial->convertToDouble()) : Value();
    if (reduce == "mean") {
      // (initial + sum) / length; an empty segment keeps initial (NaN, 0 / 0,
      // without one).
      Value count = b.convert(b.view(b.sub(i64, ends, starts), {outer, segments, 1}), element);
      if (start) {
        Value some = b.pointwise(RankedTensorType::get({outer, segments, 1}, rewriter.getI1Type()),
                                 "gt", {count, b.constant(element, 0.0)});
        Value mean = b.div(element, b.add(element, start, result), count);
        result = b.pointwise(reducedType, "where", {some, mean, start});
      } else {
        result = b.div(element, result, count);
      }
    } else if (start) {
      if (reduce == "sum")
        result = b.add(element, start, result);
      else if (reduce == "prod")
        result = b.mul(element, start, result);
      else
        result = b.pointwise(reducedType, reduce == "max" ? "maximum" : "minimum",
                             {result, start});
    }
    rewriter.replaceOp(op, b.view(result, op.getType().getShape()));
    return success();
  }
};

} // namespace

void kiln::populateSegmentReduceDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeSegmentReduce>(patterns.getContext());
}
