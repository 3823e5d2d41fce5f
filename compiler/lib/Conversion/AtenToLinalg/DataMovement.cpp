//===- DataMovement.cpp - view, permute and expand to tensor/linalg -------===//
//
// This file implements the lowering of ATen's shape ops: views become
// collapse/expand_shape, permutes linalg.transpose, expands broadcasting
// linalg.generic copies, and flips and diagonals linalg.generic copies
// whose input map runs backwards or along the diagonal.
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

/// A copy of `input` into a fresh `type` whose input map is `inputMap`
/// (over the result's dims).
Value buildMappedCopy(OpBuilder &b, Location loc, RankedTensorType type,
                      Value input, AffineMap inputMap) {
  int64_t rank = type.getRank();
  Value init = b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps = {inputMap, b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return b
      .create<linalg::GenericOp>(
          loc, type, input, init, maps, iterators,
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            nb.create<linalg::YieldOp>(nloc, args[0]);
          })
      .getResult(0);
}

struct FlipLowering : OpConversionPattern<FlipOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FlipOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> reads;
    for (int64_t d = 0; d < type.getRank(); ++d)
      reads.push_back(getAffineDimExpr(d, ctx));
    // Element i of a flipped dim of extent n reads n - 1 - i.
    for (int64_t d : op.getDims())
      reads[d] = getAffineConstantExpr(type.getDimSize(d) - 1, ctx) -
                 getAffineDimExpr(d, ctx);
    rewriter.replaceOp(op, buildMappedCopy(rewriter, op.getLoc(), type,
                                           adaptor.getSelf(),
                                           AffineMap::get(type.getRank(), 0, reads, ctx)));
    return success();
  }
};

struct AsStridedLowering : OpConversionPattern<AsStridedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsStridedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    ArrayRef<int64_t> stride = op.getStride();
    int64_t offset = op.getStorageOffsetAttr().getInt();
    int64_t last = AsStridedOp::lastPosition(type.getShape(), stride, offset);
    if (type.getNumElements() == 0 || last < 0)
      return rewriter.notifyMatchFailure(op, "an empty or unbounded window");
    // Self's elements in row-major order, cut to the span the window reads
    // [offset, last]: with the span exactly as long as the reads reach, a
    // map that is one dim alone sizes that dim as the result does.
    auto in = cast<RankedTensorType>(adaptor.getSelf().getType());
    Value flat = buildReshape(rewriter, loc, adaptor.getSelf(),
                              in.clone(ArrayRef<int64_t>{in.getNumElements()}));
    int64_t span = last - offset + 1;
    auto spanType = in.clone(ArrayRef<int64_t>{span});
    Value window = rewriter.create<tensor::ExtractSliceOp>(
        loc, spanType, flat, ValueRange{}, ValueRange{}, ValueRange{},
        rewriter.getDenseI64ArrayAttr({offset}), rewriter.getDenseI64ArrayAttr({span}),
        rewriter.getDenseI64ArrayAttr({1}));
    if (type.getRank() == 0) {
      rewriter.replaceOp(op, buildReshape(rewriter, loc, window, type));
      return success();
    }
    // Result element i reads the span at sum(i_d * stride[d]).
    AffineExpr read = getAffineConstantExpr(0, ctx);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.getDimSize(d) > 1 && stride[d] != 0)
        read = read + getAffineDimExpr(d, ctx) * stride[d];
    rewriter.replaceOp(op, buildMappedCopy(rewriter, loc, type, window,
                                           AffineMap::get(type.getRank(), 0, read)));
    return success();
  }
};

struct DiagonalLowering : OpConversionPattern<DiagonalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DiagonalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    int64_t outRank = type.getRank(), inRank = outRank + 1;
    int64_t d1 = op.getDim1(), d2 = op.getDim2(), offset = op.getOffset();
    int64_t length = type.getDimSize(outRank - 1);
    // The square of self's dim1 x dim2 the diagonal crosses: from row
    // max(-offset, 0) and column max(offset, 0), `length` of each. (Read
    // through a map with dim1 at i + r0, linalg would size i by a dim of
    // self it also appears alone in, and refuse the rest.)
    auto in = cast<RankedTensorType>(adaptor.getSelf().getType());
    SmallVector<int64_t> offsets(inRank, 0), sizes(in.getShape()), strides(inRank, 1);
    offsets[d1] = length ? std::max<int64_t>(-offset, 0) : 0;
    offsets[d2] = length ? std::max<int64_t>(offset, 0) : 0;
    sizes[d1] = sizes[d2] = length;
    Value square = rewriter.create<tensor::ExtractSliceOp>(
        loc, in.clone(sizes), adaptor.getSelf(), ValueRange{}, ValueRange{},
        ValueRange{}, rewriter.getDenseI64ArrayAttr(offsets),
        rewriter.getDenseI64ArrayAttr(sizes), rewriter.getDenseI64ArrayAttr(strides));
    // The result's dims are self's others in order, then the diagonal's i,
    // which reads the square at (i, i).
    AffineExpr i = getAffineDimExpr(outRank - 1, ctx);
    SmallVector<AffineExpr> reads;
    int64_t next = 0;
    for (int64_t d = 0; d < inRank; ++d)
      reads.push_back(d == d1 || d == d2 ? i : getAffineDimExpr(next++, ctx));
    rewriter.replaceOp(op, buildMappedCopy(rewriter, loc, type, square,
                                           AffineMap::get(outRank, 0, reads, ctx)));
    return success();
  }
};

} // namespace

void kiln::aten::populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<ViewLowering, PermuteLowering, ExpandLowering, FlipLowering,
               DiagonalLowering, AsStridedLowering>(
      patterns.getContext());
}
