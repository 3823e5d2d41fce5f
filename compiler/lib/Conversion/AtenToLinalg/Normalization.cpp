//===- Normalization.cpp - native_layer_norm to linalg --------------------===//
//
// This file implements the lowering of aten.native_layer_norm: two-pass mean
// and variance over the trailing dims, then the affine transform, each pass
// reading x (no centred copy is made).
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

struct NativeLayerNormLowering : OpConversionPattern<NativeLayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NativeLayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto outType = cast<RankedTensorType>(x.getType());
    if (!isa<FloatType>(outType.getElementType()))
      return rewriter.notifyMatchFailure(op, "needs a floating-point input");
    // The computation is in f32 for f16/bf16 inputs (PyTorch's opmath
    // type), whatever type the statistics come back in: f32 where the
    // exporter says so, the input's own type on PyTorch's CPU kernel, which
    // rounds them only as it stores them (the output is normalised with
    // the f32 statistics).
    auto statType = cast<RankedTensorType>(op.getMean().getType());
    Type element = statType.getElementType();
    if (element.getIntOrFloatBitWidth() < 32)
      element = rewriter.getF32Type();
    x = castTensor(rewriter, loc, x, element);
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), k = op.getNormalizedRank();
    llvm::SmallBitVector reduced(rank);
    for (int64_t i = rank - k; i < rank; ++i)
      reduced.set(i);
    Value count = reducedCount(rewriter, loc, x, reduced, element);
    auto computedStatType = statType.clone(element);
    // Both sums reassociate (addToSum).
    auto divideByCount = [&](OpBuilder &b, Location l, Value v) -> Value {
      return b.create<arith::DivFOp>(l, v, count);
    };

    Value sum = buildReduction(rewriter, loc, x, reduced, element, 0.0, addToSum);
    Value mean = buildReshape(
        rewriter, loc,
        buildElementwise(rewriter, loc, cast<RankedTensorType>(sum.getType()),
                         sum,
                         [&](OpBuilder &b, Location l, ValueRange args) {
                           return divideByCount(b, l, args[0]);
                         }),
        computedStatType);
    // The squared deviations and the output read x and its row's mean
    // again instead of a centred copy of x: one write of x's size fewer,
    // and one read (group norm [8,64,28,28] went 1.5x eager's time with it).
    Value squares = buildReductionWithKept(
        rewriter, loc, x, mean, reduced, scalarConstant(rewriter, loc, element, 0.0),
        [](OpBuilder &b, Location l, Value acc, Value v, Value m) -> Value {
          Value d = b.create<arith::SubFOp>(l, v, m);
          return addToSum(b, l, acc, b.create<arith::MulFOp>(l, d, d));
        });
    double eps = op.getEps().convertToDouble();
    Value rstd = buildReshape(
        rewriter, loc,
        buildElementwise(
            rewriter, loc, cast<RankedTensorType>(squares.getType()), squares,
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              Value variance = divideByCount(b, l, args[0]);
              return b.create<math::RsqrtOp>(
                  l, b.create<arith::AddFOp>(
                         l, variance, scalarConstant(b, l, element, eps)));
            }),
        computedStatType);

    SmallVector<Value> operands = {x, mean, rstd};
    Value weight = adaptor.getWeight(), bias = adaptor.getBias();
    if (weight)
      operands.push_back(weight);
    if (bias)
      operands.push_back(bias);
    Value output = buildElementwise(
        rewriter, loc, outType, operands,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value y = b.create<arith::MulFOp>(
              l, b.create<arith::SubFOp>(l, args[0], args[1]), args[2]);
          size_t next = 3;
          if (weight)
            y = b.create<arith::MulFOp>(l, y, args[next++]);
          if (bias)
            y = b.create<arith::AddFOp>(l, y, args[next++]);
          return y;
        },
        element);
    rewriter.replaceOp(op, {output,
                            castTensor(rewriter, loc, mean, statType.getElementType()),
                            castTensor(rewriter, loc, rstd, statType.getElementType())});
    return success();
  }
};

} // namespace

void kiln::aten::populateNormalizationPatterns(RewritePatternSet &patterns) {
  patterns.add<NativeLayerNormLowering>(patterns.getContext());
}
