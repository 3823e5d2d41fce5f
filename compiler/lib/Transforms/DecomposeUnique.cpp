//===- DecomposeUnique.cpp - aten.unique as a sort and two masks ----------===//
//
// This file implements the decomposition of aten.unique over self's n
// elements (flattened):
//   sorted, order = a stable sort (NaN last)
//   first[i]      = i == 0 or sorted[i] != sorted[i - 1] (NaN != NaN: each
//                   NaN starts a value of its own, as in eager)
//   values        = sorted where first (a boolean mask: the data-dependent
//                   count)
//   slot[i]       = (cumulative sum of first)[i] - 1, the value sorted[i] is
//   inverse       = slot scattered back to self's order through `order`
//   counts        = ones summed into their slots, cut to the count by a
//                   mask of the slots below it
// Every op has a static shape but the two boolean masks.
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

struct DecomposeUniqueOp : OpRewritePattern<aten::UniqueOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::UniqueOp op,
                                PatternRewriter &r) const override {
    Location loc = op.getLoc();
    AtenBuilder b(r, loc);
    RankedTensorType selfType = typeOf(op.getSelf());
    const int64_t n = selfType.getNumElements();
    Type i64 = r.getI64Type(), i1 = r.getI1Type();
    auto flatType = RankedTensorType::get({n}, selfType.getElementType());
    auto slotsType = RankedTensorType::get({n}, i64);
    auto flagsType = RankedTensorType::get({n}, i1);

    Value flat = b.view(op.getSelf(), {n});
    // Equal elements made neighbours (a stable sort), unless only runs of
    // equal neighbours collapse.
    Value sorted = flat, order = b.positions({n});
    if (!op.getConsecutive()) {
      auto sort = r.create<aten::SortOp>(loc, TypeRange{flatType, slotsType}, flat,
                                         r.getI64IntegerAttr(0), r.getBoolAttr(false));
      sorted = sort.getValues();
      order = sort.getIndices();
    }

    Value first = b.constant(DenseElementsAttr::get(
        RankedTensorType::get({1}, i1), ArrayRef<bool>{true}));
    if (n > 1) {
      auto restType = RankedTensorType::get({n - 1}, selfType.getElementType());
      auto slice = [&](int64_t offset) -> Value {
        return r.create<aten::SliceOp>(loc, restType, sorted,
                                       r.getDenseI64ArrayAttr({offset}),
                                       r.getDenseI64ArrayAttr({1}));
      };
      Value differs = b.pointwise(RankedTensorType::get({n - 1}, i1), "ne",
                                  {slice(1), slice(0)});
      first = r.create<aten::CatOp>(loc, flagsType, ValueRange{first, differs},
                                    r.getI64IntegerAttr(0));
    }
    Value values = r.create<aten::BooleanMaskOp>(loc, op.getValues().getType(),
                                                 sorted, first);

    Value starts = b.convert(first, i64);
    Value runningCount = r.create<aten::CumsumOp>(loc, slotsType, starts,
                                                  r.getI64IntegerAttr(0),
                                                  r.getBoolAttr(false));
    Value slots = b.sub(i64, runningCount, b.constant(i64, 1.0));
    Value zeros = b.constant(DenseElementsAttr::get(slotsType, r.getI64IntegerAttr(0)));
    Value inverse = r.create<aten::ScatterOp>(loc, slotsType, zeros, order, slots,
                                              r.getI64IntegerAttr(0),
                                              r.getStringAttr("none"));
    Value ones = b.constant(DenseElementsAttr::get(slotsType, r.getI64IntegerAttr(1)));
    Value perSlot = r.create<aten::ScatterOp>(loc, slotsType, zeros, slots, ones,
                                              r.getI64IntegerAttr(0),
                                              r.getStringAttr("sum"));
    Value count = b.sum(RankedTensorType::get({}, i64), starts, {0});
    Value live = b.pointwise(flagsType, "lt", {b.positions({n}), count});
    Value counts = r.create<aten::BooleanMaskOp>(loc, op.getCounts().getType(),
                                                 perSlot, live);
    r.replaceOp(op, {values, b.view(inverse, selfType.getShape()), counts});
    return success();
  }
};

} // namespace

void kiln::populateUniqueDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeUniqueOp>(patterns.getContext());
}
