//===- AtenMatchers.cpp - small facts about aten values -------------------===//
#include "kiln/Dialect/Aten/IR/AtenMatchers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

using namespace mlir;

namespace kiln::aten {

std::optional<double> floatSplatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

std::optional<int64_t> integerSplatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || dense.getElementType().isInteger(1))
    return std::nullopt;
  return dense.getSplatValue<APInt>().getSExtValue();
}

bool isFloatSplat(Value value, double expected) {
  std::optional<double> splat = floatSplatValue(value);
  return splat && *splat == expected;
}

SmallVector<int64_t> toChannelsLast(int64_t rank) {
  SmallVector<int64_t> dims = {0};
  for (int64_t d = 2; d < rank; ++d)
    dims.push_back(d);
  dims.push_back(1);
  return dims;
}

SmallVector<int64_t> fromChannelsLast(int64_t rank) {
  SmallVector<int64_t> dims = {0, rank - 1};
  for (int64_t d = 1; d + 1 < rank; ++d)
    dims.push_back(d);
  return dims;
}

} // namespace kiln::aten
