//===- Pointwise.cpp - aten.pointwise to linalg.generic -------------------===//
//
// This file implements the one pattern behind every aten.pointwise function:
// it picks the compute element type (result, promoted operands per PyTorch's
// rules, or i1), checks the function's domain, and builds a broadcasting
// linalg.generic around the body from the pointwise table. f16/bf16 compute
// in f32 and round once at the end.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PointwiseTable.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/PointwiseFns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

/// PyTorch's broadcast (right-aligned) of `shapes`.
SmallVector<int64_t> broadcastShape(ArrayRef<RankedTensorType> types) {
  size_t rank = 0;
  for (RankedTensorType type : types)
    rank = std::max<size_t>(rank, type.getRank());
  SmallVector<int64_t> shape(rank, 1);
  for (RankedTensorType type : types)
    for (auto [i, extent] : llvm::enumerate(llvm::reverse(type.getShape())))
      if (extent != 1)
        shape[rank - 1 - i] = extent;
  return shape;
}

/// "batch_norm" (x, mean, var, weight, bias; eps) as PyTorch's CPU kernel
/// computes it: the per-channel alpha = weight / sqrt(var + eps) and
/// beta = bias - mean * alpha first, over the statistics' shape (C values,
/// not one square root per element), then x * alpha + beta.
Value lowerBatchNorm(OpBuilder &b, Location loc, ValueRange inputs,
                     RankedTensorType resultType, Type compute, double eps) {
  SmallVector<RankedTensorType> statTypes;
  for (Value stat : inputs.drop_front())
    statTypes.push_back(cast<RankedTensorType>(stat.getType()));
  auto statType = RankedTensorType::get(broadcastShape(statTypes), compute);
  Value alpha = buildElementwise(
      b, loc, statType, {inputs[2], inputs[3]},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value shifted = nb.create<arith::AddFOp>(
            l, args[0], scalarConstant(nb, l, compute, eps));
        return nb.create<arith::DivFOp>(l, args[1],
                                        nb.create<math::SqrtOp>(l, shifted));
      },
      compute);
  Value beta = buildElementwise(
      b, loc, statType, {inputs[1], inputs[4], alpha},
      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return nb.create<arith::SubFOp>(
            l, args[1], nb.create<arith::MulFOp>(l, args[0], args[2]));
      },
      compute);
  return buildElementwise(
      b, loc, resultType, {inputs[0], alpha, beta},
      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return nb.create<arith::AddFOp>(
            l, nb.create<arith::MulFOp>(l, args[0], args[1]), args[2]);
      },
      compute);
}

struct PointwiseOpLowering : OpConversionPattern<PointwiseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PointwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const PointwiseLowering *row = lookupPointwiseLowering(op.getFn());
    const PointwiseFn *fn = lookupPointwiseFn(op.getFn());
    if (!row || !fn)
      return rewriter.notifyMatchFailure(op, "no lowering for this function");
    RankedTensorType resultType = op.getType();
    Type resultElement = resultType.getElementType();
    Type i1 = rewriter.getI1Type();
    Type compute = pointwiseComputeType(*fn, adaptor.getInputs().getTypes(),
                                        resultElement);
    if (!compute)
      return rewriter.notifyMatchFailure(
          op, "function not defined for this element type");
    if ((compute.isF16() || compute.isBF16()) && !row->halfInOwnType)
      compute = rewriter.getF32Type();
    SmallVector<Type> operandTypes(adaptor.getInputs().size(), compute);
    if (fn->computeIn == ComputeIn::Where)
      operandTypes[0] = i1;

    Location loc = op.getLoc();
    if (op.getFn() == "batch_norm" && isa<FloatType>(compute) &&
        adaptor.getInputs().size() == 5 && op.getScalars().size() == 1) {
      rewriter.replaceOp(op, lowerBatchNorm(rewriter, loc, adaptor.getInputs(),
                                            resultType, compute,
                                            op.getScalars()[0]));
      return success();
    }
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (Value operand : adaptor.getInputs())
      maps.push_back(broadcastMap(
          ctx, cast<RankedTensorType>(operand.getType()).getShape(),
          resultType.getShape()));
    maps.push_back(rewriter.getMultiDimIdentityMap(resultType.getRank()));
    SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                               utils::IteratorType::parallel);
    Value init = buildEmpty(rewriter, loc, resultType,
                            sizesFrom(rewriter, loc, resultType, adaptor.getInputs()));
    ArrayRef<double> scalars = op.getScalars();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, resultType, adaptor.getInputs(), init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> converted;
          for (auto [arg, type] : llvm::zip(args.drop_back(), operandTypes))
            converted.push_back(castScalar(b, l, arg, type));
          Value result = row->body(b, l, converted, scalars);
          b.create<linalg::YieldOp>(l, castScalar(b, l, result, resultElement));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void kiln::aten::populatePointwisePatterns(RewritePatternSet &patterns) {
  patterns.add<PointwiseOpLowering>(patterns.getContext());
}
