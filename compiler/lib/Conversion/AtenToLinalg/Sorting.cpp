//===- Sorting.cpp - aten.sort to linalg ----------------------------------===//
//
// This file implements a stable sort along the last dimension as two
// quadratic linalg.generic reductions: each element's rank (how many
// elements precede it), then, per output position, the element of that
// rank. O(n^2) per row: meant for the short rows of topk/argsort in models.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

/// a sorts before b (ascending, NaN largest; `descending` flips).
Value before(OpBuilder &b, Location l, Value a, Value c, bool descending) {
  if (descending)
    std::swap(a, c);
  if (isa<FloatType>(a.getType())) {
    Value aNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, a, a);
    Value cNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, c, c);
    Value less = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, a, c);
    Value notANan = b.create<arith::XOrIOp>(
        l, aNan, b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
    return b.create<arith::AndIOp>(l, notANan, b.create<arith::OrIOp>(l, cNan, less));
  }
  return b.create<arith::CmpIOp>(
      l, a.getType().isInteger(1) ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt,
      a, c);
}

struct SortLowering : OpConversionPattern<SortOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SortOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getSelf();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), last = rank - 1;
    bool descending = op.getDescending();
    Type i64 = rewriter.getI64Type();
    auto indexType = RankedTensorType::get(type.getShape(), i64);
    // Loops (lead..., i, j): maps reading x at i, at j, and the output at i.
    SmallVector<AffineExpr> atI, atJ;
    for (int64_t d = 0; d < last; ++d) {
      atI.push_back(getAffineDimExpr(d, ctx));
      atJ.push_back(getAffineDimExpr(d, ctx));
    }
    atI.push_back(getAffineDimExpr(last, ctx));
    atJ.push_back(getAffineDimExpr(rank, ctx));
    AffineMap mapI = AffineMap::get(rank + 1, 0, atI, ctx);
    AffineMap mapJ = AffineMap::get(rank + 1, 0, atJ, ctx);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    // rank[i] = #{j : x[j] before x[i], or equal and j < i}.
    Value ranks =
        rewriter
            .create<linalg::GenericOp>(
                loc, indexType, ValueRange{x, x},
                buildFilled(rewriter, loc, indexType, 0.0),
                ArrayRef<AffineMap>{mapI, mapJ, mapI}, iterators,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value xi = args[0], xj = args[1];
                  Value jFirst = before(b, l, xj, xi, descending);
                  Value iFirst = before(b, l, xi, xj, descending);
                  Value tie = b.create<arith::XOrIOp>(
                      l, b.create<arith::OrIOp>(l, jFirst, iFirst),
                      b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
                  Value jLower = b.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::ult, b.create<linalg::IndexOp>(l, rank),
                      b.create<linalg::IndexOp>(l, last));
                  Value counts = b.create<arith::OrIOp>(
                      l, jFirst, b.create<arith::AndIOp>(l, tie, jLower));
                  Value one = b.create<arith::ExtUIOp>(l, i64, counts);
                  b.create<linalg::YieldOp>(
                      l, b.create<arith::AddIOp>(l, args[2], one).getResult());
                })
            .getResult(0);
    // out[p] = x[i] where rank[i] == p (loops (lead..., p, i)).
    Value valuesInit = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                        type.getElementType());
    Value zeroScalar = scalarConstant(rewriter, loc, type.getElementType(), 0.0);
    valuesInit = rewriter.create<linalg::FillOp>(loc, zeroScalar, valuesInit)
                     .getResult(0);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type, indexType}, ValueRange{x, ranks},
        ValueRange{valuesInit, buildFilled(rewriter, loc, indexType, 0.0)},
        ArrayRef<AffineMap>{mapJ, mapJ, mapI, mapI}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value p = b.create<arith::IndexCastOp>(l, i64,
                                                 b.create<linalg::IndexOp>(l, last));
          Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, args[1], p);
          Value i = b.create<arith::IndexCastOp>(l, i64,
                                                 b.create<linalg::IndexOp>(l, rank));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, hit, args[0], args[2]),
                            b.create<arith::SelectOp>(l, hit, i, args[3])});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void kiln::aten::populateSortingPatterns(RewritePatternSet &patterns) {
  patterns.add<SortLowering>(patterns.getContext());
}
