//===- AtenQuantOps.cpp - verifiers of the quantization ops ---------------===//
//
// This file implements the verifiers of aten.quantize, aten.dequantize and
// aten.fake_quantize: element kinds (float and integer on the two sides of
// a quantize or dequantize, float for fake quantize), equal shapes, a
// quantized range the integer type holds, and quantization parameters that
// are 0-d per tensor or one entry per channel along `axis`.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

/// `attr` read as a signed value (I64Attr's getters read it unsigned).
std::optional<int64_t> signedAxis(IntegerAttr attr) {
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}

Type elementOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

/// An integer element type a quantized tensor can have (not bool).
bool isQuantizedElement(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  return integer && integer.getWidth() > 1;
}

/// `parameter` (named `what`) is 0-d without `axis`, or 1-d with one entry
/// per slice of `input` along `axis`.
LogicalResult verifyParameter(Operation *op, Value parameter, StringRef what,
                              Value input, std::optional<int64_t> axis) {
  ArrayRef<int64_t> shape = shapeOf(parameter);
  if (!axis) {
    if (!shape.empty())
      return op->emitOpError() << "per-tensor " << what
                               << " must be 0-d, not rank " << shape.size();
    return success();
  }
  int64_t extent = shapeOf(input)[*axis];
  if (shape.size() != 1 || shape[0] != extent)
    return op->emitOpError() << "per-channel " << what << " must be 1-d with "
                             << extent << " entries (input dim " << *axis
                             << ")";
  return success();
}

/// What quantize and dequantize share: equal shapes, an axis in range, a
/// float scale, and parameters shaped for the axis.
LogicalResult verifyQuantization(Operation *op, Value input, Value result,
                                 Value scale, Value zeroPoint,
                                 std::optional<int64_t> axis) {
  if (shapeOf(input) != shapeOf(result))
    return op->emitOpError("result shape must equal the input's");
  if (axis && (*axis < 0 || *axis >= static_cast<int64_t>(shapeOf(input).size())))
    return op->emitOpError() << "axis " << *axis << " is out of range for rank "
                             << shapeOf(input).size();
  if (!isa<FloatType>(elementOf(scale)))
    return op->emitOpError("scale must be floating point");
  if (failed(verifyParameter(op, scale, "scale", input, axis)))
    return failure();
  if (zeroPoint) {
    Type element = elementOf(zeroPoint);
    if (!isQuantizedElement(element) && !isa<FloatType>(element))
      return op->emitOpError("zero_point must be an integer or float, not bool "
                             "or complex");
    return verifyParameter(op, zeroPoint, "zero_point", input, axis);
  }
  return success();
}

/// quant_min <= quant_max.
LogicalResult verifyRange(Operation *op, IntegerAttr min, IntegerAttr max) {
  if (min.getInt() > max.getInt())
    return op->emitOpError() << "quant_min " << min.getInt()
                             << " is above quant_max " << max.getInt();
  return success();
}

} // namespace

LogicalResult QuantizeOp::verify() {
  if (!isa<FloatType>(elementOf(getInput())))
    return emitOpError("input must be floating point");
  if (!isQuantizedElement(elementOf(getResult())))
    return emitOpError("result must have an integer element type");
  if (failed(verifyRange(*this, getQuantMinAttr(), getQuantMaxAttr())))
    return failure();
  // The clamped value must convert to the result type exactly (u8 travels
  // as i16, whose range holds [0, 255]).
  unsigned width = elementOf(getResult()).getIntOrFloatBitWidth();
  if (width < 64) {
    int64_t lowest = -(int64_t{1} << (width - 1));
    int64_t highest = (int64_t{1} << (width - 1)) - 1;
    if (getQuantMinAttr().getInt() < lowest || getQuantMaxAttr().getInt() > highest)
      return emitOpError() << "[" << getQuantMinAttr().getInt() << ", "
                           << getQuantMaxAttr().getInt() << "] does not fit i"
                           << width;
  }
  return verifyQuantization(*this, getInput(), getResult(), getScale(),
                            getZeroPoint(), signedAxis(getAxisAttr()));
}

LogicalResult DequantizeOp::verify() {
  if (!isQuantizedElement(elementOf(getInput())))
    return emitOpError("input must have an integer element type");
  if (!isa<FloatType>(elementOf(getResult())))
    return emitOpError("result must be floating point");
  if (!getAxis() && !getZeroPoint())
    return emitOpError("a per-tensor dequantize needs a zero_point");
  return verifyQuantization(*this, getInput(), getResult(), getScale(),
                            getZeroPoint(), signedAxis(getAxisAttr()));
}

LogicalResult FakeQuantizeOp::verify() {
  if (!isa<FloatType>(elementOf(getInput())))
    return emitOpError("input must be floating point");
  if (getResult().getType() != getInput().getType())
    return emitOpError("result type must equal the input's");
  auto mask = cast<RankedTensorType>(getMask().getType());
  if (!mask.getElementType().isInteger(1) || mask.getShape() != shapeOf(getInput()))
    return emitOpError("mask must be i1 with the input's shape");
  if (Value enabled = getEnabled();
      enabled && (!shapeOf(enabled).empty() ||
                  !elementOf(enabled).isIntOrFloat()))
    return emitOpError("enabled must be a 0-d number");
  if (failed(verifyRange(*this, getQuantMinAttr(), getQuantMaxAttr())))
    return failure();
  return verifyQuantization(*this, getInput(), getResult(), getScale(),
                            getZeroPoint(), signedAxis(getAxisAttr()));
}
