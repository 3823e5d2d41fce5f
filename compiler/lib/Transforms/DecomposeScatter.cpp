//===- DecomposeScatter.cpp - PyTorch's scatter family as aten.scatter ----===//
//
// This file implements the decomposition of aten.put into aten.index_put of
// the flattened tensors, of aten.index_reduce into aten.scatter_reduce (its
// index broadcast along source), and of
// aten.scatter_reduce, the one op the importer makes of scatter,
// scatter_add and scatter_reduce, into the
// primitive aten.scatter (index and src of one shape, equal to self's
// outside `dim`, self always taking part):
//  - a 0-d scatter is the 1-element 1-d one;
//  - src's part beyond index is sliced off, and an index smaller than self
//    outside `dim` scatters into self's corner (a slice, then insert_slice);
//  - without include_self, the reduction starts from its identity and self
//    stays where nothing landed (a count scattered alongside);
//  - "mean" is a scattered sum over a count scattered in self's type, as
//    eager counts (self counted once when it takes part; integers divide
//    rounding down; a uint8 sum and count wrap first).
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <cmath>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// The value a reduction without self starts from: nothing combined yet.
double reductionIdentity(StringRef reduce, Type element) {
  if (reduce == "prod")
    return 1.0;
  if (reduce != "amax" && reduce != "amin")
    return 0.0;
  bool lowest = reduce == "amax";
  if (isa<FloatType>(element))
    return lowest ? -INFINITY : INFINITY;
  if (element.isInteger(1))
    return lowest ? 0.0 : 1.0;
  double half = std::ldexp(1.0, element.getIntOrFloatBitWidth() - 1);
  return lowest ? -half : half - 1;
}

/// Builds one scatter_reduce whose index and src match self outside `dim`.
struct MatchingScatter {
  AtenBuilder &b;
  PatternRewriter &r;
  Location loc;
  Value index;
  int64_t dim;

  /// A tensor of `like`'s shape, all `value`, of `element`.
  Value filled(Type element, double value, RankedTensorType like) const {
    return r.create<aten::ConstantOp>(loc, element, value, like.getShape());
  }

  Value scatter(Value into, Value from, StringRef how) const {
    return r.create<aten::ScatterOp>(loc, typeOf(into), into, index, from,
                                     r.getI64IntegerAttr(dim),
                                     r.getStringAttr(how));
  }

  /// How many values land at each of self's positions (i64).
  Value counts(RankedTensorType self, double start) const {
    Type i64 = r.getI64Type();
    return scatter(filled(i64, start, self), filled(i64, 1.0, typeOf(index)),
                   "sum");
  }

  Value build(Value self, Value src, StringRef reduce, bool includeSelf,
              bool wrapU8) const {
    RankedTensorType type = typeOf(self);
    Type element = type.getElementType();
    auto flags = type.clone(r.getI1Type());
    if (reduce == "mean") {
      // As eager: the count scattered in self's type (a bf16 count stops at
      // 256, a uint8 one wraps), 0 read as 1; self stays where nothing landed.
      Value count = scatter(filled(element, includeSelf ? 1.0 : 0.0, type),
                            filled(element, 1.0, typeOf(index)), "sum");
      Value sum = scatter(includeSelf ? self : filled(element, 0.0, type), src,
                          "sum");
      if (wrapU8) {
        Value mask = b.constant(element, 255.0);
        sum = b.pointwise(type, "bitwise_and", {sum, mask});
        count = b.pointwise(type, "bitwise_and", {count, mask});
      }
      Value zero = b.pointwise(flags, "eq", {count, b.constant(element, 0.0)});
      count = b.pointwise(type, "where", {zero, b.constant(element, 1.0), count});
      Value mean = isa<FloatType>(element)
                       ? b.div(element, sum, count)
                       : b.pointwise(type, "div_floor", {sum, count});
      if (includeSelf)
        return mean;
      Value hit = b.pointwise(flags, "gt",
                              {counts(type, 0.0), b.constant(r.getI64Type(), 0.0)});
      return b.pointwise(type, "where", {hit, mean, self});
    }
    if (includeSelf)
      return scatter(self, src, reduce);
    Value reduced = scatter(
        filled(element, reductionIdentity(reduce, element), type), src, reduce);
    Value hit = b.pointwise(flags, "gt",
                            {counts(type, 0.0), b.constant(r.getI64Type(), 0.0)});
    return b.pointwise(type, "where", {hit, reduced, self});
  }
};

struct DecomposeScatterReduceOp : OpRewritePattern<aten::ScatterReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::ScatterReduceOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value self = op.getSelf(), index = op.getIndex(), src = op.getSrc();
    ArrayRef<int64_t> idx = typeOf(index).getShape();
    int64_t dim = op.getDim();
    StringRef reduce = op.getReduce();
    bool includeSelf = op.getIncludeSelf(), wrapU8 = op.getWrapU8();
    if (type.getRank() == 0) {
      MatchingScatter one{b, rewriter, loc, b.view(index, {1}), 0};
      Value result = one.build(b.view(self, {1}), b.view(src, {1}), reduce,
                               includeSelf, wrapU8);
      rewriter.replaceOp(op, b.view(result, {}));
      return success();
    }
    SmallVector<int64_t> zeros(idx.size(), 0), ones(idx.size(), 1);
    auto slice = [&](Value v, ArrayRef<int64_t> shape) -> Value {
      if (typeOf(v).getShape() == shape)
        return v;
      return rewriter.create<aten::SliceOp>(loc, typeOf(v).clone(shape), v,
                                            rewriter.getDenseI64ArrayAttr(zeros),
                                            rewriter.getDenseI64ArrayAttr(ones));
    };
    MatchingScatter scatter{b, rewriter, loc, index, dim};
    // src contributes its index-shaped corner; self its corner of index's
    // extents (all of `dim`), the rest of self unchanged.
    SmallVector<int64_t> corner(idx);
    corner[dim] = type.getDimSize(dim);
    Value part = scatter.build(slice(self, corner), slice(src, idx), reduce,
                               includeSelf, wrapU8);
    if (ArrayRef<int64_t>(corner) == type.getShape()) {
      rewriter.replaceOp(op, part);
      return success();
    }
    rewriter.replaceOpWithNewOp<aten::InsertSliceOp>(
        op, type, self, part, rewriter.getDenseI64ArrayAttr(zeros),
        rewriter.getDenseI64ArrayAttr(ones));
    return success();
  }
};

/// index_reduce is scatter_reduce with index[k] at every position of
/// source's slice k: index viewed along `dim` and broadcast to source's
/// shape.
struct DecomposeIndexReduceOp : OpRewritePattern<aten::IndexReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::IndexReduceOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    RankedTensorType source = typeOf(op.getSource());
    int64_t dim = op.getDim();
    SmallVector<int64_t> along(source.getRank(), 1);
    along[dim] = source.getDimSize(dim);
    Value index = b.view(op.getIndex(), along);
    index = rewriter.create<aten::ExpandOp>(
        op.getLoc(), typeOf(index).clone(source.getShape()), index);
    rewriter.replaceOpWithNewOp<aten::ScatterReduceOp>(
        op, op.getType(), op.getSelf(), index, op.getSource(), op.getDimAttr(),
        op.getReduceAttr(), op.getIncludeSelfAttr(), op.getWrapU8Attr());
    return success();
  }
};

/// put is index_put on the flattened tensors: self, index and source as
/// 1-D, then self's shape back.
struct DecomposePutOp : OpRewritePattern<aten::PutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::PutOp op, PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    RankedTensorType type = op.getType();
    int64_t count = typeOf(op.getIndex()).getNumElements();
    Value flat = b.view(op.getSelf(), {type.getNumElements()});
    Value put = rewriter.create<aten::IndexPutOp>(
        op.getLoc(), typeOf(flat), flat, b.view(op.getIndex(), {count}),
        b.view(op.getSource(), {count}), op.getAccumulateAttr());
    rewriter.replaceOp(op, b.view(put, type.getShape()));
    return success();
  }
};

} // namespace

void kiln::populateScatterDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeScatterReduceOp, DecomposeIndexReduceOp, DecomposePutOp>(
      patterns.getContext());
}
