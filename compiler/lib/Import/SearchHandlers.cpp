//===- SearchHandlers.cpp - bucketize and searchsorted --------------------===//
//
// This file implements the importer handlers of aten.bucketize and
// aten.searchsorted as counts: the insertion index of a value v in a sorted
// row b is the number of entries with !(b >= v) (the left side, a lower
// bound) or !(b > v) (the right side, an upper bound). For a row sorted
// without NaN this is the index eager's binary search returns, and a NaN
// value goes past the end, as there. Each value is compared with every
// entry of its row: one broadcast comparison and one sum over the row.
//
// A row holding NaN is not sorted in eager's sense (its binary search then
// depends on the order it probes); the count there is the number of
// entries the predicate holds for.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"
#include "SelectionBuilders.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The most comparisons (values x row entries) one search may make.
constexpr int64_t kMaxComparisons = int64_t{1} << 28;

/// The searched values: a tensor, or a Python number typed as a
/// comparison against the sequence's element type takes it.
absl::StatusOr<Value> searchedValue(NodeImporter &n, const std::string &name,
                                    Type against) {
  if (n.isTensor(name))
    return n.tensor(name);
  return n.tensorOrScalar(name, scalarTypeAgainst(n, name, against));
}

} // namespace

absl::StatusOr<Value> insertionIndices(NodeImporter &n, RankedTensorType type,
                                       Value sorted, Value values, bool right) {
  RankedTensorType sortedType = typeOf(sorted);
  RankedTensorType valuesType = typeOf(values);
  if (sortedType.getRank() == 0)
    return n.error("the sorted sequence must have at least one dim");
  if (valuesType.getShape() != type.getShape())
    return n.error("the result must have the searched values' shape");
  int64_t rowLength = sortedType.getShape().back();
  if (valuesType.getNumElements() > kMaxComparisons / std::max<int64_t>(rowLength, 1))
    return n.unimplemented(absl::StrCat(
        "searching ", valuesType.getNumElements(), " values in rows of ",
        rowLength, " (at most ", kMaxComparisons, " comparisons)"));
  SmallVector<int64_t> valueShape(valuesType.getShape());
  SmallVector<int64_t> rowShape;
  if (sortedType.getRank() == 1) {
    rowShape.assign(valueShape.size(), 1);
    rowShape.push_back(rowLength);
  } else {
    ArrayRef<int64_t> leading = sortedType.getShape().drop_back();
    if (valuesType.getRank() != sortedType.getRank() ||
        valuesType.getShape().drop_back() != leading)
      return n.error(absl::StrCat(
          "the values must have the sorted sequence's leading dims (",
          sortedType.getRank() - 1, " of them) and one more"));
    rowShape.assign(leading.begin(), leading.end());
    rowShape.append({1, rowLength});
  }
  SmallVector<int64_t> columnShape(valueShape);
  columnShape.push_back(1);
  SmallVector<int64_t> pairShape(valueShape);
  pairShape.push_back(rowLength);
  Value rows = viewValue(n, sorted, rowShape);
  Value column = viewValue(n, values, columnShape);
  auto pairs = RankedTensorType::get(pairShape, n.b().getI1Type());
  // Entries before the insertion point: !(b >= v), or !(b > v) on the right.
  Value after = pointwise(n, pairs, right ? "gt" : "ge", {rows, column});
  Value before = pointwise(n, pairs, "logical_not", after);
  Type i64 = n.b().getI64Type();
  Value counted = pointwise(n, pairs.clone(i64), "copy", before);
  auto reduced = n.b().getDenseI64ArrayAttr({static_cast<int64_t>(valueShape.size())});
  Value count = n.b().create<aten::SumOp>(n.loc(), type.clone(i64), counted,
                                          reduced, n.b().getBoolAttr(false));
  if (type.getElementType() != i64)
    count = pointwise(n, type, "copy", count);
  return count;
}

namespace {

absl::StatusOr<Values> bucketize(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value boundaries, n.tensor("boundaries"));
  ASSIGN_OR_RETURN(bool right, n.boolAttr("right", false));
  if (typeOf(boundaries).getRank() != 1)
    return n.error("boundaries must be 1-d");
  ASSIGN_OR_RETURN(Value self, searchedValue(n, "self",
                                             typeOf(boundaries).getElementType()));
  ASSIGN_OR_RETURN(Value result,
                   insertionIndices(n, type, boundaries, self, right));
  return Values{result};
}

absl::StatusOr<Values> searchsorted(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value sorted, n.tensor("sorted_sequence"));
  ASSIGN_OR_RETURN(bool right, n.boolAttr("right", false));
  if (n.has("side")) {
    ASSIGN_OR_RETURN(std::string side, n.stringAttr("side"));
    if (side != "left" && side != "right")
      return n.error(absl::StrCat("side must be 'left' or 'right', not '", side, "'"));
    if (side == "left" && right)
      return n.error("side 'left' contradicts right=True");
    right = side == "right";
  }
  ASSIGN_OR_RETURN(std::optional<Value> sorter, n.optionalTensor("sorter"));
  if (sorter) {
    // The sequence in sorted order: sorted_sequence.gather(-1, sorter).
    if (typeOf(*sorter).getShape() != typeOf(sorted).getShape())
      return n.error("sorter must have the sorted sequence's shape");
    if (!typeOf(*sorter).getElementType().isInteger(64))
      return n.error("sorter must be int64");
    sorted = n.b().create<aten::GatherOp>(
        n.loc(), typeOf(sorted), sorted, *sorter,
        n.b().getI64IntegerAttr(typeOf(sorted).getRank() - 1));
  }
  ASSIGN_OR_RETURN(Value self, searchedValue(n, "self",
                                             typeOf(sorted).getElementType()));
  ASSIGN_OR_RETURN(Value result, insertionIndices(n, type, sorted, self, right));
  return Values{result};
}

} // namespace

void addSearchHandlers(OpHandlerTable &t) {
  t["aten.bucketize.Tensor"] = bucketize;
  t["aten.bucketize.Scalar"] = bucketize;
  t["aten.searchsorted.Tensor"] = searchsorted;
  t["aten.searchsorted.Scalar"] = searchsorted;
}

} // namespace kiln
