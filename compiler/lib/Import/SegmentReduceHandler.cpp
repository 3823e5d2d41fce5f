//===- SegmentReduceHandler.cpp - torch.segment_reduce --------------------===//
//
// This file implements the importer handler of aten.segment_reduce: one
// aten.segment_reduce over the segments' lengths or offsets, which
// kiln-decompose-aten computes as a masked reduction
// (lib/Transforms/DecomposeSegmentReduce.cpp).
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <optional>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// segment_reduce(data, reduce, *, lengths=None, indices=None,
/// offsets=None, axis=0, unsafe=False, initial=None).
absl::StatusOr<Values> segmentReduce(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value data, n.tensor("data"));
  ASSIGN_OR_RETURN(std::string reduce, n.stringAttr("reduce"));
  ASSIGN_OR_RETURN(std::optional<Value> lengths, n.optionalTensor("lengths"));
  ASSIGN_OR_RETURN(std::optional<Value> indices, n.optionalTensor("indices"));
  ASSIGN_OR_RETURN(std::optional<Value> offsets, n.optionalTensor("offsets"));
  ASSIGN_OR_RETURN(int64_t rawAxis, n.intAttr("axis", 0));
  RankedTensorType dataType = typeOf(data);
  if (reduce != "sum" && reduce != "mean" && reduce != "max" && reduce != "min" &&
      reduce != "prod")
    return n.error(absl::StrCat("segment_reduce's reduce must be sum, mean, max, min or prod, "
                                "not '", reduce, "'"));
  if (!isa<FloatType>(dataType.getElementType()))
    return n.error("segment_reduce reduces floating-point data (eager has no other kernel)");
  if (indices)
    return n.error("segment_reduce takes lengths or offsets (eager does not support indices)");
  if (lengths.has_value() == offsets.has_value())
    return n.error("segment_reduce takes either lengths or offsets");
  if (dataType.getRank() == 0)
    return n.error("segment_reduce needs data with at least one dim");
  ASSIGN_OR_RETURN(int64_t axis, n.normalizeDim(rawAxis, dataType.getRank()));
  Value bounds = lengths ? *lengths : *offsets;
  RankedTensorType boundsType = typeOf(bounds);
  if (!boundsType.getElementType().isSignlessInteger() ||
      boundsType.getElementType().isInteger(1))
    return n.error("segment_reduce's lengths and offsets must be integers");
  if (boundsType.getRank() != axis + 1 ||
      boundsType.getShape().drop_back() != dataType.getShape().take_front(axis))
    return n.error(absl::StrCat("segment_reduce's ", lengths ? "lengths" : "offsets",
                                " must have the data's dims before axis ", axis,
                                ", then one per segment"));
  if (offsets && boundsType.getShape().back() < 1)
    return n.error("segment_reduce's offsets need at least one entry");
  std::optional<double> initial;
  if (n.has("initial")) {
    ASSIGN_OR_RETURN(initial, n.floatAttr("initial"));
  }
  SmallVector<int64_t> expected(dataType.getShape());
  expected[axis] = boundsType.getShape().back() - (offsets ? 1 : 0);
  if (type.getShape() != ArrayRef<int64_t>(expected) ||
      type.getElementType() != dataType.getElementType())
    return n.error("the result is declared with another shape or dtype than the data's with "
                   "the segments at axis");
  return Values{n.b().create<aten::SegmentReduceOp>(
      n.loc(), type, data, bounds, n.b().getStringAttr(reduce), n.b().getI64IntegerAttr(axis),
      offsets ? n.b().getUnitAttr() : UnitAttr(),
      initial ? n.b().getF64FloatAttr(*initial) : FloatAttr())};
}

} // namespace

void addSegmentReduceHandler(OpHandlerTable &t) {
  t["aten.segment_reduce.default"] = segmentReduce;
}

} // namespace kiln
