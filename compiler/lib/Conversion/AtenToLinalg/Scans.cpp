//===- Scans.cpp - long cummax/cummin/logcumsumexp to loops ---------------===//
//
// This file implements the lowering of the running scans along a dim longer
// than kMaxTriangularScan (kiln-decompose-aten takes the shorter ones as
// triangular reductions): a loop over the dim carrying the running values
// of every line (buildLinearScan), each step as eager's CPU kernel does it:
//  - cummax/cummin: a new element takes over when it is NaN, or when the
//    running value is not NaN and the element is >= (<=) it, so ties give
//    the last index and a NaN sticks (each later NaN taking the index);
//  - logcumsumexp: log(exp(r) + exp(x)) as max + log1p(exp(min - max)),
//    except when both are the same infinity (then that infinity), in f64
//    for f32/f64 and f32 for f16/bf16.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// Whether `x`'s dim `dim` is long enough for a loop (shorter ones
/// kiln-decompose-aten takes as triangular reductions).
bool scansByLoop(Value x, int64_t dim) {
  auto type = cast<RankedTensorType>(x.getType());
  return type.getRank() > 0 && type.getDimSize(dim) > kMaxTriangularScan;
}

Value isNan(OpBuilder &b, Location l, Value v) {
  return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, v, v);
}

/// cummax (`max`) or cummin along a dim longer than kMaxTriangularScan.
template <typename ScanOp, bool max>
struct LinearCumExtremumLowering : OpConversionPattern<ScanOp> {
  using OpConversionPattern<ScanOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<ScanOp>::OpAdaptor;
  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getSelf();
    int64_t dim = op.getDim();
    if (!scansByLoop(x, dim))
      return rewriter.notifyMatchFailure(op, "kiln-decompose-aten scans this");
    Location loc = op.getLoc();
    Type element = cast<RankedTensorType>(x.getType()).getElementType();
    bool isFloat = isa<FloatType>(element);
    Value start = extremeConstant(rewriter, loc, element, /*lowest=*/max);
    Value noIndex = scalarConstant(rewriter, loc, rewriter.getI64Type(), 0.0);
    SmallVector<Value> results = buildLinearScan(
        rewriter, loc, x, dim, ValueRange{start, noIndex},
        [&](OpBuilder &b, Location l, Value k, Value v, ValueRange running) {
          Value best = running[0];
          Value takes;
          if (isFloat) {
            auto pred = max ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE;
            Value beats = b.create<arith::AndIOp>(
                l, b.create<arith::CmpFOp>(l, pred, v, best),
                b.create<arith::XOrIOp>(
                    l, isNan(b, l, best),
                    b.create<arith::ConstantOp>(l, b.getBoolAttr(true))));
            takes = b.create<arith::OrIOp>(l, isNan(b, l, v), beats);
          } else {
            bool isBool = element.isInteger(1);
            auto pred = max ? (isBool ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
                            : (isBool ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle);
            takes = b.create<arith::CmpIOp>(l, pred, v, best);
          }
          return SmallVector<Value>{
              b.create<arith::SelectOp>(l, takes, v, best),
              b.create<arith::SelectOp>(l, takes, k, running[1])};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LinearLogCumSumExpLowering : OpConversionPattern<LogCumSumExpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LogCumSumExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getSelf();
    int64_t dim = op.getDim();
    if (!scansByLoop(x, dim))
      return rewriter.notifyMatchFailure(op, "kiln-decompose-aten scans this");
    Location loc = op.getLoc();
    Type element = op.getType().getElementType();
    // Eager's CPU kernel accumulates f32 in double; f16 and bf16 in f32.
    Type compute = element.isF32() || element.isF64() ? rewriter.getF64Type()
                                                      : rewriter.getF32Type();
    Value start = scalarConstant(rewriter, loc, compute,
                                 -std::numeric_limits<double>::infinity());
    Value scanned = buildLinearScan(
        rewriter, loc, x, dim, start,
        [&](OpBuilder &b, Location l, Value, Value v, ValueRange running) {
          Value y = castScalar(b, l, v, compute), r = running[0];
          Value hi = b.create<arith::MaximumFOp>(l, r, y);
          Value lo = b.create<arith::MinimumFOp>(l, r, y);
          Value sum = b.create<arith::AddFOp>(
              l, hi,
              b.create<math::Log1pOp>(
                  l, b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, lo, hi))));
          // Both the same infinity: that infinity (inf - inf would be NaN).
          Value inf = b.create<arith::ConstantOp>(
              l, b.getFloatAttr(compute, std::numeric_limits<double>::infinity()));
          Value sameInfinity = b.create<arith::AndIOp>(
              l, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, lo, hi),
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                      b.create<math::AbsFOp>(l, lo), inf));
          return SmallVector<Value>{b.create<arith::SelectOp>(l, sameInfinity, y, sum)};
        })[0];
    rewriter.replaceOp(op, castTensor(rewriter, loc, scanned, element));
    return success();
  }
};

} // namespace

void kiln::aten::populateScanPatterns(RewritePatternSet &patterns) {
  patterns.add<LinearCumExtremumLowering<CummaxOp, true>,
               LinearCumExtremumLowering<CumminOp, false>,
               LinearLogCumSumExpLowering>(patterns.getContext());
}
