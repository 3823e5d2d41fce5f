//===- Linear.cpp - ATen matrix products to linalg named ops --------------===//
//
// This file implements the lowering of mm, addmm and bmm to linalg.matmul and
// linalg.batch_matmul, which the CPU pipeline then tiles and vectorizes.
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

/// mm and bmm: the named linalg op over a zero-filled accumulator.
template <typename AtenOp, typename LinalgOp>
struct ProductLowering : OpConversionPattern<AtenOp> {
  using OpConversionPattern<AtenOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AtenOp>::OpAdaptor;
  LogicalResult
  matchAndRewrite(AtenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    Type acc = accumulatorType(rewriter, element);
    Value lhs = castTensor(rewriter, loc, adaptor.getSelf(), acc);
    Value rhs = castTensor(rewriter, loc, adaptor.getMat2(), acc);
    // Result sizes: the batch and rows of self, the columns of mat2.
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank - 1; ++d)
      sizes.push_back(tensor::getMixedSize(rewriter, loc, lhs, d));
    sizes.push_back(tensor::getMixedSize(rewriter, loc, rhs, rank - 1));
    Value init = buildFilled(rewriter, loc, type.clone(acc), 0.0, sizes);
    Value product =
        rewriter.create<LinalgOp>(loc, ValueRange{lhs, rhs}, init).getResult(0);
    rewriter.replaceOp(op, castTensor(rewriter, loc, product, element));
    return success();
  }
};

struct AddmmLowering : OpConversionPattern<AddmmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AddmmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type outElement = type.getElementType();
    Type element = accumulatorType(rewriter, outElement);
    type = type.clone(element);
    double beta = op.getBeta().convertToDouble();
    double alpha = op.getAlpha().convertToDouble();
    Value lhs = castTensor(rewriter, loc, adaptor.getMat1(), element);
    Value rhs = castTensor(rewriter, loc, adaptor.getMat2(), element);
    bool isFloatType = isa<FloatType>(element);
    auto scaled = [&](OpBuilder &b, Location l, Value x, double factor) {
      if (factor == 1.0)
        return x;
      Value c = scalarConstant(b, l, element, factor);
      return isFloatType ? b.create<arith::MulFOp>(l, x, c).getResult()
                         : b.create<arith::MulIOp>(l, x, c).getResult();
    };
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(rewriter, loc, lhs, 0),
                                       tensor::getMixedSize(rewriter, loc, rhs, 1)};
    if (alpha == 1.0) {
      // Accumulate the product straight into beta * broadcast(self).
      Value init = buildElementwise(
          rewriter, loc, type, adaptor.getSelf(),
          [&](OpBuilder &b, Location l, ValueRange args) {
            return scaled(b, l, args[0], beta);
          },
          {}, sizes);
      Value product = rewriter.create<linalg::MatmulOp>(loc, ValueRange{lhs, rhs},
                                                        init).getResult(0);
      rewriter.replaceOp(op, castTensor(rewriter, loc, product, outElement));
      return success();
    }
    Value product = rewriter
                        .create<linalg::MatmulOp>(
                            loc, ValueRange{lhs, rhs},
                            buildFilled(rewriter, loc, type, 0.0, sizes))
                        .getResult(0);
    Value result = buildElementwise(
        rewriter, loc, type, {adaptor.getSelf(), product},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value s = scaled(b, l, args[0], beta);
          Value p = scaled(b, l, args[1], alpha);
          return isFloatType ? b.create<arith::AddFOp>(l, s, p).getResult()
                             : b.create<arith::AddIOp>(l, s, p).getResult();
        });
    rewriter.replaceOp(op, castTensor(rewriter, loc, result, outElement));
    return success();
  }
};

} // namespace

void kiln::aten::populateLinearPatterns(RewritePatternSet &patterns) {
  patterns.add<ProductLowering<MmOp, linalg::MatmulOp>,
               ProductLowering<BmmOp, linalg::BatchMatmulOp>, AddmmLowering>(
      patterns.getContext());
}
