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

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

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
    if (compute.isF16() || compute.isBF16())
      compute = rewriter.getF32Type();
    SmallVector<Type> operandTypes(adaptor.getInputs().size(), compute);
    if (fn->computeIn == ComputeIn::Where)
      operandTypes[0] = i1;

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (Value operand : adaptor.getInputs())
      maps.push_back(broadcastMap(
          ctx, cast<RankedTensorType>(operand.getType()).getShape(),
          resultType.getShape()));
    maps.push_back(rewriter.getMultiDimIdentityMap(resultType.getRank()));
    SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                               utils::IteratorType::parallel);
    Value init = rewriter.create<tensor::EmptyOp>(loc, resultType.getShape(),
                                                  resultElement);
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
