//===- FlatIndexHandlers.cpp - ops that address elements in row-major order ===//
//
// This file implements the importer handlers of ops defined over a tensor's
// elements in row-major order: as_strided (a window of them at a storage
// offset with strides) and masked_scatter (the k-th set position of the
// mask takes source's k-th element). Both become one aten.index_select over
// the flattened tensor.
//
// Kiln's values are dense and row-major, so as_strided reads the elements
// of its input's row-major copy: eager's answer whenever that input is
// contiguous with storage offset 0 (every intermediate value, and inputs
// passed as such). A view handed in as an input is copied densely by the
// client, so its storage (which eager's as_strided would read) is not there.
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

absl::StatusOr<Values> asStrided(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> size, n.intsAttr("size", true));
  ASSIGN_OR_RETURN(std::vector<int64_t> stride, n.intsAttr("stride", true));
  ASSIGN_OR_RETURN(int64_t offset, n.intAttr("storage_offset", 0));
  if (size.size() != stride.size())
    return n.error(absl::StrCat("size has ", size.size(), " entries and stride ",
                                stride.size()));
  if (ArrayRef<int64_t>(size) != type.getShape())
    return n.error("the declared result shape differs from size");
  if (offset < 0)
    return n.error(absl::StrCat("storage_offset ", offset, " is negative"));
  for (int64_t s : stride)
    if (s < 0)
      return n.error(absl::StrCat("stride ", s, " is negative"));
  int64_t count = type.getNumElements();
  if (count > kMaxConstantTable)
    return n.unimplemented(absl::StrCat("as_strided of more than ",
                                        kMaxConstantTable, " elements"));
  int64_t available = typeOf(self).getNumElements();
  // The flat position of each result element, in row-major order.
  std::vector<int64_t> positions(count, offset);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i;
    for (int64_t d = static_cast<int64_t>(size.size()) - 1; d >= 0; --d) {
      positions[i] += (rest % size[d]) * stride[d];
      rest /= size[d];
    }
    if (positions[i] >= available)
      return n.error(absl::StrCat(
          "as_strided reads element ", positions[i], " of an input with ",
          available, " (Kiln reads the input's dense row-major elements)"));
  }
  auto indexType = RankedTensorType::get(type.getShape(), n.b().getI64Type());
  Value index = n.b().create<aten::ConstantOp>(
      n.loc(), indexType, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(positions)));
  Value flat = viewValue(n, self, {available});
  return Values{n.b().create<aten::IndexSelectOp>(n.loc(), type, flat, index,
                                                  n.b().getI64IntegerAttr(0))};
}

/// masked_scatter: at the k-th set position of the mask (row-major, after
/// self and mask broadcast), source's k-th element; elsewhere self.
absl::StatusOr<Values> maskedScatter(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value mask, n.tensor("mask"));
  ASSIGN_OR_RETURN(Value source, n.tensor("source"));
  if (!typeOf(mask).getElementType().isInteger(1))
    return n.error("mask must be bool");
  if (typeOf(source).getElementType() != type.getElementType())
    return n.error("source must have self's dtype");
  auto broadcast = [&](Value v, Type element) -> Value {
    RankedTensorType to = type.clone(element);
    return typeOf(v) == to ? v : n.b().create<aten::ExpandOp>(n.loc(), to, v).getResult();
  };
  Value wide = broadcast(self, type.getElementType());
  Value set = broadcast(mask, n.b().getI1Type());
  int64_t count = type.getNumElements();
  auto flatI64 = RankedTensorType::get({count}, n.b().getI64Type());
  Value ones = pointwise(n, type.clone(n.b().getI64Type()), "copy", set);
  ones = viewValue(n, ones, {count});
  // Set positions before each element: source's index at a set position.
  Value through = n.b().create<aten::CumsumOp>(n.loc(), flatI64, ones,
                                               n.b().getI64IntegerAttr(0),
                                               n.b().getBoolAttr(false));
  Value before = n.b().create<aten::SubOp>(n.loc(), flatI64, through, ones,
                                           n.b().getF64FloatAttr(1.0));
  Value flatSource = viewValue(n, source, {typeOf(source).getNumElements()});
  // Unset positions may index past source's end: index_select clamps them,
  // and the where below never takes them.
  Value taken = n.b().create<aten::IndexSelectOp>(
      n.loc(), RankedTensorType::get({count}, type.getElementType()), flatSource,
      before, n.b().getI64IntegerAttr(0));
  return Values{pointwise(n, type, "where", {set, viewValue(n, taken, type.getShape()), wide})};
}

} // namespace

void addFlatIndexHandlers(OpHandlerTable &t) {
  t["aten.as_strided.default"] = asStrided;
  t["aten.masked_scatter.default"] = maskedScatter;
}

} // namespace kiln
