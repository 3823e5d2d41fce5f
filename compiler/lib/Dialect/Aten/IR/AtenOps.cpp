//===- AtenOps.cpp - ATen dialect verifiers and folders -------------------===//
//
// This file implements the verifiers of the `aten` ops: each checks the
// declared result type against the operands the way PyTorch's meta functions
// compute it, so a malformed graph is rejected at import, never miscompiled.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "VerifyUtils.h"

#include "kiln/common/SaturatingCast.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace kiln::aten;

LogicalResult kiln::aten::verifyBroadcastsTo(Operation *op, Value operand,
                                             ArrayRef<int64_t> result,
                                             StringRef what) {
  ArrayRef<int64_t> shape = shapeOf(operand);
  if (shape.size() > result.size())
    return op->emitOpError() << what << " has rank " << shape.size()
                             << ", above the result's rank " << result.size();
  size_t offset = result.size() - shape.size();
  for (auto [i, extent] : llvm::enumerate(shape)) {
    if (extent != 1 && extent != result[offset + i])
      return op->emitOpError()
             << what << " dimension " << i << " (extent " << extent
             << ") does not broadcast to result extent " << result[offset + i];
  }
  return success();
}

std::string kiln::aten::formatWide(WideInt value) {
  if (value > std::numeric_limits<int64_t>::max() ||
      value < std::numeric_limits<int64_t>::min())
    return "out of range";
  return std::to_string(static_cast<int64_t>(value));
}

LogicalResult kiln::aten::verifyDimList(Operation *op, ArrayRef<int64_t> dims,
                                        int64_t rank) {
  llvm::SmallBitVector seen(rank);
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank)
      return op->emitOpError() << "dimension " << dim
                               << " is out of range for rank " << rank;
    if (seen.test(dim))
      return op->emitOpError() << "dimension " << dim << " appears twice";
    seen.set(dim);
  }
  return success();
}

namespace {

/// Binary elementwise ops: both operands broadcast to the result, and the
/// result shape is exactly the broadcast of the two.
LogicalResult verifyBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  ArrayRef<int64_t> result = shapeOf(op->getResult(0));
  if (failed(verifyBroadcastsTo(op, lhs, result, "lhs")) ||
      failed(verifyBroadcastsTo(op, rhs, result, "rhs")))
    return failure();
  ArrayRef<int64_t> a = shapeOf(lhs), b = shapeOf(rhs);
  if (result.size() != std::max(a.size(), b.size()))
    return op->emitOpError("result rank must be the larger operand rank");
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t ea = i < result.size() - a.size() ? 1 : a[i - (result.size() - a.size())];
    int64_t eb = i < result.size() - b.size() ? 1 : b[i - (result.size() - b.size())];
    // A symbolic (dynamic) extent meets 1 or itself.
    int64_t broadcast = ea == 1 ? eb : eb == 1 ? ea : std::max(ea, eb);
    if (result[i] != broadcast && !(ea == 0 || eb == 0))
      return op->emitOpError() << "result dimension " << i << " is "
                               << result[i] << ", expected " << broadcast;
  }
  return success();
}

} // namespace

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() {
  if (!isa<FloatType>(getType().getElementType()))
    return emitOpError("true division needs a floating-point result");
  return verifyBinary(*this);
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "approximate must be \"none\" or \"tanh\", got \""
                         << getApproximate() << "\"";
  if (!isa<FloatType>(getType().getElementType()))
    return emitOpError("needs a floating-point tensor");
  return success();
}

LogicalResult MmOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getSelf()), b = shapeOf(getMat2()),
                    r = getType().getShape();
  if (a.size() != 2 || b.size() != 2)
    return emitOpError("operands must be 2-D");
  if (a[1] != b[0])
    return emitOpError() << "contraction extents differ: " << a[1] << " vs "
                         << b[0];
  if (r.size() != 2 || r[0] != a[0] || r[1] != b[1])
    return emitOpError() << "result must be " << a[0] << "x" << b[1];
  return success();
}

LogicalResult AddmmOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getMat1()), b = shapeOf(getMat2()),
                    r = getType().getShape();
  if (a.size() != 2 || b.size() != 2)
    return emitOpError("mat1 and mat2 must be 2-D");
  if (a[1] != b[0])
    return emitOpError() << "contraction extents differ: " << a[1] << " vs "
                         << b[0];
  if (r.size() != 2 || r[0] != a[0] || r[1] != b[1])
    return emitOpError() << "result must be " << a[0] << "x" << b[1];
  return verifyBroadcastsTo(*this, getSelf(), r, "self");
}

LogicalResult BmmOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getSelf()), b = shapeOf(getMat2()),
                    r = getType().getShape();
  if (a.size() != 3 || b.size() != 3)
    return emitOpError("operands must be 3-D");
  if (a[0] != b[0])
    return emitOpError() << "batch extents differ: " << a[0] << " vs " << b[0];
  if (a[2] != b[1])
    return emitOpError() << "contraction extents differ: " << a[2] << " vs "
                         << b[1];
  if (r.size() != 3 || r[0] != a[0] || r[1] != a[1] || r[2] != b[2])
    return emitOpError() << "result must be " << a[0] << "x" << a[1] << "x"
                         << b[2];
  return success();
}

LogicalResult kiln::aten::verifySoftmaxLike(Operation *op, int64_t dim,
                                            RankedTensorType type) {
  int64_t rank = type.getRank();
  if (dim < 0 || dim >= std::max<int64_t>(rank, 1))
    return op->emitOpError() << "dim " << dim << " is out of range for rank "
                             << rank;
  if (!isa<FloatType>(type.getElementType()))
    return op->emitOpError("needs a floating-point tensor");
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifySoftmaxLike(*this, getDim(), getType());
}

template <typename ReductionOp>
static LogicalResult verifyReduction(ReductionOp op) {
  ArrayRef<int64_t> in = shapeOf(op.getSelf());
  if (failed(verifyDimList(op, op.getDims(), in.size())))
    return failure();
  llvm::SmallBitVector reduced(in.size(), op.getDims().empty());
  for (int64_t dim : op.getDims())
    reduced.set(dim);
  SmallVector<int64_t> expected;
  for (auto [i, extent] : llvm::enumerate(in)) {
    if (!reduced.test(i))
      expected.push_back(extent);
    else if (op.getKeepdim())
      expected.push_back(1);
  }
  if (ArrayRef<int64_t>(expected) != op.getType().getShape())
    return op.emitOpError("result shape does not match the reduction");
  return success();
}

LogicalResult SumOp::verify() { return verifyReduction(*this); }
LogicalResult ProdOp::verify() { return verifyReduction(*this); }
LogicalResult AmaxOp::verify() { return verifyReduction(*this); }
LogicalResult AminOp::verify() { return verifyReduction(*this); }
LogicalResult AnyOp::verify() {
  if (!getType().getElementType().isInteger(1))
    return emitOpError("any produces a boolean tensor");
  return verifyReduction(*this);
}
LogicalResult AllOp::verify() {
  if (!getType().getElementType().isInteger(1))
    return emitOpError("all produces a boolean tensor");
  return verifyReduction(*this);
}
LogicalResult MeanOp::verify() {
  if (!isa<FloatType>(getType().getElementType()))
    return emitOpError("mean needs a floating-point result");
  return verifyReduction(*this);
}

LogicalResult NativeLayerNormOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  int64_t rank = inputType.getRank(), k = getNormalizedRank();
  if (k < 1 || k > rank)
    return emitOpError() << "normalized_rank " << k << " is out of range for rank "
                         << rank;
  ArrayRef<int64_t> normalized = inputType.getShape().take_back(k);
  for (Value affine : {getWeight(), getBias()})
    if (affine && shapeOf(affine) != normalized)
      return emitOpError("weight and bias must have the normalised shape");
  if (getOutput().getType() != inputType)
    return emitOpError("output must have the input's type");
  SmallVector<int64_t> statShape(inputType.getShape().drop_back(k));
  statShape.append(k, 1);
  if (!isa<FloatType>(inputType.getElementType()))
    return emitOpError("needs a floating-point input");
  for (Value stat : {getMean(), getRstd()})
    if (!isa<FloatType>(cast<RankedTensorType>(stat.getType()).getElementType()))
      return emitOpError("mean and rstd must be floating-point");
  for (Value stat : {getMean(), getRstd()})
    if (shapeOf(stat) != ArrayRef<int64_t>(statShape))
      return emitOpError("mean and rstd keep the normalised dims as extent 1");
  return success();
}

/// A view or expand: one size operand per dynamic result dimension.
static LogicalResult verifyDynamicSizes(Operation *op, RankedTensorType type,
                                        ValueRange sizes) {
  if (static_cast<int64_t>(sizes.size()) != type.getNumDynamicDims())
    return op->emitOpError() << "has " << sizes.size() << " sizes for "
                             << type.getNumDynamicDims() << " dynamic dimensions";
  return success();
}

LogicalResult BitcastOp::verify() {
  auto in = cast<RankedTensorType>(getSelf().getType());
  RankedTensorType out = getType();
  if (in.getShape() != out.getShape())
    return emitOpError("keeps the shape");
  Type from = in.getElementType(), to = out.getElementType();
  auto bits = [](Type t) -> unsigned {
    return t.isIntOrFloat() && !t.isInteger(1) ? t.getIntOrFloatBitWidth() : 0;
  };
  if (bits(from) == 0 || bits(from) != bits(to))
    return emitOpError("reads integers or floats as another type of the same width");
  return success();
}

LogicalResult ViewOp::verify() {
  if (failed(verifyDynamicSizes(*this, getType(), getSizes())))
    return failure();
  bool dynamic = !getSelf().getType().hasStaticShape() || !getType().hasStaticShape();
  if (!dynamic && getSelf().getType().getNumElements() != getType().getNumElements())
    return emitOpError() << "cannot view " << getSelf().getType() << " as "
                         << getType() << ": element counts differ";
  if (getSelf().getType().getElementType() != getType().getElementType())
    return emitOpError("view cannot change the element type");
  return success();
}

void ConstantOp::build(OpBuilder &builder, OperationState &state, Type element,
                       double value, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, element);
  Attribute attr;
  if (auto floatType = dyn_cast<FloatType>(element))
    attr = builder.getFloatAttr(floatType, value);
  else if (element.isInteger(1))
    attr = builder.getIntegerAttr(element, value != 0.0 ? 1 : 0);
  else
    attr = builder.getIntegerAttr(element, kiln::saturatingInt64(value));
  build(builder, state, type, DenseElementsAttr::get(type, attr));
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ViewOp::fold(FoldAdaptor) {
  if (getSelf().getType() == getType())
    return getSelf();
  return {};
}

LogicalResult PermuteOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf());
  if (getDims().size() != in.size())
    return emitOpError() << "dims has " << getDims().size()
                         << " entries for rank " << in.size();
  if (failed(verifyDimList(*this, getDims(), in.size())))
    return failure();
  if (getType().getRank() != static_cast<int64_t>(in.size()))
    return emitOpError() << "result has rank " << getType().getRank()
                         << ", the input " << in.size();
  for (auto [i, dim] : llvm::enumerate(getDims()))
    if (getType().getShape()[i] != in[dim])
      return emitOpError() << "result dimension " << i << " must be "
                           << in[dim];
  return success();
}

LogicalResult ExpandOp::verify() {
  if (getSelf().getType().getElementType() != getType().getElementType())
    return emitOpError("expand cannot change the element type");
  if (failed(verifyDynamicSizes(*this, getType(), getSizes())))
    return failure();
  return verifyBroadcastsTo(*this, getSelf(), getType().getShape(), "input");
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Aten/IR/AtenOps.cpp.inc"
