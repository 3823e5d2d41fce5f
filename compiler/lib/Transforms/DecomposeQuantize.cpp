//===- DecomposeQuantize.cpp - aten.quantize and aten.dequantize ----------===//
//
// This file implements the decompositions of aten.quantize and
// aten.dequantize into elementwise aten ops, in the arithmetic and element
// types of torch.ao's quantized_decomposed ops
// (torch/ao/quantization/fx/_decomposed.py), so that results match eager
// bit for bit:
//
//   quantize:   clamp(round(x * inv_scale) + zero_point, quant_min,
//               quant_max), converted to the integer type. Per tensor,
//               inv_scale = 1.0 / scale in f64 (a Python float) and the
//               arithmetic is f32 (f16 and bf16 inputs widen first); per
//               channel, inv_scale = 1.0 / scales in the scales' type and
//               the arithmetic is in the promoted type of f32 and the
//               scales.
//   dequantize: per tensor, (q.to(out) - zero_point) * scale, each step in
//               the output type (f16 and bf16 multiply in f32, then round
//               once); per channel, ((q - zero_points) * scales).to(out) in
//               PyTorch's promoted types.
//
// Rounding is half to even (torch.round). Per-channel parameters are viewed
// to broadcast along the op's axis.
//
//===----------------------------------------------------------------------===//
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenMatchers.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/PointwiseFns.h"

using namespace mlir;
namespace aten = kiln::aten;

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Builds the elementwise aten ops of one decomposition at one location.
class AtenBuilder {
public:
  AtenBuilder(PatternRewriter &rewriter, Location loc)
      : r(rewriter), loc(loc) {}

  /// A 0-d constant of `element`.
  Value constant(Type element, double value) {
    auto type = RankedTensorType::get({}, element);
    Attribute attr;
    if (auto floatType = dyn_cast<FloatType>(element))
      attr = r.getFloatAttr(floatType, value);
    else
      attr = r.getIntegerAttr(element, static_cast<int64_t>(value));
    return r.create<aten::ConstantOp>(loc, type,
                                      DenseElementsAttr::get(type, attr));
  }

  Value pointwise(RankedTensorType type, StringRef fn, ValueRange inputs,
                  ArrayRef<double> scalars = {}) {
    return r.create<aten::PointwiseOp>(loc, type, r.getStringAttr(fn), inputs,
                                       r.getDenseF64ArrayAttr(scalars));
  }

  /// `v` with element type `element` (itself when it has it).
  Value convert(Value v, Type element) {
    if (typeOf(v).getElementType() == element)
      return v;
    return pointwise(typeOf(v).clone(element), "copy", v);
  }

  /// `v` reshaped to `shape` (itself when it has it).
  Value view(Value v, ArrayRef<int64_t> shape) {
    if (typeOf(v).getShape() == shape)
      return v;
    return r.create<aten::ViewOp>(loc, typeOf(v).clone(shape), v);
  }

  /// a * b, a + b, a - b and a / b, broadcast, in `element`.
  Value mul(Type element, Value a, Value b) {
    return r.create<aten::MulOp>(loc, resultOf(element, a, b), a, b);
  }
  Value add(Type element, Value a, Value b) {
    return r.create<aten::AddOp>(loc, resultOf(element, a, b), a, b,
                                 r.getF64FloatAttr(1.0));
  }
  Value sub(Type element, Value a, Value b) {
    return r.create<aten::SubOp>(loc, resultOf(element, a, b), a, b,
                                 r.getF64FloatAttr(1.0));
  }
  Value div(Type element, Value a, Value b) {
    return r.create<aten::DivOp>(loc, resultOf(element, a, b), a, b);
  }

private:
  /// The shape `a` and `b` broadcast to, with `element`.
  static RankedTensorType resultOf(Type element, Value a, Value b) {
    ArrayRef<int64_t> sa = typeOf(a).getShape(), sb = typeOf(b).getShape();
    if (sa.size() < sb.size())
      std::swap(sa, sb);
    SmallVector<int64_t> shape(sa);
    size_t offset = sa.size() - sb.size();
    for (auto [i, extent] : llvm::enumerate(sb))
      shape[offset + i] = std::max(shape[offset + i], extent);
    return RankedTensorType::get(shape, element);
  }

  PatternRewriter &r;
  Location loc;
};

/// A per-channel parameter (one entry per slice along `axis`) viewed to
/// broadcast against a tensor of rank `rank`.
Value alongAxis(AtenBuilder &b, Value parameter, int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = typeOf(parameter).getDimSize(0);
  return b.view(parameter, shape);
}

struct DecomposeQuantizeOp : OpRewritePattern<aten::QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    Type f32 = rewriter.getF32Type();
    Type f64 = rewriter.getF64Type();
    Value x = b.convert(op.getInput(), f32);
    int64_t rank = typeOf(x).getRank();
    Value invScale, zeroPoint = op.getZeroPoint();
    Type compute = f32;
    if (IntegerAttr axis = op.getAxisAttr()) {
      Value scales = alongAxis(b, op.getScale(), axis.getInt(), rank);
      zeroPoint = alongAxis(b, zeroPoint, axis.getInt(), rank);
      Type scaleType = typeOf(scales).getElementType();
      invScale = b.div(scaleType, b.constant(scaleType, 1.0), scales);
      compute = aten::promotedElementType({typeOf(x), typeOf(invScale)});
    } else if (std::optional<double> scale =
                   aten::floatSplatValue(op.getScale())) {
      // 1.0 / scale in f64, then the f32 the arithmetic reads.
      invScale = b.constant(f32, 1.0 / *scale);
    } else {
      invScale = b.div(f64, b.constant(f64, 1.0), b.convert(op.getScale(), f64));
    }
    Value scaled = b.mul(compute, x, invScale);
    Value rounded = b.pointwise(typeOf(scaled), "round", scaled);
    Value shifted = b.add(compute, rounded, zeroPoint);
    Value clamped = b.pointwise(typeOf(shifted), "clamp", shifted,
                                {static_cast<double>(op.getQuantMinAttr().getInt()),
                                 static_cast<double>(op.getQuantMaxAttr().getInt())});
    rewriter.replaceOp(op, b.convert(clamped, typeOf(op).getElementType()));
    return success();
  }
};

struct DecomposeDequantizeOp : OpRewritePattern<aten::DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    Type out = typeOf(op).getElementType();
    Value q = op.getInput();
    Value result;
    if (IntegerAttr axis = op.getAxisAttr()) {
      int64_t rank = typeOf(q).getRank();
      Value scales = alongAxis(b, op.getScale(), axis.getInt(), rank);
      Value value = q;
      if (Value zeroPoint = op.getZeroPoint()) {
        Value zeroPoints = alongAxis(b, zeroPoint, axis.getInt(), rank);
        value = b.sub(aten::promotedElementType({typeOf(q), typeOf(zeroPoints)}),
                      q, zeroPoints);
      }
      result = b.mul(aten::promotedElementType({typeOf(value), typeOf(scales)}),
                     value, scales);
    } else {
      // .item() makes Python numbers: an integer zero point, a float scale.
      Value zeroPoint = b.convert(op.getZeroPoint(), rewriter.getI64Type());
      Value scale = b.convert(op.getScale(), rewriter.getF64Type());
      Value shifted = b.sub(out, b.convert(q, out), zeroPoint);
      // f16 and bf16 multiply by a Python float in f32 (ATen's opmath),
      // then round once.
      Type opmath = out.isF16() || out.isBF16() ? rewriter.getF32Type() : out;
      result = b.mul(opmath, shifted, scale);
    }
    rewriter.replaceOp(op, b.convert(result, out));
    return success();
  }
};

} // namespace

void kiln::populateQuantizeDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeQuantizeOp, DecomposeDequantizeOp>(
      patterns.getContext());
}
