//===- SearchHandlers.cpp - bucketize, searchsorted and histograms --------===//
//
// This file implements the importer handlers of aten.bucketize,
// aten.searchsorted, aten.histc and aten.histogram. histc is one
// aten.histc and histogram one aten.histogram, which kiln-decompose-aten
// computes as scatter-adds into the bins
// (lib/Transforms/DecomposeHistogram.cpp). bucketize and searchsorted are each
// one aten.searchsorted (a sorter gathers the
// sequence into order first), which kiln-decompose-aten computes as a
// count (lib/Transforms/DecomposeSearch.cpp): the insertion index of a
// value v in a sorted row b is the number of entries with !(b >= v) (the
// left side) or !(b > v) (the right side).
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

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The most comparisons (values x row entries) one search may make: its
/// decomposition holds them all at once.
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
  if (sortedType.getRank() > 1 &&
      (valuesType.getRank() != sortedType.getRank() ||
       valuesType.getShape().drop_back() != sortedType.getShape().drop_back()))
    return n.error(absl::StrCat(
        "the values must have the sorted sequence's leading dims (",
        sortedType.getRank() - 1, " of them) and one more"));
  return n.b()
      .create<aten::SearchSortedOp>(n.loc(), type, sorted, values,
                                    right ? n.b().getUnitAttr() : UnitAttr())
      .getResult();
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

/// histc(self, bins=100, min=0, max=0): one aten.histc.
absl::StatusOr<Values> histc(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t bins, n.intAttr("bins", 100));
  ASSIGN_OR_RETURN(double lo, n.floatAttr("min", 0.0));
  ASSIGN_OR_RETURN(double hi, n.floatAttr("max", 0.0));
  if (!isa<FloatType>(typeOf(self).getElementType()))
    return n.error("histc counts floating-point tensors (eager has no integer kernel)");
  if (bins < 1)
    return n.error(absl::StrCat("histc's bins must be positive, not ", bins));
  if (bins > kMaxConstantTable)
    return n.unimplemented(absl::StrCat("histc with ", bins, " bins (Kiln takes at most ",
                                        kMaxConstantTable, ")"));
  if (!std::isfinite(lo) || !std::isfinite(hi))
    return n.error("histc's min and max must be finite");
  if (lo > hi)
    return n.error(absl::StrCat("histc's max (", hi, ") must not be less than its min (", lo, ")"));
  if (type.getShape() != ArrayRef<int64_t>{bins})
    return n.error(absl::StrCat("the result is declared with another shape than (", bins, ")"));
  return Values{n.b().create<aten::HistcOp>(n.loc(), type, self, n.b().getI64IntegerAttr(bins),
                                            n.b().getF64FloatAttr(lo), n.b().getF64FloatAttr(hi))
                    .getResult()};
}

/// histogram.bin_ct(self, bins=100, *, range=None, weight=None,
/// density=False) and histogram.bins_tensor(self, bins, *, weight=None,
/// density=False): one aten.histogram, which computes the edges of the
/// first and takes the second's.
absl::StatusOr<Values> histogram(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  Type element = typeOf(self).getElementType();
  if (!element.isF32() && !element.isF64())
    return n.error("histogram counts float32 and float64 tensors (eager has no other kernel)");
  std::optional<Value> edges;
  int64_t bins = 0;
  std::vector<double> range;
  if (n.isTensor("bins")) {
    ASSIGN_OR_RETURN(edges, n.optionalTensor("bins"));
    RankedTensorType edgesType = typeOf(*edges);
    if (edgesType.getRank() != 1 || edgesType.getDimSize(0) < 2)
      return n.error("histogram's bin edges must be 1-d with at least 2 edges");
    if (edgesType.getElementType() != element)
      return n.error("histogram's bin edges must have the input's dtype");
    bins = edgesType.getDimSize(0) - 1;
  } else {
    ASSIGN_OR_RETURN(bins, n.intAttr("bins", 100));
    if (bins < 1)
      return n.error(absl::StrCat("histogram's bins must be positive, not ", bins));
    ASSIGN_OR_RETURN(range, n.floatsAttr("range", /*absentIsEmpty=*/true));
    if (!range.empty() && range.size() != 2)
      return n.error(absl::StrCat("histogram's range must be (min, max), not ", range.size(),
                                  " numbers"));
    if (!range.empty() && (!std::isfinite(range[0]) || !std::isfinite(range[1])))
      return n.error("histogram's range must be finite");
    if (!range.empty() && range[0] > range[1])
      return n.error(absl::StrCat("histogram's min (", range[0], ") must not exceed its max (",
                                  range[1], ")"));
  }
  if (bins > kMaxConstantTable)
    return n.unimplemented(absl::StrCat("histogram with ", bins, " bins (Kiln takes at most ",
                                        kMaxConstantTable, ")"));
  ASSIGN_OR_RETURN(std::optional<Value> weight, n.optionalTensor("weight"));
  if (weight && typeOf(*weight).getShape() != typeOf(self).getShape())
    return n.error("histogram's weight must have the input's shape");
  if (weight && typeOf(*weight).getElementType() != element)
    return n.error("histogram's weight must have the input's dtype");
  ASSIGN_OR_RETURN(bool density, n.boolAttr("density", false));
  ASSIGN_OR_RETURN(RankedTensorType histType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType edgesType, n.resultType(1));
  if (histType != RankedTensorType::get({bins}, element) ||
      edgesType != RankedTensorType::get({bins + 1}, element))
    return n.error(absl::StrCat("the results are declared with other types than (", bins,
                                ") and (", bins + 1, ") of the input's dtype"));
  auto op = n.b().create<aten::HistogramOp>(
      n.loc(), TypeRange{histType, edgesType}, self, edges.value_or(Value()),
      weight.value_or(Value()),
      range.empty() ? DenseF64ArrayAttr() : n.b().getDenseF64ArrayAttr(range),
      density ? n.b().getUnitAttr() : UnitAttr());
  return Values{op.getHist(), op.getBinEdges()};
}

} // namespace

void addSearchHandlers(OpHandlerTable &t) {
  t["aten.bucketize.Tensor"] = bucketize;
  t["aten.bucketize.Scalar"] = bucketize;
  t["aten.searchsorted.Tensor"] = searchsorted;
  t["aten.searchsorted.Scalar"] = searchsorted;
  t["aten.histc.default"] = histc;
  t["aten.histogram.bin_ct"] = histogram;
  t["aten.histogram.bins_tensor"] = histogram;
}

} // namespace kiln
