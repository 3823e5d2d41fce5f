//===- DataMovement.cpp - view, permute and expand to tensor/linalg -------===//
//
// This file implements the lowering of ATen's shape ops: views become
// collapse/expand_shape, permutes linalg.transpose, expands broadcasting
// linalg.generic copies.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

struct ViewLowering : OpConversionPattern<ViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, buildReshape(rewriter, op.getLoc(), adaptor.getSelf(), op.getType()));
    return success();
  }
};

struct PermuteLowering : OpConversionPattern<PermuteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                  type.getElementType());
    rewriter.replaceOpWithNewOp<linalg::TransposeOp>(op, adaptor.getSelf(),
                                                     init, op.getDims());
    return success();
  }
};

struct ExpandLowering : OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), op.getType(), adaptor.getSelf(),
                [](OpBuilder &, Location, ValueRange args) { return args[0]; }));
    return success();
  }
};

} // namespace

void kiln::aten::populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<ViewLowering, PermuteLowering, ExpandLowering>(
      patterns.getContext());
}
