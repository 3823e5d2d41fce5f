//===- QuantizeHandlers.cpp - affine quantization ops ---------------------===//
//
// This file implements the importer handlers of PyTorch's affine
// quantization ops:
//
//  - quantized_decomposed.{quantize,dequantize}_per_tensor (scalar and
//    `.tensor` parameters) and _per_channel, what PT2E quantization leaves
//    in an exported graph (torch/ao/quantization/fx/_decomposed.py), each
//    imported as one aten.quantize or aten.dequantize;
//  - aten.fake_quantize_per_tensor_affine(_cachemask), its tensor-qparams
//    forms that QAT's FakeQuantize module calls, and
//    aten.fake_quantize_per_channel_affine(_cachemask), each imported as one
//    aten.fake_quantize.
//
// kiln-decompose-aten computes them in the arithmetic of their eager
// kernels (lib/Transforms/DecomposeQuantize.cpp), so that results match
// eager bit for bit.
// The handlers check what a node declares (ranges, axes, parameter shapes)
// and name it in their errors; the ops' verifiers check the same again.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

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

/// A per-channel op's parameters: its scales (floating point) and zero
/// points (null when they may be absent and are), each a vector of one
/// entry per slice of the normalised `axis`, and that axis as the op's
/// attribute.
struct ChannelParameters {
  Value scale, zeroPoint;
  IntegerAttr axis;
};

absl::StatusOr<ChannelParameters>
channelParameters(NodeImporter &n, Value self, const std::string &scalesName,
                  const std::string &zeroPointsName, bool zeroPointsOptional) {
  ASSIGN_OR_RETURN(int64_t axis, channelAxis(n, self));
  ChannelParameters p;
  ASSIGN_OR_RETURN(Value scales, n.tensor(scalesName));
  ASSIGN_OR_RETURN(p.scale, channelVector(n, scales, scalesName, self, axis));
  if (!isa<FloatType>(typeOf(p.scale).getElementType()))
    return n.error(absl::StrCat(scalesName, " must be floating point"));
  std::optional<Value> zeroPoints;
  if (zeroPointsOptional) {
    ASSIGN_OR_RETURN(zeroPoints, n.optionalTensor(zeroPointsName));
  } else {
    ASSIGN_OR_RETURN(zeroPoints, n.tensor(zeroPointsName));
  }
  if (zeroPoints) {
    ASSIGN_OR_RETURN(p.zeroPoint, channelVector(n, *zeroPoints, zeroPointsName,
                                                self, axis));
  }
  p.axis = n.b().getI64IntegerAttr(axis);
  return p;
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
    ASSIGN_OR_RETURN(ChannelParameters p,
                     channelParameters(n, self, "scales", "zero_points",
                                       /*zeroPointsOptional=*/false));
    std::tie(scale, zeroPoint, axisAttr) = std::tie(p.scale, p.zeroPoint, p.axis);
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
    ASSIGN_OR_RETURN(ChannelParameters p,
                     channelParameters(n, self, "scales", "zero_points",
                                       /*zeroPointsOptional=*/true));
    std::tie(scale, zeroPoint, axisAttr) = std::tie(p.scale, p.zeroPoint, p.axis);
  } else {
    ASSIGN_OR_RETURN(std::tie(scale, zeroPoint), tensorParameters(n, tensorParams));
  }
  return Values{n.b().create<aten::DequantizeOp>(n.loc(), type, self, scale,
                                                 zeroPoint, axisAttr)};
}

/// aten.fake_quantize_per_tensor_affine, _per_channel_affine, their
/// _cachemask forms and the tensor-qparams forms (one with QAT's enable
/// flag): one aten.fake_quantize, giving (output) or (output, mask).
absl::StatusOr<Values> fakeQuantizeOp(NodeImporter &n, bool perChannel,
                                      bool tensorParams, bool hasEnabledFlag) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(auto range, quantRange(n));
  if (!isa<FloatType>(type.getElementType()))
    return n.error("self must be floating point");
  Value scale, zeroPoint, enabled;
  IntegerAttr axisAttr;
  if (perChannel) {
    ASSIGN_OR_RETURN(ChannelParameters p,
                     channelParameters(n, self, "scale", "zero_point",
                                       /*zeroPointsOptional=*/false));
    std::tie(scale, zeroPoint, axisAttr) = std::tie(p.scale, p.zeroPoint, p.axis);
  } else {
    ASSIGN_OR_RETURN(std::tie(scale, zeroPoint), tensorParameters(n, tensorParams));
  }
  if (hasEnabledFlag) {
    ASSIGN_OR_RETURN(enabled, oneElement(n, "fake_quant_enabled"));
  }
  auto op = n.b().create<aten::FakeQuantizeOp>(
      n.loc(), TypeRange{type, type.clone(n.b().getI1Type())}, self, scale,
      zeroPoint, enabled, n.b().getI64IntegerAttr(range.first),
      n.b().getI64IntegerAttr(range.second), axisAttr);
  if (n.numResults() == 1)
    return Values{op.getResult()};
  return Values{op.getResult(), op.getMask()};
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
  // (perChannel, tensorParams, hasEnabledFlag)
  t["aten.fake_quantize_per_tensor_affine.default"] = [](NodeImporter &n) {
    return fakeQuantizeOp(n, false, false, false);
  };
  t["aten.fake_quantize_per_tensor_affine.tensor_qparams"] =
      [](NodeImporter &n) { return fakeQuantizeOp(n, false, true, false); };
  t["aten.fake_quantize_per_tensor_affine_cachemask.default"] =
      [](NodeImporter &n) { return fakeQuantizeOp(n, false, false, false); };
  t["aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams.default"] =
      [](NodeImporter &n) { return fakeQuantizeOp(n, false, true, true); };
  t["aten.fake_quantize_per_channel_affine.default"] = [](NodeImporter &n) {
    return fakeQuantizeOp(n, true, false, false);
  };
  t["aten.fake_quantize_per_channel_affine_cachemask.default"] =
      [](NodeImporter &n) { return fakeQuantizeOp(n, true, false, false); };
}

} // namespace kiln
