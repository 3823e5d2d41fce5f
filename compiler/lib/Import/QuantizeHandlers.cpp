//===- QuantizeHandlers.cpp - affine quantization ops ---------------------===//
//
// This file implements the importer handlers of PyTorch's affine
// quantization ops:
//
//  - quantized_decomposed.{quantize,dequantize}_per_tensor (scalar and
//    `.tensor` parameters) and _per_channel, what PT2E quantization leaves
//    in an exported graph (torch/ao/quantization/fx/_decomposed.py), each
//    imported as one aten.quantize or aten.dequantize;
//    kiln-decompose-aten computes them in eager's arithmetic
//    (DecomposeQuantize.cpp), so that results match eager bit for bit.
//  - aten.fake_quantize_per_tensor_affine(_cachemask), its tensor-qparams
//    form that QAT's FakeQuantize module calls, and
//    aten.fake_quantize_per_channel_affine(_cachemask), as ATen's CPU kernels
//    compute them: inv_scale = 1.0f / scale in f32, the quantized value
//    zero_point + nearbyint(x * inv_scale) clamped to [quant_min, quant_max]
//    (NaN gives quant_min, as fmax does), the output (qval - zero_point) *
//    scale, and the mask quant_min <= qval <= quant_max.
//
//    These are decomposed here, in the arithmetic and element types of
//    their eager kernels.
//
// Rounding is half to even throughout (torch.round and nearbyint). A NaN
// converted to an integer dtype is undefined in eager's C++; here it is
// whatever the target's conversion gives.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/PointwiseFns.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// `type`'s shape with element `element`.
RankedTensorType withElement(Value v, Type element) {
  return typeOf(v).clone(element);
}


Value mul(NodeImporter &n, Type element, Value a, Value b) {
  return n.b().create<aten::MulOp>(n.loc(), withElement(a, element), a, b);
}

Value add(NodeImporter &n, Type element, Value a, Value b) {
  return n.b().create<aten::AddOp>(n.loc(), withElement(a, element), a, b,
                                   n.b().getF64FloatAttr(1.0));
}

Value sub(NodeImporter &n, Type element, Value a, Value b) {
  return n.b().create<aten::SubOp>(n.loc(), withElement(a, element), a, b,
                                   n.b().getF64FloatAttr(1.0));
}

/// A one-element tensor parameter (`.tensor` overloads) as a 0-d value.
absl::StatusOr<Value> oneElement(NodeImporter &n, const std::string &name) {
  ASSIGN_OR_RETURN(Value v, n.tensor(name));
  if (typeOf(v).getNumElements() != 1)
    return n.error(absl::StrCat("'", name, "' must have one element, not ",
                                typeOf(v).getNumElements()));
  return viewValue(n, v, {});
}

/// The bounds of the quantized range, checked against each other.
absl::StatusOr<std::pair<int64_t, int64_t>> quantRange(NodeImporter &n) {
  ASSIGN_OR_RETURN(int64_t lo, n.intAttr("quant_min"));
  ASSIGN_OR_RETURN(int64_t hi, n.intAttr("quant_max"));
  if (lo > hi)
    return n.error(absl::StrCat("quant_min ", lo, " is above quant_max ", hi));
  return std::make_pair(lo, hi);
}

/// A per-channel parameter (1-d, one entry per slice of `axis` of a rank
/// `rank` input of `extent` slices) viewed to broadcast along that axis.
absl::StatusOr<Value> channelParameter(NodeImporter &n, Value v,
                                       const std::string &name, int64_t axis,
                                       int64_t rank, int64_t extent) {
  RankedTensorType type = typeOf(v);
  if (type.getRank() != 1 || type.getDimSize(0) != extent)
    return n.error(absl::StrCat("'", name, "' must be 1-d with ", extent,
                                " entries (the input's dim ", axis, ")"));
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = extent;
  return viewValue(n, v, shape);
}

/// The input's `axis`, normalised; error when the input has no such dim.
absl::StatusOr<int64_t> channelAxis(NodeImporter &n, Value self) {
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("axis"));
  int64_t rank = typeOf(self).getRank();
  if (rank == 0)
    return n.error("a per-channel op needs an input with at least one dim");
  return n.normalizeDim(raw, rank);
}

/// A per-channel parameter checked to be 1-d with one entry per slice of
/// `axis` of `self`.
absl::StatusOr<Value> channelVector(NodeImporter &n, Value v,
                                    const std::string &name, Value self,
                                    int64_t axis) {
  int64_t extent = typeOf(self).getDimSize(axis);
  RankedTensorType type = typeOf(v);
  if (type.getRank() != 1 || type.getDimSize(0) != extent)
    return n.error(absl::StrCat("'", name, "' must be 1-d with ", extent,
                                " entries (the input's dim ", axis, ")"));
  return v;
}

/// The scale and zero point of a per-tensor op: 0-d tensors, from the
/// scalar arguments (f64 and i64, as Python numbers) or from the one-element
/// tensors of the `.tensor` overloads.
absl::StatusOr<std::pair<Value, Value>> tensorParameters(NodeImporter &n,
                                                         bool tensorParams) {
  if (tensorParams) {
    ASSIGN_OR_RETURN(Value scale, oneElement(n, "scale"));
    ASSIGN_OR_RETURN(Value zeroPoint, oneElement(n, "zero_point"));
    if (!isa<FloatType>(typeOf(scale).getElementType()))
      return n.error("scale must be floating point");
    return std::make_pair(scale, zeroPoint);
  }
  ASSIGN_OR_RETURN(double scale, n.floatAttr("scale"));
  ASSIGN_OR_RETURN(int64_t zp, n.intAttr("zero_point"));
  return std::make_pair(
      n.constant(n.b().getF64Type(), scale),
      n.constant(n.b().getI64Type(), static_cast<double>(zp)));
}

/// quantized_decomposed.quantize_per_tensor{,.tensor} and
/// quantize_per_channel: one aten.quantize (kiln-decompose-aten computes it).
absl::StatusOr<Values> quantizeOp(NodeImporter &n, bool perChannel,
                                  bool tensorParams) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("input"));
  ASSIGN_OR_RETURN(auto range, quantRange(n));
  if (!isa<FloatType>(typeOf(self).getElementType()))
    return n.error("input must be floating point");
  if (!isa<IntegerType>(type.getElementType()) ||
      type.getElementType().isInteger(1))
    return n.error("dtype must be an integer type");
  Value scale, zeroPoint;
  IntegerAttr axisAttr;
  if (perChannel) {
    ASSIGN_OR_RETURN(int64_t axis, channelAxis(n, self));
    ASSIGN_OR_RETURN(Value scales, n.tensor("scales"));
    ASSIGN_OR_RETURN(Value zeroPoints, n.tensor("zero_points"));
    ASSIGN_OR_RETURN(scale, channelVector(n, scales, "scales", self, axis));
    ASSIGN_OR_RETURN(zeroPoint,
                     channelVector(n, zeroPoints, "zero_points", self, axis));
    if (!isa<FloatType>(typeOf(scale).getElementType()))
      return n.error("scales must be floating point");
    axisAttr = n.b().getI64IntegerAttr(axis);
  } else {
    ASSIGN_OR_RETURN(std::tie(scale, zeroPoint), tensorParameters(n, tensorParams));
  }
  return Values{n.b().create<aten::QuantizeOp>(
      n.loc(), type, self, scale, zeroPoint,
      n.b().getI64IntegerAttr(range.first),
      n.b().getI64IntegerAttr(range.second), axisAttr)};
}

/// quantized_decomposed.dequantize_per_tensor{,.tensor} and
/// dequantize_per_channel (whose zero points may be absent): one
/// aten.dequantize.
absl::StatusOr<Values> dequantizeOp(NodeImporter &n, bool perChannel,
                                    bool tensorParams) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("input"));
  if (!isa<FloatType>(type.getElementType()))
    return n.error("out_dtype must be floating point");
  if (!isa<IntegerType>(typeOf(self).getElementType()) ||
      typeOf(self).getElementType().isInteger(1))
    return n.error("input must have an integer dtype");
  Value scale, zeroPoint;
  IntegerAttr axisAttr;
  if (perChannel) {
    ASSIGN_OR_RETURN(int64_t axis, channelAxis(n, self));
    ASSIGN_OR_RETURN(Value scales, n.tensor("scales"));
    ASSIGN_OR_RETURN(scale, channelVector(n, scales, "scales", self, axis));
    if (!isa<FloatType>(typeOf(scale).getElementType()))
      return n.error("scales must be floating point");
    ASSIGN_OR_RETURN(std::optional<Value> zeroPoints,
                     n.optionalTensor("zero_points"));
    if (zeroPoints) {
      ASSIGN_OR_RETURN(zeroPoint, channelVector(n, *zeroPoints, "zero_points",
                                                self, axis));
    }
    axisAttr = n.b().getI64IntegerAttr(axis);
  } else {
    ASSIGN_OR_RETURN(std::tie(scale, zeroPoint), tensorParameters(n, tensorParams));
  }
  return Values{n.b().create<aten::DequantizeOp>(n.loc(), type, self, scale,
                                                 zeroPoint, axisAttr)};
}

/// The fake-quantized value and mask of `x` from the kernels' quantized
/// value `qval` (computed in a float type): clamped with NaN as quant_min.
struct FakeQuantized {
  Value clamped; ///< i64: the clamped quantized value.
  Value mask;    ///< i1: quant_min <= qval <= quant_max.
};

FakeQuantized clampQuantized(NodeImporter &n, Value qval, int64_t lo,
                             int64_t hi) {
  RankedTensorType type = typeOf(qval);
  Type element = type.getElementType();
  auto boolType = type.clone(n.b().getI1Type());
  Value low = n.constant(element, static_cast<double>(lo));
  Value high = n.constant(element, static_cast<double>(hi));
  Value clamped = pointwise(n, type, "clamp", qval,
                            {static_cast<double>(lo), static_cast<double>(hi)});
  // fmax(NaN, quant_min) is quant_min.
  clamped = pointwise(n, type, "where",
                      {pointwise(n, boolType, "isnan", qval), low, clamped});
  Value mask = pointwise(n, boolType, "logical_and",
                         {pointwise(n, boolType, "ge", {qval, low}),
                          pointwise(n, boolType, "le", {qval, high})});
  return {convertElements(n, clamped, n.b().getI64Type()), mask};
}

/// The kernels' compute type for `x * inv_scale` (inv_scale a float):
/// f64 for f64 inputs, else f32.
Type fakeQuantCompute(NodeImporter &n, Value self) {
  Type element = typeOf(self).getElementType();
  return element.isF64() ? element : n.b().getF32Type();
}

/// aten.fake_quantize_per_tensor_affine and its _cachemask and
/// tensor-qparams forms: (output, mask).
absl::StatusOr<Values> fakeQuantizePerTensor(NodeImporter &n, bool tensorParams,
                                             bool hasEnabledFlag) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(auto range, quantRange(n));
  if (!isa<FloatType>(type.getElementType()))
    return n.error("self must be floating point");
  Type f32 = n.b().getF32Type();
  Type i64 = n.b().getI64Type();
  Type compute = fakeQuantCompute(n, self);
  Value scale, zeroPoint;
  if (tensorParams) {
    // scale.item().toFloat() and zero_point.item().toInt().
    ASSIGN_OR_RETURN(scale, oneElement(n, "scale"));
    ASSIGN_OR_RETURN(zeroPoint, oneElement(n, "zero_point"));
    scale = convertElements(n, scale, f32);
    zeroPoint = convertElements(n, zeroPoint, i64);
  } else {
    ASSIGN_OR_RETURN(double s, n.floatAttr("scale"));
    ASSIGN_OR_RETURN(int64_t zp, n.intAttr("zero_point"));
    scale = n.constant(f32, s);
    zeroPoint = n.constant(i64, static_cast<double>(zp));
  }
  // float inv_scale = 1.0f / sc.
  Value invScale =
      n.b().create<aten::DivOp>(n.loc(), typeOf(scale), n.constant(f32, 1.0),
                                scale);
  Value scaled = mul(n, compute, self, invScale);
  Value qval = add(n, compute, pointwise(n, typeOf(scaled), "round", scaled),
                   zeroPoint);
  FakeQuantized q = clampQuantized(n, qval, range.first, range.second);
  // (qval - z_point) * sc: an int64 difference times a float.
  Value output = convertElements(n, mul(n, f32, sub(n, i64, q.clamped, zeroPoint),
                                scale),
                         type.getElementType());
  Value mask = q.mask;
  if (hasEnabledFlag) {
    // fake_quant_enabled.item().toInt() == 0 passes self through, mask set.
    ASSIGN_OR_RETURN(Value enabled, oneElement(n, "fake_quant_enabled"));
    Value on = pointwise(n, typeOf(enabled).clone(n.b().getI1Type()), "ne",
                         {convertElements(n, enabled, i64), n.constant(i64, 0.0)});
    output = pointwise(n, type, "where", {on, output, self});
    mask = pointwise(n, typeOf(mask), "logical_or",
                     {pointwise(n, typeOf(on), "logical_not", on), mask});
  }
  if (n.numResults() == 1)
    return Values{output};
  return Values{output, mask};
}

/// aten.fake_quantize_per_channel_affine(_cachemask): (output, mask). An
/// integer zero point adds after rounding; a float one (the learnable
/// fake quantizers') before, rounding in f32 as lrintf does.
absl::StatusOr<Values> fakeQuantizePerChannel(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value scale, n.tensor("scale"));
  ASSIGN_OR_RETURN(Value zeroPoint, n.tensor("zero_point"));
  ASSIGN_OR_RETURN(auto range, quantRange(n));
  if (!isa<FloatType>(type.getElementType()))
    return n.error("self must be floating point");
  ASSIGN_OR_RETURN(int64_t axis, channelAxis(n, self));
  int64_t rank = typeOf(self).getRank();
  int64_t extent = typeOf(self).getDimSize(axis);
  ASSIGN_OR_RETURN(scale, channelParameter(n, scale, "scale", axis, rank, extent));
  ASSIGN_OR_RETURN(zeroPoint, channelParameter(n, zeroPoint, "zero_point", axis,
                                               rank, extent));
  Type f32 = n.b().getF32Type();
  Type f64 = n.b().getF64Type();
  Type compute = fakeQuantCompute(n, self);
  // The kernels read scale as float: inv_scale = 1.0f / scale.
  scale = convertElements(n, scale, f32);
  Value invScale = n.b().create<aten::DivOp>(n.loc(), typeOf(scale),
                                             n.constant(f32, 1.0), scale);
  Value scaled = mul(n, compute, self, invScale);
  bool floatZeroPoint = isa<FloatType>(typeOf(zeroPoint).getElementType());
  Value qval;
  if (floatZeroPoint) {
    Value sum = convertElements(n, add(n, compute, scaled, zeroPoint), f32);
    qval = pointwise(n, typeOf(sum), "round", sum);
  } else {
    // The kernel reads an int32 zero point.
    zeroPoint = convertElements(n, zeroPoint, n.b().getI32Type());
    qval = add(n, compute, pointwise(n, typeOf(scaled), "round", scaled),
               zeroPoint);
  }
  FakeQuantized q = clampQuantized(n, qval, range.first, range.second);
  // (clamped - zero_point) * scale in double, stored in self's type.
  Value shifted = sub(n, f64, q.clamped, zeroPoint);
  Value output = convertElements(n, mul(n, f64, shifted, scale), type.getElementType());
  if (n.numResults() == 1)
    return Values{output};
  return Values{output, q.mask};
}

} // namespace

void addQuantizeHandlers(OpHandlerTable &t) {
  t["quantized_decomposed.quantize_per_tensor.default"] = [](NodeImporter &n) {
    return quantizeOp(n, /*perChannel=*/false, /*tensorParams=*/false);
  };
  t["quantized_decomposed.quantize_per_tensor.tensor"] = [](NodeImporter &n) {
    return quantizeOp(n, /*perChannel=*/false, /*tensorParams=*/true);
  };
  t["quantized_decomposed.quantize_per_channel.default"] = [](NodeImporter &n) {
    return quantizeOp(n, /*perChannel=*/true, /*tensorParams=*/false);
  };
  t["quantized_decomposed.dequantize_per_tensor.default"] =
      [](NodeImporter &n) { return dequantizeOp(n, false, false); };
  t["quantized_decomposed.dequantize_per_tensor.tensor"] =
      [](NodeImporter &n) { return dequantizeOp(n, false, true); };
  t["quantized_decomposed.dequantize_per_channel.default"] =
      [](NodeImporter &n) { return dequantizeOp(n, true, false); };
  t["aten.fake_quantize_per_tensor_affine.default"] = [](NodeImporter &n) {
    return fakeQuantizePerTensor(n, false, false);
  };
  t["aten.fake_quantize_per_tensor_affine.tensor_qparams"] =
      [](NodeImporter &n) { return fakeQuantizePerTensor(n, true, false); };
  t["aten.fake_quantize_per_tensor_affine_cachemask.default"] =
      [](NodeImporter &n) { return fakeQuantizePerTensor(n, false, false); };
  t["aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams.default"] =
      [](NodeImporter &n) { return fakeQuantizePerTensor(n, true, true); };
  t["aten.fake_quantize_per_channel_affine.default"] = fakeQuantizePerChannel;
  t["aten.fake_quantize_per_channel_affine_cachemask.default"] =
      fakeQuantizePerChannel;
}

} // namespace kiln
