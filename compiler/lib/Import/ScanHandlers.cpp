//===- ScanHandlers.cpp - cummax, cummin and logcumsumexp -----------------===//
//
// This file implements the importer handlers of the running extrema
// aten.cummax and aten.cummin and of aten.logcumsumexp, as triangular
// reductions (the way cumsum lowers): along the scanned dim of length L, x
// is expanded to (i, j) pairs (L x L), entries with j > i are masked out,
// and reductions over j give the results. For the extrema one aten.amax
// (aten.amin) gives the values; the index is PyTorch's: the last j <= i
// holding the extremum (the scan updates on ties, `x >= best`), or once a
// NaN has been seen the last NaN so far (NaN propagates). logcumsumexp is a
// log-sum-exp over each masked row, shifted by the row's maximum.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

Value view(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  return n.b().create<aten::ViewOp>(n.loc(), typeOf(v).clone(shape), v);
}

/// `shape` with dim `d` replaced by `a, b`.
SmallVector<int64_t> splitDim(ArrayRef<int64_t> shape, int64_t d, int64_t a,
                              int64_t b) {
  SmallVector<int64_t> out(shape.take_front(d));
  out.append({a, b});
  out.append(shape.begin() + d + 1, shape.end());
  return out;
}

/// cummax (`max`) or cummin along `dim`: (values, i64 indices).
absl::StatusOr<Values> cumExtremum(NodeImporter &n, bool max) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType indicesType, n.resultType(1));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  if (typeOf(self).getShape() != type.getShape() ||
      indicesType.getShape() != type.getShape())
    return n.error("values and indices must have the input's shape");
  if (!indicesType.getElementType().isInteger(64))
    return n.error("indices must be i64");
  Type element = type.getElementType();
  // A 0-d input scans a single element: work on it as shape [1].
  SmallVector<int64_t> shape(type.getShape());
  if (shape.empty()) {
    shape.push_back(1);
    self = view(n, self, shape);
  }
  int64_t length = shape[dim];
  // The scan builds a length x length mask.
  if (length > 4096)
    return n.unimplemented(absl::StrCat(
        "cummax/cummin along a dim of ", length, " elements (at most 4096)"));
  int64_t trailing = static_cast<int64_t>(shape.size()) - dim - 1;
  auto pairType =
      RankedTensorType::get(splitDim(shape, dim, length, length), element);
  auto boolPair = pairType.clone(n.b().getI1Type());
  auto i64Pair = pairType.clone(n.b().getI64Type());

  // xj[.., i, j, ..] = x[.., j, ..] and xi[.., i, j, ..] = x[.., i, ..].
  Value xj = n.b().create<aten::ExpandOp>(
      n.loc(), pairType, view(n, self, splitDim(shape, dim, 1, length)));
  Value xi = view(n, self, splitDim(shape, dim, length, 1));
  Value seen =
      gridConstant<bool>(n, length, length, n.b().getI1Type(),
                         [](int64_t i, int64_t j) { return j <= i; }, trailing);
  // Unseen entries read x[i], which is always in the window.
  Value window = pointwise(n, pairType, "where", {seen, xj, xi});
  auto reduced = n.b().getDenseI64ArrayAttr({dim + 1});
  auto valuesType = type.clone(shape);
  auto keepdim = n.b().getBoolAttr(false);
  Value values = max ? n.b()
                           .create<aten::AmaxOp>(n.loc(), valuesType, window,
                                                 reduced, keepdim)
                           .getResult()
                     : n.b()
                           .create<aten::AminOp>(n.loc(), valuesType, window,
                                                 reduced, keepdim)
                           .getResult();

  // Last seen j whose x equals the extremum (or is NaN when it is NaN).
  Value best = view(n, values, splitDim(shape, dim, length, 1));
  Value hit = pointwise(n, boolPair, "eq", {xj, best});
  if (isa<FloatType>(element)) {
    auto boolBest = typeOf(best).clone(n.b().getI1Type());
    Value bothNan = pointwise(n, boolPair, "logical_and",
                              {pointwise(n, boolPair, "isnan", {xj}),
                               pointwise(n, boolBest, "isnan", {best})});
    hit = pointwise(n, boolPair, "logical_or", {hit, bothNan});
  }
  hit = pointwise(n, boolPair, "logical_and", {hit, seen});
  Value j = gridConstant<int64_t>(n, 1, length, n.b().getI64Type(),
                                  [](int64_t, int64_t j) { return j; }, trailing);
  Value none = n.constant(n.b().getI64Type(), -1.0);
  Value candidates = pointwise(n, i64Pair, "where", {hit, j, none});
  Value indices = n.b().create<aten::AmaxOp>(n.loc(), indicesType.clone(shape),
                                             candidates, reduced,
                                             n.b().getBoolAttr(false));
  if (type.getRank() == 0)
    return Values{view(n, values, {}), view(n, indices, {})};
  return Values{values, indices};
}

/// logcumsumexp along `dim`: out[i] = m + log(sum_{j <= i} exp(x[j] - m))
/// with m the running maximum (0 where it is infinite, so that all -inf
/// gives -inf and +inf gives +inf; NaN propagates). f32 and f64 compute in
/// f64, f16 and bf16 in f32.
absl::StatusOr<Values> logCumSumExp(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  Type element = type.getElementType();
  if (!isa<FloatType>(element))
    return n.error("logcumsumexp needs a floating-point result");
  if (typeOf(self).getShape() != type.getShape())
    return n.error("the result must have the input's shape");
  SmallVector<int64_t> shape(type.getShape());
  if (shape.empty())
    shape.push_back(1);
  ASSIGN_OR_RETURN(int64_t dim,
                   n.normalizeDim(raw, static_cast<int64_t>(shape.size())));
  int64_t length = shape[dim];
  if (length > 4096)
    return n.unimplemented(absl::StrCat(
        "logcumsumexp along a dim of ", length, " elements (at most 4096)"));
  // Eager's CPU kernel accumulates f32 in double; f16 and bf16 in f32.
  Type compute = element.isF32() || element.isF64() ? n.b().getF64Type()
                                                    : n.b().getF32Type();
  Value x = view(n, self, shape);
  if (typeOf(x).getElementType() != compute)
    x = pointwise(n, typeOf(x).clone(compute), "copy", x);
  int64_t trailing = static_cast<int64_t>(shape.size()) - dim - 1;
  auto pairType =
      RankedTensorType::get(splitDim(shape, dim, length, length), compute);
  Value xj = n.b().create<aten::ExpandOp>(
      n.loc(), pairType, view(n, x, splitDim(shape, dim, 1, length)));
  Value seen =
      gridConstant<bool>(n, length, length, n.b().getI1Type(),
                         [](int64_t i, int64_t j) { return j <= i; }, trailing);
  Value window =
      pointwise(n, pairType, "where",
                {seen, xj,
                 n.constant(compute, -std::numeric_limits<double>::infinity())});
  auto reduced = n.b().getDenseI64ArrayAttr({dim + 1});
  auto keptType = pairType.clone(splitDim(shape, dim, length, 1));
  Value top = n.b().create<aten::AmaxOp>(n.loc(), keptType, window, reduced,
                                         n.b().getBoolAttr(true));
  Value shift = pointwise(
      n, keptType, "where",
      {pointwise(n, keptType.clone(n.b().getI1Type()), "isinf", top),
       n.constant(compute, 0.0), top});
  Value centred = n.b().create<aten::SubOp>(n.loc(), pairType, window, shift,
                                            n.b().getF64FloatAttr(1.0));
  Value terms = n.b().create<aten::ExpOp>(n.loc(), pairType, centred);
  Value sums = n.b().create<aten::SumOp>(n.loc(), keptType, terms, reduced,
                                         n.b().getBoolAttr(true));
  Value logs = pointwise(n, keptType, "log", sums);
  Value out = n.b().create<aten::AddOp>(n.loc(), keptType, logs, shift,
                                        n.b().getF64FloatAttr(1.0));
  out = view(n, out, type.getShape());
  if (compute != element)
    out = pointwise(n, type, "copy", out);
  return Values{out};
}

} // namespace

void addScanHandlers(OpHandlerTable &t) {
  t["aten.cummax.default"] = [](NodeImporter &n) {
    return cumExtremum(n, true);
  };
  t["aten.cummin.default"] = [](NodeImporter &n) {
    return cumExtremum(n, false);
  };
  t["aten.logcumsumexp.default"] = logCumSumExp;
}

} // namespace kiln
