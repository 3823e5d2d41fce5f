//===- DecomposeQuantize.cpp - the quantization ops in elementwise ops ----===//
//
// This file implements the decompositions of aten.quantize,
// aten.dequantize and aten.fake_quantize into elementwise aten ops, in the
// arithmetic and element types of torch.ao's quantized_decomposed ops
// (torch/ao/quantization/fx/_decomposed.py) and of ATen's fake-quantize
// kernels, so that results match eager bit for bit:
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
//   fake_quantize: see DecomposeFakeQuantizeOp and the op's description.
//
// Rounding is half to even (torch.round, nearbyint). Per-channel parameters
// are viewed to broadcast along the op's axis. A NaN converted to an
// integer type is undefined in eager's C++; here it is whatever the
// target's conversion gives.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenMatchers.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/PointwiseFns.h"

using namespace mlir;
namespace aten = kiln::aten;

using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

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
    } else {
      if (std::optional<double> scale = aten::floatSplatValue(op.getScale()))
        // 1.0 / scale in f64, then the f32 the arithmetic reads.
        invScale = b.constant(f32, 1.0 / *scale);
      else
        invScale = b.div(f64, b.constant(f64, 1.0), b.convert(op.getScale(), f64));
      // A constant zero point as the f32 the addition reads (a float
      // constant keeps the add and clamp in one elementwise chain on acap).
      if (std::optional<int64_t> zp = aten::integerSplatValue(zeroPoint))
        zeroPoint = b.constant(f32, static_cast<double>(*zp));
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

/// The clamped quantized value (i64, NaN as quant_min, as fmax gives it)
/// and the mask quant_min <= qval <= quant_max of the fake quantizers'
/// `qval` (in a float type).
std::pair<Value, Value> clampQuantized(AtenBuilder &b, Value qval, int64_t lo,
                                       int64_t hi) {
  RankedTensorType type = typeOf(qval);
  Type element = type.getElementType();
  auto boolType = type.clone(IntegerType::get(type.getContext(), 1));
  Value low = b.constant(element, static_cast<double>(lo));
  Value high = b.constant(element, static_cast<double>(hi));
  Value clamped = b.pointwise(
      type, "clamp", qval, {static_cast<double>(lo), static_cast<double>(hi)});
  clamped = b.pointwise(type, "where",
                        {b.pointwise(boolType, "isnan", qval), low, clamped});
  Value mask = b.pointwise(boolType, "logical_and",
                           {b.pointwise(boolType, "ge", {qval, low}),
                            b.pointwise(boolType, "le", {qval, high})});
  return {b.convert(clamped, IntegerType::get(type.getContext(), 64)), mask};
}

/// aten.fake_quantize as ATen's CPU kernels compute it
/// (aten/src/ATen/native/quantized/FakeQuantPerTensorAffine.cpp and
/// FakeQuantPerChannelAffine.cpp): inv_scale = 1.0f / scale in f32, x *
/// inv_scale in f64 for f64 inputs (else f32).
struct DecomposeFakeQuantizeOp : OpRewritePattern<aten::FakeQuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::FakeQuantizeOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    Type f32 = rewriter.getF32Type();
    Type f64 = rewriter.getF64Type();
    Type i64 = rewriter.getI64Type();
    Value self = op.getInput();
    RankedTensorType type = typeOf(self);
    int64_t lo = op.getQuantMinAttr().getInt(), hi = op.getQuantMaxAttr().getInt();
    Type compute = type.getElementType().isF64() ? f64 : f32;
    Value scale = op.getScale(), zeroPoint = op.getZeroPoint();
    IntegerAttr axis = op.getAxisAttr();
    if (axis) {
      scale = alongAxis(b, scale, axis.getInt(), type.getRank());
      zeroPoint = alongAxis(b, zeroPoint, axis.getInt(), type.getRank());
    }
    // The kernels read the scale as float: float inv_scale = 1.0f / scale.
    scale = b.convert(scale, f32);
    Value invScale = b.div(f32, b.constant(f32, 1.0), scale);
    Value scaled = b.mul(compute, self, invScale);
    Value output, mask;
    if (!axis) {
      // zero_point as int64; (qval - zero_point) * scale in f32.
      zeroPoint = b.convert(zeroPoint, i64);
      Value qval = b.add(compute, b.pointwise(typeOf(scaled), "round", scaled),
                         zeroPoint);
      Value clamped;
      std::tie(clamped, mask) = clampQuantized(b, qval, lo, hi);
      output = b.convert(b.mul(f32, b.sub(i64, clamped, zeroPoint), scale),
                         type.getElementType());
    } else {
      // An integer zero point (read as int32) adds after rounding; a float
      // one (the learnable quantizers') before, rounding in f32 as lrintf.
      Value qval;
      if (isa<FloatType>(typeOf(zeroPoint).getElementType())) {
        Value sum = b.convert(b.add(compute, scaled, zeroPoint), f32);
        qval = b.pointwise(typeOf(sum), "round", sum);
      } else {
        zeroPoint = b.convert(zeroPoint, rewriter.getI32Type());
        qval = b.add(compute, b.pointwise(typeOf(scaled), "round", scaled),
                     zeroPoint);
      }
      Value clamped;
      std::tie(clamped, mask) = clampQuantized(b, qval, lo, hi);
      // (clamped - zero_point) * scale in double, stored in self's type.
      output = b.convert(b.mul(f64, b.sub(f64, clamped, zeroPoint), scale),
                         type.getElementType());
    }
    if (Value enabled = op.getEnabled()) {
      // fake_quant_enabled.item().toInt() == 0 passes self through with
      // the mask set.
      Value on = b.pointwise(typeOf(enabled).clone(rewriter.getI1Type()), "ne",
                             {b.convert(enabled, i64), b.constant(i64, 0.0)});
      output = b.pointwise(type, "where", {on, output, self});
      mask = b.pointwise(typeOf(mask), "logical_or",
                         {b.pointwise(typeOf(on), "logical_not", on), mask});
    }
    rewriter.replaceOp(op, {output, mask});
    return success();
  }
};

} // namespace

void kiln::populateQuantizeDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeQuantizeOp, DecomposeDequantizeOp,
               DecomposeFakeQuantizeOp>(patterns.getContext());
}
