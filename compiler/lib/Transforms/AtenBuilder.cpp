//===- AtenBuilder.cpp - building aten ops in a rewrite -------------------===//
//
// This file implements the builder of the decompositions' aten ops.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"

#include "kiln/Dialect/Aten/IR/AtenMatchers.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <numeric>

using namespace mlir;
namespace aten = kiln::aten;

namespace kiln::decompose {
namespace {

/// The shape `a` and `b` broadcast to, with `element`: aligned from the
/// right, an extent of 1 takes the other's (0 included), as the binary
/// ops' verifier reads it.
RankedTensorType broadcastType(Type element, Value a, Value b) {
  ArrayRef<int64_t> sa = typeOf(a).getShape(), sb = typeOf(b).getShape();
  if (sa.size() < sb.size())
    std::swap(sa, sb);
  SmallVector<int64_t> shape(sa);
  size_t offset = sa.size() - sb.size();
  for (auto [i, extent] : llvm::enumerate(sb))
    if (shape[offset + i] == 1)
      shape[offset + i] = extent;
  return RankedTensorType::get(shape, element);
}

} // namespace

Value AtenBuilder::constant(Type element, double value) {
  return r.create<aten::ConstantOp>(loc, element, value);
}

Value AtenBuilder::constant(DenseElementsAttr values) {
  return r.create<aten::ConstantOp>(loc, values.getType(), values);
}

Value AtenBuilder::positions(ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, r.getI64Type());
  SmallVector<int64_t> data(type.getNumElements());
  std::iota(data.begin(), data.end(), 0);
  return constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(data)));
}

Value AtenBuilder::pointwise(RankedTensorType type, StringRef fn,
                             ValueRange inputs, ArrayRef<double> scalars) {
  return r.create<aten::PointwiseOp>(loc, type, r.getStringAttr(fn), inputs,
                                     r.getDenseF64ArrayAttr(scalars));
}

Value AtenBuilder::convert(Value v, Type element) {
  if (typeOf(v).getElementType() == element)
    return v;
  std::optional<double> splat = aten::floatSplatValue(v);
  if (splat && typeOf(v).getRank() == 0 && isa<FloatType>(element))
    return constant(element, *splat);
  return pointwise(typeOf(v).clone(element), "copy", v);
}

Value AtenBuilder::view(Value v, ArrayRef<int64_t> shape) {
  if (typeOf(v).getShape() == shape)
    return v;
  return r.create<aten::ViewOp>(loc, typeOf(v).clone(shape), v);
}

Value AtenBuilder::permute(Value v, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  return r.create<aten::PermuteOp>(loc, v, perm);
}

Value AtenBuilder::mul(Type element, Value a, Value b) {
  return r.create<aten::MulOp>(loc, broadcastType(element, a, b), a, b);
}

Value AtenBuilder::add(Type element, Value a, Value b) {
  return r.create<aten::AddOp>(loc, broadcastType(element, a, b), a, b,
                               r.getF64FloatAttr(1.0));
}

Value AtenBuilder::sub(Type element, Value a, Value b) {
  return r.create<aten::SubOp>(loc, broadcastType(element, a, b), a, b,
                               r.getF64FloatAttr(1.0));
}

Value AtenBuilder::div(Type element, Value a, Value b) {
  return r.create<aten::DivOp>(loc, broadcastType(element, a, b), a, b);
}

Value AtenBuilder::sum(RankedTensorType type, Value v, ArrayRef<int64_t> dims) {
  return r.create<aten::SumOp>(loc, type, v, r.getDenseI64ArrayAttr(dims),
                               r.getBoolAttr(false));
}

} // namespace kiln::decompose
