//===- DecomposeSelection.cpp - topk, kthvalue, median, mode from aten.sort ===//
//
// This file implements the decompositions of aten.topk, aten.kthvalue,
// aten.median and aten.mode into a stable aten.sort along their dim and
// slices of its
// values and indices: topk the first k of a sort descending when `largest`,
// kthvalue entry k - 1 of an ascending sort, viewed without the dim unless
// keepdim, and median each row's middle entry (which depends on the row's
// NaNs) gathered from an ascending sort, and mode the entry with the
// widest run of equal values (searchsorted bounds). A 0-d input is its own
// one-element sort.
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

/// (values, indices) of `self` sorted along `dim`, then cut to [start,
/// start + size) along it (nothing cut for a 0-d self or the whole dim).
SmallVector<Value> sortedPart(PatternRewriter &r, Location loc, Value self,
                              int64_t dim, bool descending, int64_t start,
                              int64_t size) {
  RankedTensorType type = typeOf(self);
  auto sort = r.create<aten::SortOp>(
      loc, TypeRange{type, type.clone(r.getI64Type())}, self,
      r.getI64IntegerAttr(dim), r.getBoolAttr(descending));
  SmallVector<Value> parts(sort->getResults());
  if (type.getRank() == 0 || (start == 0 && size == type.getDimSize(dim)))
    return parts;
  SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1),
      shape(type.getShape());
  offsets[dim] = start;
  shape[dim] = size;
  for (Value &part : parts)
    part = r.create<aten::SliceOp>(loc, typeOf(part).clone(shape), part,
                                   r.getDenseI64ArrayAttr(offsets),
                                   r.getDenseI64ArrayAttr(strides));
  return parts;
}

struct DecomposeTopkOp : OpRewritePattern<aten::TopkOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(aten::TopkOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, sortedPart(rewriter, op.getLoc(), op.getSelf(),
                                      op.getDim(), op.getLargest(), 0, op.getK()));
    return success();
  }
};

struct DecomposeKthvalueOp : OpRewritePattern<aten::KthvalueOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(aten::KthvalueOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    SmallVector<Value> picked =
        sortedPart(rewriter, op.getLoc(), op.getSelf(), op.getDim(),
                   /*descending=*/false, op.getK() - 1, 1);
    ArrayRef<int64_t> shape = op.getValues().getType().getShape();
    rewriter.replaceOp(op, {b.view(picked[0], shape), b.view(picked[1], shape)});
    return success();
  }
};

/// median/nanmedian of a float self: an ascending sort, whose NaNs come last
/// in their order, then each row's entry at (n - 1) / 2 of the n entries
/// counted (nanmedian: those not NaN; a row of NaNs gives its first), or
/// for median in a row with a NaN the first NaN (entry extent - NaNs),
/// values and indices gathered there. Integers have no NaN: the middle
/// entry, sliced.
struct DecomposeMedianOp : OpRewritePattern<aten::MedianOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(aten::MedianOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    Value self = op.getSelf();
    RankedTensorType type = typeOf(self);
    ArrayRef<int64_t> shape = op.getValues().getType().getShape();
    Type i64 = rewriter.getI64Type();
    if (type.getRank() == 0) {
      rewriter.replaceOp(op, {self, b.constant(i64, 0)});
      return success();
    }
    int64_t dim = op.getDim(), extent = type.getDimSize(dim);
    if (!isa<FloatType>(type.getElementType())) {
      SmallVector<Value> middle =
          sortedPart(rewriter, loc, self, dim, /*descending=*/false, (extent - 1) / 2, 1);
      rewriter.replaceOp(op, {b.view(middle[0], shape), b.view(middle[1], shape)});
      return success();
    }
    SmallVector<Value> sorted =
        sortedPart(rewriter, loc, self, dim, /*descending=*/false, 0, extent);
    SmallVector<int64_t> rowShape(type.getShape()), summed(type.getShape());
    rowShape[dim] = 1;
    summed.erase(summed.begin() + dim);
    auto rowType = RankedTensorType::get(rowShape, i64);
    Value isNaN = b.pointwise(type.clone(rewriter.getI1Type()), "isnan", self);
    Value nans = b.view(
        b.sum(RankedTensorType::get(summed, i64), b.convert(isNaN, i64), {dim}), rowShape);
    Value zero = b.constant(i64, 0), one = b.constant(i64, 1), two = b.constant(i64, 2);
    Value numbers = b.sub(i64, b.constant(i64, static_cast<double>(extent)), nans);
    Value position;
    if (op.getIgnoreNan()) {
      Value last = b.pointwise(rowType, "maximum", {b.sub(i64, numbers, one), zero});
      position = b.pointwise(rowType, "div_floor", {last, two});
    } else {
      Value hasNaN = b.pointwise(rowType.clone(rewriter.getI1Type()), "gt", {nans, zero});
      position = b.pointwise(rowType, "where",
                             {hasNaN, numbers, b.constant(i64, static_cast<double>((extent - 1) / 2))});
    }
    auto dimAttr = rewriter.getI64IntegerAttr(dim);
    Value values = rewriter.create<aten::GatherOp>(loc, type.clone(rowShape), sorted[0],
                                                   position, dimAttr);
    Value indices = rewriter.create<aten::GatherOp>(loc, rowType, sorted[1], position, dimAttr);
    rewriter.replaceOp(op, {b.view(values, shape), b.view(indices, shape)});
    return success();
  }
};

/// mode: sorted stably along the last dim (the dim moved there), each
/// entry's count is the width of its value's run, from a lower and an upper
/// searchsorted of the row into itself (a NaN's is 0: it is never
/// counted); the first largest count is the first entry of the smallest
/// most frequent value's run, and the run's last entry holds the largest
/// index that value has.
struct DecomposeModeOp : OpRewritePattern<aten::ModeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(aten::ModeOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    Value self = op.getSelf();
    RankedTensorType type = typeOf(self);
    Type i64 = rewriter.getI64Type();
    ArrayRef<int64_t> shape = op.getValues().getType().getShape();
    if (type.getRank() == 0) {
      rewriter.replaceOp(op, {self, b.constant(i64, 0)});
      return success();
    }
    const int64_t rank = type.getRank(), last = rank - 1;
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      if (d != op.getDim())
        perm.push_back(d);
    perm.push_back(op.getDim());
    Value rows = b.permute(self, perm);
    RankedTensorType rowsType = typeOf(rows);
    SmallVector<Value> sorted = sortedPart(rewriter, loc, rows, last, /*descending=*/false, 0,
                                           rowsType.getDimSize(last));
    RankedTensorType positionsType = rowsType.clone(i64);
    auto bound = [&](bool right) -> Value {
      return rewriter.create<aten::SearchSortedOp>(loc, positionsType, sorted[0], sorted[0],
                                                   right ? rewriter.getUnitAttr() : UnitAttr());
    };
    Value lower = bound(false), upper = bound(true);
    Value counts = b.sub(i64, upper, lower);
    SmallVector<int64_t> oneShape(rowsType.getShape());
    oneShape[last] = 1;
    auto oneType = RankedTensorType::get(oneShape, i64);
    Value best = rewriter.create<aten::ArgReduceOp>(loc, oneType, counts,
                                                    rewriter.getI64IntegerAttr(last),
                                                    /*keepdim=*/true, /*max=*/true);
    auto dimAttr = rewriter.getI64IntegerAttr(last);
    Value value = rewriter.create<aten::GatherOp>(loc, rowsType.clone(oneShape), sorted[0],
                                                  best, dimAttr);
    // The run starts at `best` (its entries share their count); NaNs, last
    // in the row, shift both bounds, so the end comes from the count.
    Value width = rewriter.create<aten::GatherOp>(loc, oneType, counts, best, dimAttr);
    // A row of NaNs (every count 0) gives its first entry.
    Value one = b.constant(i64, 1);
    Value runEnd =
        b.sub(i64, b.add(i64, best, b.pointwise(oneType, "maximum", {width, one})), one);
    Value index = rewriter.create<aten::GatherOp>(loc, oneType, sorted[1], runEnd, dimAttr);
    rewriter.replaceOp(op, {b.view(value, shape), b.view(index, shape)});
    return success();
  }
};

} // namespace

void kiln::populateSelectionDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeTopkOp, DecomposeKthvalueOp, DecomposeMedianOp, DecomposeModeOp>(patterns.getContext());
}
