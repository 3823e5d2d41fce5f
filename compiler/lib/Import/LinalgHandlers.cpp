//===- LinalgHandlers.cpp - determinants through an unrolled LU -----------===//
//
// This file implements the importer handlers of aten._linalg_det and
// aten._linalg_slogdet (torch.linalg.det, slogdet, logdet): an LU
// factorisation with partial pivoting, as LAPACK's getrf defines it,
// unrolled over the n columns of the (..., n, n) input at import time.
// Step k picks the first row at or below k whose column-k entry has the
// largest magnitude, swaps it with row k, stores the multipliers below the
// pivot (0 for a zero pivot: the matrix is singular, as getrf's info says)
// and updates the trailing block. Batches run side by side.
//
// Like eager, the factorisation is of A's transpose (eager hands A's
// row-major storage to column-major LAPACK): the LU and pivots results are
// lu_factor(A.mT)'s, with 1-based int32 pivots. det = prod(diag(U)) times
// the permutation's sign; slogdet gives sign(det) and sum(log|diag(U)|).
// Rounding differs from LAPACK's blocked updates in the last bits.
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

/// The largest n the unrolled factorisation takes (n steps of ~20 ops).
constexpr int64_t kMaxOrder = 64;

struct Factorisation {
  Value lu;      ///< (B, n, n): L below the diagonal (unit), U on and above.
  Value pivots;  ///< (B, n) i64, 0-based rows swapped with each step's row.
  Value odd;     ///< (B, 1) i1: an odd number of row swaps.
  Value diagonal; ///< (B, n): U's diagonal.
};

/// getrf on `a` (B, n, n), unrolled.
Factorisation factorise(NodeImporter &n, Value a, int64_t batch, int64_t order) {
  RankedTensorType type = typeOf(a);
  Type element = type.getElementType();
  Type i64 = n.b().getI64Type(), i1 = n.b().getI1Type();
  auto pairMask = RankedTensorType::get({1, order, order}, i1);
  auto position = [](int64_t i) { return i; };
  Value rowIndex = tableConstant<int64_t>(n, {1, order, 1}, i64, position);
  Value colIndex = tableConstant<int64_t>(n, {1, 1, order}, i64, position);
  auto columnType = RankedTensorType::get({batch, order, 1}, element);
  auto rowType = RankedTensorType::get({batch, 1, order}, element);
  auto b11 = RankedTensorType::get({batch, 1, 1}, i64);
  SmallVector<Value> pivots;
  Value odd = n.constant(i1, 0.0, {batch, 1});
  auto slice = [&](Value v, RankedTensorType to, ArrayRef<int64_t> offsets) -> Value {
    return n.b().create<aten::SliceOp>(n.loc(), to, v, n.b().getDenseI64ArrayAttr(offsets),
                                       n.b().getDenseI64ArrayAttr({1, 1, 1}));
  };
  auto compare = [&](RankedTensorType to, StringRef fn, Value x, Value y) {
    return pointwise(n, to, fn, {x, y});
  };
  for (int64_t k = 0; k < order; ++k) {
    Value kConst = n.constant(i64, static_cast<double>(k));
    // The pivot: the first largest |a[i, k]| with i >= k.
    Value column = slice(a, columnType, {0, 0, k});
    Value magnitude = pointwise(n, columnType, "abs", column);
    Value eligible = compare(RankedTensorType::get({1, order, 1}, i1), "ge", rowIndex, kConst);
    magnitude = pointwise(n, columnType, "where",
                          {eligible, magnitude, n.constant(element, -1.0)});
    Value p = n.b().create<aten::ArgReduceOp>(n.loc(), b11, magnitude,
                                              n.b().getI64IntegerAttr(1),
                                              n.b().getBoolAttr(true), n.b().getBoolAttr(true));
    pivots.push_back(viewValue(n, p, {batch, 1}));
    odd = pointwise(n, typeOf(odd), "logical_xor",
                    {odd, compare(RankedTensorType::get({batch, 1}, i1), "ne",
                                  viewValue(n, p, {batch, 1}), kConst)});
    // Swap rows k and p.
    Value rowK = slice(a, rowType, {0, k, 0});
    Value rowP = n.b().create<aten::GatherOp>(
        n.loc(), rowType, a,
        n.b().create<aten::ExpandOp>(n.loc(), RankedTensorType::get({batch, 1, order}, i64), p),
        n.b().getI64IntegerAttr(1));
    Value atK = compare(RankedTensorType::get({1, order, 1}, i1), "eq", rowIndex, kConst);
    Value atP = compare(RankedTensorType::get({batch, order, 1}, i1), "eq", rowIndex, p);
    a = pointwise(n, type, "where", {atP, rowK, a});
    a = pointwise(n, type, "where", {atK, rowP, a});
    // Multipliers below the pivot (0 when the pivot is 0), then the
    // trailing update a[i, j] -= m[i] * a[k, j] for i, j > k.
    Value pivot = slice(a, RankedTensorType::get({batch, 1, 1}, element), {0, k, k});
    Value pivotRow = slice(a, rowType, {0, k, 0});
    Value below = compare(RankedTensorType::get({1, order, 1}, i1), "gt", rowIndex, kConst);
    Value zeroPivot = compare(RankedTensorType::get({batch, 1, 1}, i1), "eq", pivot,
                              n.constant(element, 0.0));
    Value ratio = n.b().create<aten::DivOp>(n.loc(), columnType,
                                            slice(a, columnType, {0, 0, k}), pivot);
    Value multiplier = pointwise(n, columnType, "where",
                                 {zeroPivot, n.constant(element, 0.0), ratio});
    multiplier = pointwise(n, columnType, "where",
                           {below, multiplier, n.constant(element, 0.0)});
    Value update = n.b().create<aten::MulOp>(n.loc(), type, multiplier, pivotRow);
    Value right = compare(RankedTensorType::get({1, 1, order}, i1), "gt", colIndex, kConst);
    Value trailing = pointwise(n, pairMask, "logical_and", {below, right});
    Value updated = n.b().create<aten::SubOp>(n.loc(), type, a, update,
                                              n.b().getF64FloatAttr(1.0));
    a = pointwise(n, type, "where", {trailing, updated, a});
    Value atColumn = compare(RankedTensorType::get({1, 1, order}, i1), "eq", colIndex, kConst);
    Value store = pointwise(n, pairMask, "logical_and", {below, atColumn});
    a = pointwise(n, type, "where", {store, multiplier, a});
  }
  Value pivotTable = n.b().create<aten::CatOp>(
      n.loc(), RankedTensorType::get({batch, order}, i64), pivots, n.b().getI64IntegerAttr(1));
  Value diagonalIndex =
      tableConstant<int64_t>(n, {order}, n.b().getI64Type(),
                             [order](int64_t i) { return i * (order + 1); });
  Value diagonal = n.b().create<aten::IndexSelectOp>(
      n.loc(), RankedTensorType::get({batch, order}, element),
      viewValue(n, a, {batch, order * order}), diagonalIndex, n.b().getI64IntegerAttr(1));
  return {a, pivotTable, odd, diagonal};
}

/// The (..., n, n) input as (B, n, n) of its transpose; error unless square
/// floating point of order at most kMaxOrder.
absl::StatusOr<std::pair<Value, int64_t>> transposedBatch(NodeImporter &n, Value a) {
  RankedTensorType type = typeOf(a);
  int64_t rank = type.getRank();
  if (rank < 2 || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return n.error("the input must be a batch of square matrices (..., n, n)");
  Type element = type.getElementType();
  if (!element.isF32() && !element.isF64())
    return n.error("determinants are defined for f32 and f64 (LAPACK's types)");
  int64_t order = type.getDimSize(rank - 1);
  if (order > kMaxOrder)
    return n.unimplemented(absl::StrCat("a determinant of order ", order,
                                        " (the unrolled factorisation takes at most ",
                                        kMaxOrder, ")"));
  if (order == 0)
    return n.unimplemented("a determinant of order 0");
  int64_t batch = type.getNumElements() / (order * order);
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[rank - 1], perm[rank - 2]);
  Value t = permuteValue(n, a, perm);
  return std::make_pair(viewValue(n, t, {batch, order, order}), order);
}

/// The LU and 1-based int32 pivots results, in their declared shapes.
absl::StatusOr<Values> luResults(NodeImporter &n, const Factorisation &f, int luIndex) {
  ASSIGN_OR_RETURN(RankedTensorType luType, n.resultType(luIndex));
  ASSIGN_OR_RETURN(RankedTensorType pivotsType, n.resultType(luIndex + 1));
  if (luType.getNumElements() != typeOf(f.lu).getNumElements() ||
      pivotsType.getNumElements() != typeOf(f.pivots).getNumElements())
    return n.error("the LU and pivots results are declared with other sizes");
  Value oneBased = n.b().create<aten::AddOp>(n.loc(), typeOf(f.pivots), f.pivots,
                                             n.constant(n.b().getI64Type(), 1.0),
                                             n.b().getF64FloatAttr(1.0));
  Value pivots = pointwise(n, typeOf(oneBased).clone(pivotsType.getElementType()), "copy",
                           oneBased);
  return Values{viewValue(n, f.lu, luType.getShape()),
                viewValue(n, pivots, pivotsType.getShape())};
}

/// The factorisation of argument A's transpose, batched, and the (B, 1)
/// type of per-matrix results.
struct Factorised {
  Factorisation f;
  RankedTensorType perBatch;
};

absl::StatusOr<Factorised> factoriseArgument(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  ASSIGN_OR_RETURN(auto work, transposedBatch(n, a));
  auto [matrices, order] = work;
  int64_t batch = typeOf(matrices).getDimSize(0);
  return Factorised{factorise(n, matrices, batch, order),
                    RankedTensorType::get({batch, 1}, typeOf(matrices).getElementType())};
}

/// `value` negated where the factorisation swapped rows an odd number of
/// times.
Value withPermutationSign(NodeImporter &n, const Factorised &fz, Value value) {
  Value negated = n.b().create<aten::NegOp>(n.loc(), fz.perBatch, value);
  return pointwise(n, fz.perBatch, "where", {fz.f.odd, negated, value});
}

absl::StatusOr<Values> det(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(Factorised fz, factoriseArgument(n));
  Value product = n.b().create<aten::ProdOp>(n.loc(), fz.perBatch, fz.f.diagonal,
                                             n.b().getDenseI64ArrayAttr({1}),
                                             n.b().getBoolAttr(true));
  ASSIGN_OR_RETURN(Values lu, luResults(n, fz.f, 1));
  return Values{viewValue(n, withPermutationSign(n, fz, product), type.getShape()), lu[0],
                lu[1]};
}

absl::StatusOr<Values> slogdet(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType signType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType logType, n.resultType(1));
  ASSIGN_OR_RETURN(Factorised fz, factoriseArgument(n));
  auto keep = n.b().getBoolAttr(true);
  auto lastDim = n.b().getDenseI64ArrayAttr({1});
  Value diagonal = fz.f.diagonal;
  Value signs = pointwise(n, typeOf(diagonal), "sign", diagonal);
  Value sign = withPermutationSign(
      n, fz, n.b().create<aten::ProdOp>(n.loc(), fz.perBatch, signs, lastDim, keep));
  Value logs = pointwise(n, typeOf(diagonal), "log",
                         pointwise(n, typeOf(diagonal), "abs", diagonal));
  Value logabs = n.b().create<aten::SumOp>(n.loc(), fz.perBatch, logs, lastDim, keep);
  ASSIGN_OR_RETURN(Values lu, luResults(n, fz.f, 2));
  return Values{viewValue(n, sign, signType.getShape()),
                viewValue(n, logabs, logType.getShape()), lu[0], lu[1]};
}

} // namespace

void addLinalgHandlers(OpHandlerTable &t) {
  t["aten._linalg_det.default"] = det;
  t["aten._linalg_slogdet.default"] = slogdet;
}

} // namespace kiln
