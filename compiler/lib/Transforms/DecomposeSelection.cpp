//===- DecomposeSelection.cpp - topk and kthvalue from aten.sort ----------===//
//
// This file implements the decompositions of aten.topk and aten.kthvalue
// into a stable aten.sort along their dim and slices of its values and
// indices: topk the first k of a sort descending when `largest`, kthvalue
// entry k - 1 of an ascending sort, viewed without the dim unless keepdim.
// A 0-d input is its own one-element sort.
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

} // namespace

void kiln::populateSelectionDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeTopkOp, DecomposeKthvalueOp>(patterns.getContext());
}
