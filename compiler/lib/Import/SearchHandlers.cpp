//===- SearchHandlers.cpp - bucketize, searchsorted and histograms --------===//
//
// This file implements the importer handlers of aten.bucketize,
// aten.searchsorted, aten.histc, aten.histogram and aten.histogramdd. histc is one
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

/// Which of torch.histogramdd's three ops a node is.
enum class HistogramddPart { BinEdges, FromBinCounts, FromBinTensors };

/// _histogramdd_bin_edges(self, bins, *, range, weight, density) (the edges),
/// _histogramdd_from_bin_cts(...) (the counts) and
/// _histogramdd_from_bin_tensors(self, bins, *, weight, density) (the
/// counts, given edges): one aten.histogramdd over self viewed as (N, D)
/// points and its weight as (N). The first two build the same op, which
/// CSE keeps once.
absl::StatusOr<Values> histogramdd(NodeImporter &n, HistogramddPart part) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RankedTensorType selfType = typeOf(self);
  Type element = selfType.getElementType();
  if (!element.isF32() && !element.isF64())
    return n.error("histogramdd counts float32 and float64 tensors (eager has no other kernel)");
  if (selfType.getRank() < 2)
    return n.error("histogramdd takes points (..., D): self needs at least 2 dims");
  const int64_t dims = selfType.getShape().back();
  const int64_t points = selfType.getNumElements() / std::max<int64_t>(dims, 1);
  if (dims < 1)
    return n.error("histogramdd's points need at least one coordinate");
  std::vector<Value> edges;
  std::vector<int64_t> bins;
  std::vector<double> range;
  if (part == HistogramddPart::FromBinTensors) {
    ASSIGN_OR_RETURN(edges, n.tensors("bins"));
    for (Value e : edges) {
      if (typeOf(e).getRank() != 1 || typeOf(e).getDimSize(0) < 2)
        return n.error("histogramdd's bin edges must be 1-d with at least 2 edges");
      if (typeOf(e).getElementType() != element)
        return n.error("histogramdd's bin edges must have the input's dtype");
      bins.push_back(typeOf(e).getDimSize(0) - 1);
    }
  } else {
    ASSIGN_OR_RETURN(bins, n.intsAttr("bins"));
    ASSIGN_OR_RETURN(range, n.floatsAttr("range", /*absentIsEmpty=*/true));
    if (!range.empty() && static_cast<int64_t>(range.size()) != 2 * dims)
      return n.error(absl::StrCat("histogramdd's range must be (min, max) for each of the ",
                                  dims, " coordinates, not ", range.size(), " numbers"));
    for (size_t i = 0; i < range.size(); i += 2) {
      if (!std::isfinite(range[i]) || !std::isfinite(range[i + 1]))
        return n.error("histogramdd's range must be finite");
      if (range[i] > range[i + 1])
        return n.error(absl::StrCat("histogramdd's min (", range[i],
                                    ") must not exceed its max (", range[i + 1], ")"));
    }
  }
  if (static_cast<int64_t>(bins.size()) != dims)
    return n.error(absl::StrCat("histogramdd needs bins for each of the ", dims,
                                " coordinates, not ", bins.size()));
  int64_t cells = 1;
  for (int64_t b : bins) {
    if (b < 1)
      return n.error(absl::StrCat("histogramdd's bins must be positive, not ", b));
    if (b > kMaxConstantTable || (cells *= b) > kMaxConstantTable)
      return n.unimplemented(absl::StrCat("histogramdd with more than ", kMaxConstantTable,
                                          " bins or cells"));
  }
  ASSIGN_OR_RETURN(std::optional<Value> weight, n.optionalTensor("weight"));
  if (weight && (typeOf(*weight).getShape() != selfType.getShape().drop_back() ||
                 typeOf(*weight).getElementType() != element))
    return n.error("histogramdd's weight must have the input's shape without its last dim, "
                   "and its dtype");
  ASSIGN_OR_RETURN(bool density, n.boolAttr("density", false));
  SmallVector<Type> types = {RankedTensorType::get(bins, element)};
  for (int64_t b : bins)
    types.push_back(RankedTensorType::get({b + 1}, element));
  if (part == HistogramddPart::BinEdges) {
    for (int64_t d = 0; d < dims; ++d) {
      ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(d));
      if (declared != types[d + 1])
        return n.error("the edges are declared with other types than (bins + 1) of the "
                       "input's dtype");
    }
  } else {
    ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(0));
    if (declared != types[0])
      return n.error("the histogram is declared with another type than (bins...) of the "
                     "input's dtype");
  }
  Value points2d = n.b().create<aten::ViewOp>(
      n.loc(), RankedTensorType::get({points, dims}, element), self);
  Value flatWeight;
  if (weight)
    flatWeight = n.b().create<aten::ViewOp>(n.loc(), RankedTensorType::get({points}, element),
                                            *weight);
  auto op = n.b().create<aten::HistogramddOp>(
      n.loc(), types, points2d, ValueRange(edges), flatWeight,
      range.empty() ? DenseF64ArrayAttr() : n.b().getDenseF64ArrayAttr(range),
      density ? n.b().getUnitAttr() : UnitAttr());
  if (part == HistogramddPart::BinEdges)
    return Values(op.getBinEdges().begin(), op.getBinEdges().end());
  return Values{op.getHist()};
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
  t["aten._histogramdd_bin_edges.default"] = [](NodeImporter &n) {
    return histogramdd(n, HistogramddPart::BinEdges);
  };
  t["aten._histogramdd_from_bin_cts.default"] = [](NodeImporter &n) {
    return histogramdd(n, HistogramddPart::FromBinCounts);
  };
  t["aten._histogramdd_from_bin_tensors.default"] = [](NodeImporter &n) {
    return histogramdd(n, HistogramddPart::FromBinTensors);
  };
}

} // namespace kiln
