//===- LinalgHandlers.cpp - determinants through an unrolled LU -----------===//
//
// This file implements the importer handlers of aten._linalg_det and
// aten._linalg_slogdet (torch.linalg.det, slogdet, logdet): an LU
// factorisation with partial pivoting, as LAPACK's getrf defines it, of
// the (..., n, n) input as one (B, n, n) batch: one aten.lu_factor, which
// kiln-decompose-aten unrolls over the n columns
// (lib/Transforms/DecomposeLinalg.cpp), then the determinant from U's
// diagonal and the permutation's sign.
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

/// The largest n the unrolled factorisation takes.
constexpr int64_t kMaxOrder = aten::kMaxLuOrder;

struct Factorisation {
  Value lu;      ///< (B, n, n): L below the diagonal (unit), U on and above.
  Value pivots;  ///< (B, n) i64, 0-based rows swapped with each step's row.
  Value odd;     ///< (B, 1) i1: an odd number of row swaps.
  Value diagonal; ///< (B, n): U's diagonal.
};

/// getrf on `a` (B, n, n): one aten.lu_factor (kiln-decompose-aten unrolls
/// it, lib/Transforms/DecomposeLinalg.cpp), and U's diagonal.
Factorisation factorise(NodeImporter &n, Value a, int64_t batch, int64_t order) {
  RankedTensorType type = typeOf(a);
  auto lu = n.b().create<aten::LuFactorOp>(
      n.loc(),
      TypeRange{type, RankedTensorType::get({batch, order}, n.b().getI64Type()),
                RankedTensorType::get({batch, 1}, n.b().getI1Type())},
      a);
  Value diagonalIndex =
      tableConstant<int64_t>(n, {order}, n.b().getI64Type(),
                             [order](int64_t i) { return i * (order + 1); });
  Value diagonal = n.b().create<aten::IndexSelectOp>(
      n.loc(), RankedTensorType::get({batch, order}, type.getElementType()),
      viewValue(n, lu.getLu(), {batch, order * order}), diagonalIndex,
      n.b().getI64IntegerAttr(1));
  return {lu.getLu(), lu.getPivots(), lu.getOdd(), diagonal};
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
