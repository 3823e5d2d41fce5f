//===- Reduction.cpp - ATen reductions and softmax to linalg --------------===//
//
// This file implements the lowering of sum, mean and _softmax to reducing
// linalg.generic ops. Softmax is computed stably (subtracting the maximum).
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"
#include "SoftmaxRows.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// sum and mean: reduce in the result element type (f32 for f16/bf16, rounded
/// once at the end, as eager does: 2304 f16 values near 40 overflow f16's
/// range), float sums reassociating (addToSum); divide for mean, then
/// reshape to keep the reduced dims as extent 1 when keepdim is set.
template <typename AtenOp, bool isMean>
struct SumMeanLowering : OpConversionPattern<AtenOp> {
  using OpConversionPattern<AtenOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AtenOp>::OpAdaptor;
  LogicalResult
  matchAndRewrite(AtenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(adaptor.getSelf().getType());
    RankedTensorType resultType = op.getType();
    Type element = resultType.getElementType();
    if (element.isInteger(1))
      return rewriter.notifyMatchFailure(op, "boolean accumulation");
    llvm::SmallBitVector reduced =
        reducedDims(inputType.getRank(), op.getDims());
    Type acc = accumulatorType(rewriter, element);
    Value result = buildReduction(rewriter, loc, adaptor.getSelf(), reduced,
                                  acc, 0.0, addToSum);
    if (isMean) {
      Value count = reducedCount(rewriter, loc, adaptor.getSelf(), reduced, acc);
      auto reducedType = cast<RankedTensorType>(result.getType());
      result = buildElementwise(
          rewriter, loc, reducedType, result,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return b.create<arith::DivFOp>(l, args[0], count);
          });
    }
    result = castTensor(rewriter, loc, result, element);
    Value reshaped = buildReshape(rewriter, loc, result, resultType);
    if (!reshaped)
      return rewriter.notifyMatchFailure(op, "no sizes for the dynamic result");
    rewriter.replaceOp(op, reshaped);
    return success();
  }
};

/// softmax, and log_softmax (isLog): both subtract the maximum first.
template <typename AtenOp, bool isLog>
struct SoftmaxLowering : OpConversionPattern<AtenOp> {
  using OpConversionPattern<AtenOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AtenOp>::OpAdaptor;
  LogicalResult
  matchAndRewrite(AtenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    if (type.getRank() == 0) {
      rewriter.replaceOp(op, buildFilled(rewriter, loc, type, isLog ? 0.0 : 1.0));
      return success();
    }
    bool zeroMaskedRows = false;
    if constexpr (!isLog)
      zeroMaskedRows = op.getZeroMaskedRows();
    Value x = adaptor.getSelf();
    if (op.getDim() == type.getRank() - 1)
      if (Value rows =
              buildRowTiledSoftmax(rewriter, loc, x, isLog, zeroMaskedRows)) {
        rewriter.replaceOp(op, rows);
        return success();
      }
    llvm::SmallBitVector reduced(type.getRank());
    reduced.set(op.getDim());
    // max over dim (NaN propagates through maximumf).
    Value max = buildReduction(
        rewriter, loc, x, reduced, element,
        -std::numeric_limits<double>::infinity(),
        [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
          return combineElements(Combiner::Max, b, l, acc, v);
        });
    // Keep the reduced dim as extent 1 so it broadcasts back.
    SmallVector<int64_t> keptShape(type.getShape());
    keptShape[op.getDim()] = 1;
    auto keptType = RankedTensorType::get(keptShape, element);
    Value maxKept = buildReshape(rewriter, loc, max, keptType);
    if (!maxKept)
      return rewriter.notifyMatchFailure(op, "no sizes for the kept dimension");
    if (isLog) {
      Value centered = buildElementwise(
          rewriter, loc, type, {x, maxKept},
          [](OpBuilder &b, Location l, ValueRange args) -> Value {
            return b.create<arith::SubFOp>(l, args[0], args[1]);
          });
      Value sumExp = buildReduction(
          rewriter, loc, centered, reduced, element, 0.0,
          [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
            return addToSum(b, l, acc, b.create<math::ExpOp>(l, v));
          });
      Value sumKept = buildReshape(rewriter, loc, sumExp, keptType);
      rewriter.replaceOp(
          op, buildElementwise(
                  rewriter, loc, type, {centered, sumKept},
                  [](OpBuilder &b, Location l, ValueRange args) -> Value {
                    return b.create<arith::SubFOp>(
                        l, args[0], b.create<math::LogOp>(l, args[1]));
                  }));
      return success();
    }
    Value shifted = buildElementwise(
        rewriter, loc, type, {x, maxKept},
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return b.create<math::ExpOp>(
              l, b.create<arith::SubFOp>(l, args[0], args[1]));
        });
    Value sum = buildReduction(rewriter, loc, shifted, reduced, element, 0.0, addToSum);
    Value sumKept = buildReshape(rewriter, loc, sum, keptType);
    // _safe_softmax: a row of -inf only (its maximum -inf; a NaN anywhere
    // makes the maximum NaN) gives zeros.
    SmallVector<Value> operands = {shifted, sumKept};
    if (zeroMaskedRows)
      operands.push_back(maxKept);
    Value result = buildElementwise(
        rewriter, loc, type, operands,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value quotient = b.create<arith::DivFOp>(l, args[0], args[1]);
          return zeroMaskedRows ? zeroWhereRowMasked(b, l, args[2], quotient)
                                : quotient;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::aten::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<SumMeanLowering<SumOp, false>, SumMeanLowering<MeanOp, true>,
               SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>>(patterns.getContext());
}
