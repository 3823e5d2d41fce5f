//===- DecomposeSearch.cpp - aten.searchsorted as a count -----------------===//
//
// This file implements the decomposition of aten.searchsorted: the
// insertion index of a value v in its sorted row b is the number of
// entries with !(b >= v) (the left side, a lower bound) or !(b > v) (the
// right side, an upper bound). Each value is compared with every entry of
// its row: one broadcast comparison (values x row booleans) and one sum
// over the row. For a row sorted without NaN this is the index eager's
// binary search returns, and a NaN value goes past the end, as there.
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

struct DecomposeSearchSortedOp : OpRewritePattern<aten::SearchSortedOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::SearchSortedOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    RankedTensorType sortedType = typeOf(op.getSorted());
    RankedTensorType type = typeOf(op.getResult());
    ArrayRef<int64_t> valueShape = typeOf(op.getValues()).getShape();
    int64_t rowLength = sortedType.getShape().back();
    // Rows (..., 1, L) against a column of values (..., V, 1).
    SmallVector<int64_t> rowShape;
    if (sortedType.getRank() == 1) {
      rowShape.assign(valueShape.size(), 1);
    } else {
      ArrayRef<int64_t> leading = sortedType.getShape().drop_back();
      rowShape.assign(leading.begin(), leading.end());
      rowShape.push_back(1);
    }
    rowShape.push_back(rowLength);
    SmallVector<int64_t> columnShape(valueShape);
    columnShape.push_back(1);
    SmallVector<int64_t> pairShape(valueShape);
    pairShape.push_back(rowLength);
    Value rows = b.view(op.getSorted(), rowShape);
    Value column = b.view(op.getValues(), columnShape);
    auto pairs = RankedTensorType::get(pairShape, rewriter.getI1Type());
    // Entries before the insertion point: !(b >= v), or !(b > v) on the right.
    Value after = b.pointwise(pairs, op.getRight() ? "gt" : "ge", {rows, column});
    Value before = b.pointwise(pairs, "logical_not", after);
    Type i64 = rewriter.getI64Type();
    Value counted = b.convert(before, i64);
    Value count = b.sum(type.clone(i64), counted,
                        {static_cast<int64_t>(valueShape.size())});
    rewriter.replaceOp(op, b.convert(count, type.getElementType()));
    return success();
  }
};

} // namespace

void kiln::populateSearchDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeSearchSortedOp>(patterns.getContext());
}
