//===- DecomposeLinalg.cpp - aten.lu_factor unrolled ----------------------===//
//
// This file implements the decomposition of aten.lu_factor: LAPACK's getrf
// (partial pivoting) unrolled over the n columns of a (B, n, n) batch, the
// matrices of the batch side by side. Step k picks the first row at or
// below k whose column-k entry has the largest magnitude, swaps it with row
// k, stores the multipliers below the pivot (0 for a zero pivot: the matrix
// is singular, as getrf's info says) and updates the trailing block.
// Rounding differs from LAPACK's blocked updates in the last bits.
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


struct DecomposeLuFactor : OpRewritePattern<aten::LuFactorOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::LuFactorOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    Value a = op.getSelf();
    RankedTensorType type = typeOf(a);
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), order = type.getDimSize(1);
    Type i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    auto mask = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, i1); };
    Value rowIndex = b.positions({1, order, 1});
    Value colIndex = b.positions({1, 1, order});
    auto columnType = RankedTensorType::get({batch, order, 1}, element);
    auto rowType = RankedTensorType::get({batch, 1, order}, element);
    auto b11 = RankedTensorType::get({batch, 1, 1}, i64);
    auto slice = [&](Value v, RankedTensorType to, ArrayRef<int64_t> offsets) -> Value {
      return rewriter.create<aten::SliceOp>(loc, to, v,
                                            rewriter.getDenseI64ArrayAttr(offsets),
                                            rewriter.getDenseI64ArrayAttr({1, 1, 1}));
    };
    auto where = [&](RankedTensorType to, Value condition, Value x, Value y) {
      return b.pointwise(to, "where", {condition, x, y});
    };
    SmallVector<Value> pivots;
    Value odd = rewriter.create<aten::ConstantOp>(loc, i1, 0.0,
                                                  ArrayRef<int64_t>{batch, 1});
    for (int64_t k = 0; k < order; ++k) {
      Value kConst = b.constant(i64, static_cast<double>(k));
      // The pivot: the first largest |a[i, k]| with i >= k.
      Value column = slice(a, columnType, {0, 0, k});
      Value magnitude = b.pointwise(columnType, "abs", column);
      Value eligible = b.pointwise(mask({1, order, 1}), "ge", {rowIndex, kConst});
      magnitude = where(columnType, eligible, magnitude, b.constant(element, -1.0));
      Value p = rewriter.create<aten::ArgReduceOp>(
          loc, b11, magnitude, rewriter.getI64IntegerAttr(1),
          rewriter.getBoolAttr(true), rewriter.getBoolAttr(true));
      Value pivot2d = b.view(p, {batch, 1});
      pivots.push_back(pivot2d);
      Value swapped = b.pointwise(mask({batch, 1}), "ne", {pivot2d, kConst});
      odd = b.pointwise(typeOf(odd), "logical_xor", {odd, swapped});
      // Swap rows k and p.
      Value rowK = slice(a, rowType, {0, k, 0});
      Value rowP = rewriter.create<aten::GatherOp>(
          loc, rowType, a,
          rewriter.create<aten::ExpandOp>(
              loc, RankedTensorType::get({batch, 1, order}, i64), p),
          rewriter.getI64IntegerAttr(1));
      Value atK = b.pointwise(mask({1, order, 1}), "eq", {rowIndex, kConst});
      Value atP = b.pointwise(mask({batch, order, 1}), "eq", {rowIndex, p});
      a = where(type, atP, rowK, a);
      a = where(type, atK, rowP, a);
      // Multipliers below the pivot (0 when the pivot is 0), then the
      // trailing update a[i, j] -= m[i] * a[k, j] for i, j > k.
      Value pivot = slice(a, RankedTensorType::get({batch, 1, 1}, element), {0, k, k});
      Value pivotRow = slice(a, rowType, {0, k, 0});
      Value below = b.pointwise(mask({1, order, 1}), "gt", {rowIndex, kConst});
      Value zeroPivot = b.pointwise(mask({batch, 1, 1}), "eq",
                                    {pivot, b.constant(element, 0.0)});
      Value ratio = rewriter.create<aten::DivOp>(loc, columnType,
                                                 slice(a, columnType, {0, 0, k}), pivot);
      Value zero = b.constant(element, 0.0);
      Value multiplier = where(columnType, zeroPivot, zero, ratio);
      multiplier = where(columnType, below, multiplier, zero);
      Value update = rewriter.create<aten::MulOp>(loc, type, multiplier, pivotRow);
      Value right = b.pointwise(mask({1, 1, order}), "gt", {colIndex, kConst});
      Value trailing = b.pointwise(mask({1, order, order}), "logical_and", {below, right});
      Value updated = rewriter.create<aten::SubOp>(loc, type, a, update,
                                                   rewriter.getF64FloatAttr(1.0));
      a = where(type, trailing, updated, a);
      Value atColumn = b.pointwise(mask({1, 1, order}), "eq", {colIndex, kConst});
      Value store = b.pointwise(mask({1, order, order}), "logical_and", {below, atColumn});
      a = where(type, store, multiplier, a);
    }
    Value pivotTable = rewriter.create<aten::CatOp>(
        loc, RankedTensorType::get({batch, order}, i64), pivots,
        rewriter.getI64IntegerAttr(1));
    rewriter.replaceOp(op, {a, pivotTable, odd});
    return success();
  }
};

} // namespace

void kiln::populateLinalgDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeLuFactor>(patterns.getContext());
}
