//===- EmbeddingBagHandler.cpp - aten._embedding_bag as bag masks ---------===//
//
// This file implements the importer handler of aten._embedding_bag and
// aten._embedding_bag_forward_only (what nn.EmbeddingBag and
// F.embedding_bag export to): N indices into a weight table, cut into B
// bags by offsets, each bag reduced by sum (optionally weighted per
// sample), mean or max. An empty bag gives zeros.
//
// Index p belongs to bag offset2bag[p] = #{b < B : offsets[b] <= p} - 1
// (the last bag starting at or before it; with include_last_offset the
// last offset only ends the last bag, and indices past it join that bag,
// as in eager), and a padding_idx entry to none. That makes a (B, N)
// membership mask; the N rows read from the weight are then summed over
// the masked (B, N, D) rows (sum, mean; past 2^26 such triples, one aten.mm
// with the mask, where a non-finite weight reaches every bag) or reduced by
// aten.amax over them (max, whose indices are the weight rows holding each
// maximum, the first among equal values).
//
// The op's other results follow eager's CPU kernel, quirks included:
// offset2bag is empty in sum mode without padding_idx; bag_size counts
// each bag's non-padding indices in mean and max modes and is zeros in sum
// mode; max_indices is the maximum's weight row in max mode, bag_size in
// mean mode and zeros in sum mode. They take the indices' integer type.
// With include_last_offset, PyTorch's meta function and CPU kernel disagree
// on how many entries bag_size and max_indices have (B or B + 1); Kiln
// gives the declared (meta) count, 0 past the last bag.
//
//===----------------------------------------------------------------------===//
#include "EmptyTensors.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

/// The most (bag, index, column) triples the max mode's window may hold.
constexpr int64_t kMaxWindow = int64_t{1} << 26;

Value slice1d(NodeImporter &n, Value v, int64_t start, int64_t length) {
  auto type = typeOf(v).clone({length});
  return n.b().create<aten::SliceOp>(n.loc(), type, v,
                                     n.b().getDenseI64ArrayAttr({start}),
                                     n.b().getDenseI64ArrayAttr({1}));
}

/// The declared result `i` must have `shape`.
absl::Status expectShape(NodeImporter &n, int i, ArrayRef<int64_t> shape) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(i));
  if (type.getShape() != shape)
    return n.error(absl::StrCat("result ", i, " is declared with another shape "
                                "than the op gives"));
  return absl::OkStatus();
}

absl::StatusOr<Values> embeddingBag(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(Value weight, n.tensor("weight"));
  ASSIGN_OR_RETURN(Value indices, n.tensor("indices"));
  ASSIGN_OR_RETURN(Value offsets, n.tensor("offsets"));
  ASSIGN_OR_RETURN(int64_t mode, n.intAttr("mode", kSum));
  ASSIGN_OR_RETURN(std::optional<Value> perSample,
                   n.optionalTensor("per_sample_weights"));
  ASSIGN_OR_RETURN(bool includeLast, n.boolAttr("include_last_offset", false));
  ASSIGN_OR_RETURN(int64_t padding, n.intAttr("padding_idx", -1));
  if (n.numResults() != 4)
    return n.error("_embedding_bag has 4 results");
  if (mode != kSum && mode != kMean && mode != kMax)
    return n.error(absl::StrCat("mode ", mode, " is not 0 (sum), 1 (mean) or 2 (max)"));
  if (perSample && mode != kSum)
    return n.error("per_sample_weights are only defined for mode 'sum'");
  RankedTensorType weightType = typeOf(weight);
  Type element = weightType.getElementType();
  if (weightType.getRank() != 2 || !isa<FloatType>(element))
    return n.error("weight must be a 2-d floating-point tensor");
  if (typeOf(indices).getRank() != 1 || typeOf(offsets).getRank() != 1)
    return n.error("indices and offsets must be 1-d");
  int64_t rowsOfWeight = weightType.getDimSize(0), width = weightType.getDimSize(1);
  int64_t count = typeOf(indices).getDimSize(0);
  int64_t bags = typeOf(offsets).getDimSize(0) - (includeLast ? 1 : 0);
  if (bags < 0)
    return n.error("include_last_offset needs at least one offset");
  if (type.getShape() != ArrayRef<int64_t>{bags, width})
    return n.error(absl::StrCat("the output must be (", bags, ", ", width, ")"));
  if (count == 0 || bags == 0)
    return n.unimplemented("embedding_bag without indices or bags");
  if (padding < -1 || padding >= rowsOfWeight)
    return n.error(absl::StrCat("padding_idx ", padding, " is outside the weight's ",
                                rowsOfWeight, " rows"));
  if (bags > kMaxConstantTable / count)
    return n.unimplemented(absl::StrCat("embedding_bag with ", bags, " bags of ",
                                        count, " indices (at most ",
                                        kMaxConstantTable, " pairs)"));
  // (bag, index, column) triples: max mode needs them all; sum and mean
  // mask with them while they fit, and otherwise multiply by the mask.
  bool windowFits = width <= kMaxWindow / (bags * count);
  if (mode == kMax && !windowFits)
    return n.unimplemented(absl::StrCat("max-mode embedding_bag over more than ",
                                        kMaxWindow, " (bag, index, column) triples"));
  Type i64 = n.b().getI64Type();
  Type i1 = n.b().getI1Type();
  Type compute = element.isF64() ? element : n.b().getF32Type();
  auto pairs = RankedTensorType::get({bags, count}, i1);

  // offset2bag[p] = #{b < B : offsets[b] <= p} - 1.
  Value offsets64 = offsets;
  if (!typeOf(offsets).getElementType().isInteger(64))
    offsets64 = pointwise(n, typeOf(offsets).clone(i64), "copy", offsets);
  Value starts = viewValue(n, slice1d(n, offsets64, 0, bags), {bags, 1});
  Value position = gridConstant<int64_t>(n, 1, count, n.b().getI64Type(),
                                         [](int64_t, int64_t j) { return j; });
  Value started = pointwise(n, pairs, "le", {starts, position});
  Value startedCount = n.b().create<aten::SumOp>(
      n.loc(), RankedTensorType::get({count}, i64),
      pointwise(n, pairs.clone(i64), "copy", started),
      n.b().getDenseI64ArrayAttr({0}), n.b().getBoolAttr(false));
  Value offset2bag = n.b().create<aten::SubOp>(
      n.loc(), typeOf(startedCount), startedCount, n.constant(i64, 1.0),
      n.b().getF64FloatAttr(1.0));

  // member[b, p]: index p counts in bag b.
  Value bagIds = gridConstant<int64_t>(n, bags, 1, n.b().getI64Type(),
                                       [](int64_t i, int64_t) { return i; });
  Value member = pointwise(n, pairs, "eq",
                           {viewValue(n, offset2bag, {1, count}), bagIds});
  Value indices64 = indices;
  if (!typeOf(indices).getElementType().isInteger(64))
    indices64 = pointwise(n, typeOf(indices).clone(i64), "copy", indices);
  if (padding >= 0)
    member = pointwise(
        n, pairs, "logical_and",
        {member, pointwise(n, RankedTensorType::get({1, count}, i1), "ne",
                           {viewValue(n, indices64, {1, count}),
                            n.constant(i64, static_cast<double>(padding))})});
  Value bagSize = n.b().create<aten::SumOp>(
      n.loc(), RankedTensorType::get({bags}, i64),
      pointwise(n, pairs.clone(i64), "copy", member),
      n.b().getDenseI64ArrayAttr({1}), n.b().getBoolAttr(false));

  // The rows each index reads, in the compute type.
  Value rows = n.b().create<aten::IndexSelectOp>(
      n.loc(), RankedTensorType::get({count, width}, element), weight, indices64,
      n.b().getI64IntegerAttr(0));
  if (element != compute)
    rows = pointwise(n, RankedTensorType::get({count, width}, compute), "copy", rows);
  auto outCompute = RankedTensorType::get({bags, width}, compute);
  Value output, maxIndices;
  if (mode == kMax) {
    auto window = RankedTensorType::get({bags, count, width}, compute);
    Value masked = pointwise(
        n, window, "where",
        {viewValue(n, member, {bags, count, 1}), viewValue(n, rows, {1, count, width}),
         n.constant(compute, -std::numeric_limits<double>::infinity())});
    Value top = n.b().create<aten::AmaxOp>(n.loc(), outCompute, masked,
                                           n.b().getDenseI64ArrayAttr({1}),
                                           n.b().getBoolAttr(false));
    Value where = n.b().create<aten::ArgReduceOp>(
        n.loc(), RankedTensorType::get({bags, width}, i64), masked,
        n.b().getI64IntegerAttr(1), n.b().getBoolAttr(false), n.b().getBoolAttr(true));
    Value rowOf = n.b().create<aten::IndexSelectOp>(
        n.loc(), RankedTensorType::get({bags * width}, i64), indices64,
        viewValue(n, where, {bags * width}), n.b().getI64IntegerAttr(0));
    Value filled = pointwise(n, RankedTensorType::get({bags, 1}, i1), "gt",
                             {viewValue(n, bagSize, {bags, 1}), n.constant(i64, 0.0)});
    output = pointwise(n, outCompute, "where", {filled, top, n.constant(compute, 0.0)});
    maxIndices = pointwise(n, RankedTensorType::get({bags, width}, i64), "where",
                           {filled, viewValue(n, rowOf, {bags, width}), n.constant(i64, 0.0)});
  } else {
    if (perSample && typeOf(*perSample).getShape() != ArrayRef<int64_t>{count})
      return n.error("per_sample_weights must have one entry per index");
    if (windowFits) {
      // Each bag sums its own rows only (a NaN or inf in another bag's row,
      // or in a padding row, stays out, as in eager).
      auto window = RankedTensorType::get({bags, count, width}, compute);
      Value weighted = rows;
      if (perSample)
        weighted = n.b().create<aten::MulOp>(
            n.loc(), typeOf(rows), rows,
            viewValue(n, convertElements(n, *perSample, compute), {count, 1}));
      Value masked = pointwise(n, window, "where",
                               {viewValue(n, member, {bags, count, 1}),
                                viewValue(n, weighted, {1, count, width}),
                                n.constant(compute, 0.0)});
      output = n.b().create<aten::SumOp>(n.loc(), outCompute, masked,
                                         n.b().getDenseI64ArrayAttr({1}),
                                         n.b().getBoolAttr(false));
    } else {
      // Past the window's bound, one mm with the mask: a non-finite row
      // then reaches every bag (0 * inf).
      Value weights = pointwise(n, pairs.clone(compute), "copy", member);
      if (perSample)
        weights = n.b().create<aten::MulOp>(n.loc(), typeOf(weights), weights,
                                            viewValue(n, *perSample, {1, count}));
      output = n.b().create<aten::MmOp>(n.loc(), outCompute, weights, rows);
    }
    if (mode == kMean) {
      Value divisor = pointwise(n, RankedTensorType::get({bags, 1}, compute), "maximum",
                                {viewValue(n, bagSize, {bags, 1}), n.constant(compute, 1.0)});
      output = n.b().create<aten::DivOp>(n.loc(), outCompute, output, divisor);
    }
  }
  if (compute != element)
    output = pointwise(n, type, "copy", output);

  // The other results, as eager's CPU kernel gives them, in their declared
  // integer type (the indices').
  bool emptyOffset2bag = mode == kSum && padding < 0;
  RETURN_IF_ERROR(expectShape(n, 1, {emptyOffset2bag ? 0 : count}));
  // bag_size (and max_indices outside max mode) have B entries, or with
  // include_last_offset B + 1 where PyTorch's meta function says so (its
  // CPU kernel disagrees in places); the entry past the last bag is 0.
  auto perBag = [&](int i, Value v) -> absl::StatusOr<Value> {
    ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(i));
    if (declared.getRank() != 1 ||
        (declared.getDimSize(0) != bags && (!includeLast || declared.getDimSize(0) != bags + 1)))
      return n.error(absl::StrCat("result ", i, " must have ", bags, " entries"));
    if (declared.getDimSize(0) == bags)
      return v;
    return n.b()
        .create<aten::PadOp>(n.loc(), typeOf(v).clone({bags + 1}), v,
                             n.b().getDenseI64ArrayAttr({0}), n.b().getDenseI64ArrayAttr({1}),
                             n.b().getF64FloatAttr(0.0))
        .getResult();
  };
  Value zeros = n.constant(i64, 0.0, {bags});
  ASSIGN_OR_RETURN(Value sizes, perBag(2, mode == kSum ? zeros : bagSize));
  Value maxIndicesOut = maxIndices;
  if (mode == kMax) {
    RETURN_IF_ERROR(expectShape(n, 3, {bags, width}));
  } else {
    ASSIGN_OR_RETURN(maxIndicesOut, perBag(3, mode == kMean ? bagSize : zeros));
  }
  Values results = {output};
  SmallVector<Value> others = {offset2bag, sizes, maxIndicesOut};
  for (auto [i, v] : llvm::enumerate(others)) {
    ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(static_cast<int>(i) + 1));
    if (!isa<IntegerType>(declared.getElementType()))
      return n.error(absl::StrCat("result ", i + 1, " must be an integer tensor"));
    if (declared.getNumElements() == 0)
      results.push_back(emptyTensor(n.b(), n.loc(), declared));
    else
      results.push_back(typeOf(v) == declared ? v : pointwise(n, declared, "copy", v));
  }
  return results;
}

} // namespace

void addEmbeddingBagHandler(OpHandlerTable &t) {
  t["aten._embedding_bag.default"] = embeddingBag;
  t["aten._embedding_bag_forward_only.default"] = embeddingBag;
}

} // namespace kiln
