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

/// A view's or expand's result sizes: static extents, and its size operands
/// for the dynamic ones. Empty for a static result.
SmallVector<OpFoldResult> resultSizes(OpBuilder &b, Operation *op,
                                      ValueRange dynamic) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.hasStaticShape())
    return {};
  SmallVector<OpFoldResult> sizes;
  auto next = dynamic.begin();
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(type.isDynamicDim(d) ? OpFoldResult(*next++)
                                         : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  return sizes;
}

struct ViewLowering : OpConversionPattern<ViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value reshaped = buildReshape(rewriter, op.getLoc(), adaptor.getSelf(),
                                  op.getType(), resultSizes(rewriter, op, adaptor.getSizes()));
    if (!reshaped)
      return rewriter.notifyMatchFailure(op, "no sizes for the dynamic result");
    rewriter.replaceOp(op, reshaped);
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
    SmallVector<OpFoldResult> inputSizes = sizesOf(rewriter, loc, adaptor.getSelf());
    SmallVector<OpFoldResult> sizes;
    for (int64_t dim : op.getDims())
      sizes.push_back(inputSizes[dim]);
    Value init = buildEmpty(rewriter, loc, type, sizes);
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
                [](OpBuilder &, Location, ValueRange args) { return args[0]; },
                {}, resultSizes(rewriter, op, adaptor.getSizes())));
    return success();
  }
};

} // namespace

void kiln::aten::populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<ViewLowering, PermuteLowering, ExpandLowering>(
      patterns.getContext());
}
