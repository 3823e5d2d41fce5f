//===- Elementwise.cpp - elementwise ATen ops to linalg.generic -----------===//
//
// This file implements the lowering of constants and elementwise ATen ops to
// broadcasting linalg.generic ops with arith/math bodies.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace kiln::aten;

namespace {

bool isFloat(Type type) { return isa<FloatType>(type); }

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value)
      return rewriter.notifyMatchFailure(op, "value is not a typed attribute");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// add/sub: lhs (+|-) alpha * rhs in the result element type.
template <typename AtenOp, typename FloatOp, typename IntOp>
struct AddSubLowering : OpConversionPattern<AtenOp> {
  using OpConversionPattern<AtenOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AtenOp>::OpAdaptor;
  LogicalResult
  matchAndRewrite(AtenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = op.getType();
    Type element = type.getElementType();
    constexpr bool isAdd = std::is_same_v<AtenOp, AddOp>;
    if (element.isInteger(1) && !isAdd)
      return rewriter.notifyMatchFailure(op, "boolean add/sub is not defined");
    if (element.isInteger(1)) {
      // PyTorch: True + True is True; alpha False leaves lhs alone.
      bool addsRhs = op.getAlpha().convertToDouble() != 0.0;
      rewriter.replaceOp(
          op, buildElementwise(
                  rewriter, op.getLoc(), type, {adaptor.getLhs(), adaptor.getRhs()},
                  [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                    return addsRhs ? b.create<arith::OrIOp>(loc, args[0], args[1]).getResult()
                                   : args[0];
                  }));
      return success();
    }
    double alpha = op.getAlpha().convertToDouble();
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, {adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value rhs = args[1];
          if (alpha != 1.0) {
            Value scale = scalarConstant(b, loc, element, alpha);
            rhs = isFloat(element) ? b.create<arith::MulFOp>(loc, rhs, scale)
                                         .getResult()
                                   : b.create<arith::MulIOp>(loc, rhs, scale)
                                         .getResult();
          }
          if (isFloat(element))
            return b.create<FloatOp>(loc, args[0], rhs);
          return b.create<IntOp>(loc, args[0], rhs);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Binary ops without alpha: a broadcasting generic with a scalar body over
/// operands converted to the result element type.
template <typename AtenOp>
struct BinaryLowering : OpConversionPattern<AtenOp> {
  using OpConversionPattern<AtenOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AtenOp>::OpAdaptor;
  using Body = Value (*)(OpBuilder &, Location, Value, Value);
  BinaryLowering(MLIRContext *ctx, Body body)
      : OpConversionPattern<AtenOp>(ctx), body(body) {}

  LogicalResult
  matchAndRewrite(AtenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), {adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return body(b, loc, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  Body body;
};

Value mulBody(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType()))
    return b.create<arith::MulFOp>(loc, lhs, rhs);
  if (lhs.getType().isInteger(1))
    return b.create<arith::AndIOp>(loc, lhs, rhs);
  return b.create<arith::MulIOp>(loc, lhs, rhs);
}

Value divBody(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return b.create<arith::DivFOp>(loc, lhs, rhs);
}

/// Unary ops share one shape: a generic over the operand with a scalar body.
template <typename AtenOp>
struct UnaryLowering : OpConversionPattern<AtenOp> {
  using OpConversionPattern<AtenOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AtenOp>::OpAdaptor;
  using Body = Value (*)(AtenOp, OpBuilder &, Location, Value);
  UnaryLowering(MLIRContext *ctx, Body body, bool needsFloat)
      : OpConversionPattern<AtenOp>(ctx), body(body), needsFloat(needsFloat) {}

  LogicalResult
  matchAndRewrite(AtenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (needsFloat && !isFloat(op.getType().getElementType()))
      return rewriter.notifyMatchFailure(op, "needs a floating-point tensor");
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), {adaptor.getSelf()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return body(op, b, loc, args[0]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  Body body;
  bool needsFloat;
};

Value negBody(NegOp, OpBuilder &b, Location loc, Value x) {
  if (isFloat(x.getType()))
    return b.create<arith::NegFOp>(loc, x);
  Value zero = scalarConstant(b, loc, x.getType(), 0);
  return b.create<arith::SubIOp>(loc, zero, x);
}

Value reluBody(ReluOp, OpBuilder &b, Location loc, Value x) {
  Value zero = scalarConstant(b, loc, x.getType(), 0);
  if (isFloat(x.getType())) {
    // Propagate NaN as torch.relu does: x > 0 ? x : (x is NaN ? x : 0).
    Value positive =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UGT, x, zero);
    return b.create<arith::SelectOp>(loc, positive, x, zero);
  }
  return b.create<arith::MaxSIOp>(loc, x, zero);
}

Value tanhBody(TanhOp, OpBuilder &b, Location loc, Value x) {
  return b.create<math::TanhOp>(loc, x);
}

Value expBody(ExpOp, OpBuilder &b, Location loc, Value x) {
  return b.create<math::ExpOp>(loc, x);
}

Value sigmoidBody(SigmoidOp, OpBuilder &b, Location loc, Value x) {
  Value one = scalarConstant(b, loc, x.getType(), 1.0);
  Value expNeg = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  return b.create<arith::DivFOp>(loc, one,
                                 b.create<arith::AddFOp>(loc, one, expNeg));
}

Value geluBody(GeluOp op, OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value half = scalarConstant(b, loc, type, 0.5);
  Value one = scalarConstant(b, loc, type, 1.0);
  Value inner;
  if (op.getApproximate() == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value cube = b.create<arith::MulFOp>(
        loc, x, b.create<arith::MulFOp>(loc, x, x));
    Value poly = b.create<arith::AddFOp>(
        loc, x,
        b.create<arith::MulFOp>(loc, scalarConstant(b, loc, type, 0.044715),
                                cube));
    Value scaled = b.create<arith::MulFOp>(
        loc, scalarConstant(b, loc, type, std::sqrt(2.0 / M_PI)), poly);
    inner = b.create<math::TanhOp>(loc, scaled);
  } else {
    // 0.5 x (1 + erf(x / sqrt(2)))
    Value scaled = b.create<arith::MulFOp>(
        loc, x, scalarConstant(b, loc, type, M_SQRT1_2));
    inner = b.create<math::ErfOp>(loc, scaled);
  }
  Value factor = b.create<arith::AddFOp>(loc, one, inner);
  return b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, half, x),
                                 factor);
}

/// bitcast: one arith.bitcast per element.
struct BitcastLowering : OpConversionPattern<BitcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BitcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    Value self = adaptor.getSelf();
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), type, self,
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  return b.create<arith::BitcastOp>(l, element, args[0]);
                },
                cast<RankedTensorType>(self.getType()).getElementType()));
    return success();
  }
};

} // namespace

void kiln::aten::populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConstantLowering, BitcastLowering,
               AddSubLowering<AddOp, arith::AddFOp, arith::AddIOp>,
               AddSubLowering<SubOp, arith::SubFOp, arith::SubIOp>>(ctx);
  patterns.add<BinaryLowering<MulOp>>(ctx, mulBody);
  patterns.add<BinaryLowering<DivOp>>(ctx, divBody);
  patterns.add<UnaryLowering<NegOp>>(ctx, negBody, false);
  patterns.add<UnaryLowering<ReluOp>>(ctx, reluBody, false);
  patterns.add<UnaryLowering<TanhOp>>(ctx, tanhBody, true);
  patterns.add<UnaryLowering<ExpOp>>(ctx, expBody, true);
  patterns.add<UnaryLowering<SigmoidOp>>(ctx, sigmoidBody, true);
  patterns.add<UnaryLowering<GeluOp>>(ctx, geluBody, true);
}
