//===- LinalgHandlers.cpp - factorisations, solves and decompositions -----===//
//
// This file implements the importer handlers of the dense linear algebra
// torch.linalg decomposes to: aten._linalg_det and aten._linalg_slogdet
// (det, slogdet, logdet), aten._linalg_solve_ex and aten.linalg_inv_ex
// (solve, inv) and aten.linalg_cholesky_ex (cholesky). Each treats the
// (..., n, n) input as one (N, n, n) batch; kiln-convert-aten-to-linalg
// writes the factorisations as LAPACK's unblocked routines in scalar loops
// (lib/Conversion/AtenToLinalg/Factorisations.cpp), so n is at most 512.
//
// - det and slogdet: one aten.lu_factor, LAPACK's getrf with partial
//   pivoting. Like eager, the factorisation is of A's transpose (eager
//   hands A's row-major storage to column-major LAPACK): the LU and pivots
//   results are lu_factor(A.mT)'s, with 1-based int32 pivots.
//   det = prod(diag(U)) times the permutation's sign; slogdet gives
//   sign(det) and sum(log|diag(U)|).
// - solve and inv: one aten.linalg_solve (getrf + getrs) of A, or of A.mT for left=False, against B (the identity for
//   inv) over the broadcast batch. The LU, pivots and info results are
//   eager's (as the registry checks against it): lu_factor(A)'s, and the
//   1-based column of U's first zero pivot (0 for none), from a second
//   aten.lu_factor that is dead code (canonicalization removes it) unless
//   something reads them.
// - solve_triangular, the legacy triangular_solve, cholesky_solve and
//   cholesky_inverse: aten.triangular_solve (one, or a forward then a back
//   substitution against the factor and its transpose; the identity's for
//   the inverse).
// - lu_factor: the same aten.lu_factor of A, its results as solve's.
// - linalg_lu and lu_unpack: P from aten.lu_permutation (the row order
//   getrf's swaps leave) as a one-hot matrix, L and U the packed LU's
//   triangles; lu_solve: B's rows gathered in P's order and two triangular
//   solves (or, for A^T X = B, the two against the LU's transpose and a
//   product with P).
// - qr: one aten.qr (geqrf + orgqr with LAPACK's reflector conventions,
//   so R's signs are eager's); mode "r" gives an empty Q. geqrf,
//   householder_product and ormqr: aten.geqrf, aten.householder_product
//   and aten.ormqr (from the left; the right-hand forms on C^T).
// - eigh and svd: aten.eigh (tridiagonal QL) and aten.svd (one-sided
//   Jacobi), or aten.eigvalsh and aten.svdvals when no vectors are
//   computed or read (the client leaves unread results out). The vectors'
//   signs are the algorithm's choice, not LAPACK's; PyTorch leaves them
//   unspecified.
// - cholesky: one aten.cholesky of A's lower triangle (of A.mT's for
//   upper=True, whose factor is then transposed), info as potrf's.
// - linalg_eig (complex results) and the ops on complex matrices are in
//   ComplexLinalgHandlers.cpp; the builders both files use are declared in
//   LinalgShared.h.
// - matrix_exp: one aten.matrix_exp (scaling and squaring,
//   lib/Conversion/AtenToLinalg/MatrixExp.cpp); no matrices, or matrices
//   of order 0, give an empty result.
//
// Rounding differs from LAPACK's blocked updates in the last bits.
//
//===----------------------------------------------------------------------===//
#include "ComplexPairs.h"
#include "LinalgShared.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Traits.h"

#include <optional>

using namespace mlir;

namespace kiln::linalg {

/// getrf on `a` (B, m, n), or zgetf2 on complex pairs (B, m, n, 2): one
/// aten.lu_factor, and U's diagonal ((B, k), or (B, k, 2) pairs).
Factorisation factorise(NodeImporter &n, Value a) {
  RankedTensorType type = typeOf(a);
  const int64_t batch = type.getDimSize(0), rows = type.getDimSize(1), cols = type.getDimSize(2);
  const int64_t steps = std::min(rows, cols);
  const bool pairs = type.getRank() == 4;
  auto lu = n.b().create<aten::LuFactorOp>(
      n.loc(),
      TypeRange{type, RankedTensorType::get({batch, steps}, n.b().getI64Type()),
                RankedTensorType::get({batch, 1}, n.b().getI1Type())},
      a);
  Value diagonalIndex =
      tableConstant<int64_t>(n, {steps}, n.b().getI64Type(),
                             [cols](int64_t i) { return i * (cols + 1); });
  SmallVector<int64_t> entries{batch, rows * cols}, diagonalShape{batch, steps};
  if (pairs) {
    entries.push_back(2);
    diagonalShape.push_back(2);
  }
  Value diagonal = n.b().create<aten::IndexSelectOp>(
      n.loc(), RankedTensorType::get(diagonalShape, type.getElementType()),
      viewValue(n, lu.getLu(), entries), diagonalIndex, n.b().getI64IntegerAttr(1));
  return {lu.getLu(), lu.getPivots(), lu.getOdd(), diagonal};
}

/// The (rows, cols) of a (..., m, n) input; error unless f32 or f64 with m
/// and n from 1 to kMaxOrder. `what` names the op's results.
absl::StatusOr<std::pair<int64_t, int64_t>> matrixSize(NodeImporter &n, Value a,
                                                       const std::string &what) {
  RankedTensorType type = typeOf(a);
  int64_t rank = type.getRank();
  if (rank < 2)
    return n.error("the input must be a batch of matrices (..., m, n)");
  Type element = type.getElementType();
  if (!element.isF32() && !element.isF64())
    return n.error(what + " are defined for f32 and f64 (LAPACK's types)");
  const int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  if (rows == 0 || cols == 0)
    return n.unimplemented(what + " of a matrix with no elements");
  if (std::max(rows, cols) > kMaxOrder)
    return n.unimplemented(absl::StrCat(what, " of a ", rows, " x ", cols,
                                        " matrix (the factorisation loops take at most ",
                                        kMaxOrder, ")"));
  return std::make_pair(rows, cols);
}

/// The order n of a (..., n, n) input, as matrixSize checks it.
absl::StatusOr<int64_t> squareOrder(NodeImporter &n, Value a, const std::string &what) {
  RankedTensorType type = typeOf(a);
  int64_t rank = type.getRank();
  if (rank < 2 || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return n.error("the input must be a batch of square matrices (..., n, n)");
  ASSIGN_OR_RETURN(auto size, matrixSize(n, a, what));
  return size.first;
}

/// `v` (..., r, c, <trailing dims>) with dims r and c swapped.
Value transposed(NodeImporter &n, Value v, int64_t trailing) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[rank - 1 - trailing], perm[rank - 2 - trailing]);
  return permuteValue(n, v, perm);
}

/// `v` (..., r, c, <trailing dims>) viewed as one (N, r, c, <trailing
/// dims>) batch.
Value flatBatch(NodeImporter &n, Value v, int64_t trailing) {
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  ArrayRef<int64_t> matrix = shape.take_back(2 + trailing);
  int64_t perBatch = 1;
  for (int64_t d : matrix)
    perBatch *= d;
  SmallVector<int64_t> flat{typeOf(v).getNumElements() / std::max<int64_t>(perBatch, 1)};
  flat.append(matrix.begin(), matrix.end());
  return viewValue(n, v, flat);
}

/// The LU and 1-based int32 pivots results, in their declared shapes (null
/// for a result the node leaves out).
absl::StatusOr<Values> luResults(NodeImporter &n, const Factorisation &f, int luIndex) {
  Values results(2, Value());
  if (!n.resultLeftOut(luIndex)) {
    ASSIGN_OR_RETURN(RankedTensorType luType, n.resultType(luIndex));
    if (luType.getNumElements() != typeOf(f.lu).getNumElements())
      return n.error("the LU result is declared with another size");
    results[0] = viewValue(n, f.lu, luType.getShape());
  }
  if (!n.resultLeftOut(luIndex + 1)) {
    ASSIGN_OR_RETURN(RankedTensorType pivotsType, n.resultType(luIndex + 1));
    if (pivotsType.getNumElements() != typeOf(f.pivots).getNumElements())
      return n.error("the pivots result is declared with another size");
    Value oneBased = n.b().create<aten::AddOp>(n.loc(), typeOf(f.pivots), f.pivots,
                                               n.constant(n.b().getI64Type(), 1.0),
                                               n.b().getF64FloatAttr(1.0));
    Value pivots = pointwise(n, typeOf(oneBased).clone(pivotsType.getElementType()), "copy",
                             oneBased);
    results[1] = viewValue(n, pivots, pivotsType.getShape());
  }
  return results;
}

/// getrf's info of `f`: the 1-based step of U's first zero pivot, 0 for
/// none, (N) i64. A complex pivot is zero where |re| + |im| is (both parts
/// 0; NaN where one is, as a real NaN pivot is not zero).
Value zeroPivotInfo(NodeImporter &n, const Factorisation &f) {
  Value diagonal = f.diagonal;
  if (typeOf(diagonal).getRank() == 3) { // complex pairs (N, n, 2)
    Value re = realPart(n, diagonal), im = imagPart(n, diagonal);
    PartMath m(n, typeOf(re));
    diagonal = m.add(m.fn("abs", re), m.fn("abs", im));
  }
  auto [batch, order] = std::make_pair(typeOf(diagonal).getDimSize(0),
                                       typeOf(diagonal).getDimSize(1));
  Type i64 = n.b().getI64Type();
  auto table = RankedTensorType::get({batch, order}, i64);
  Value zero = pointwise(n, RankedTensorType::get({batch, order}, n.b().getI1Type()), "eq",
                         {diagonal, n.constant(typeOf(diagonal).getElementType(), 0.0)});
  Value steps = tableConstant<int64_t>(n, {1, order}, i64, [](int64_t k) { return k + 1; });
  Value none = n.constant(i64, static_cast<double>(order + 1));
  Value first = n.b().create<aten::AminOp>(
      n.loc(), RankedTensorType::get({batch}, i64), pointwise(n, table, "where", {zero, steps, none}),
      n.b().getDenseI64ArrayAttr({1}), n.b().getBoolAttr(false));
  Value found = pointwise(n, RankedTensorType::get({batch}, n.b().getI1Type()), "ne",
                          {first, none});
  return pointwise(n, typeOf(first), "where", {found, first, n.constant(i64, 0.0)});
}

/// `v` in result `i`'s declared element type and shape; null when the node
/// leaves the result out.
absl::StatusOr<Value> asResult(NodeImporter &n, Value v, int i) {
  if (n.resultLeftOut(i)) // nothing reads it: it travels without a type
    return Value();
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(i));
  if (type.getNumElements() != typeOf(v).getNumElements())
    return n.error(absl::StrCat("result ", i, " is declared with another size"));
  return viewValue(n, convertElements(n, v, type.getElementType()), type.getShape());
}

/// `v` (..., last `kept` dims) expanded to the batch dims `batch` followed
/// by its last `kept` dims (leading dims of 1 added, dims of 1 broadcast);
/// `v` itself when it has that shape.
Value expandBatch(NodeImporter &n, Value v, ArrayRef<int64_t> batch, int64_t kept) {
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  SmallVector<int64_t> want(batch);
  want.append(shape.end() - kept, shape.end());
  if (shape.size() < want.size()) {
    SmallVector<int64_t> ones(want.size() - shape.size(), 1);
    ones.append(shape.begin(), shape.end());
    v = viewValue(n, v, ones);
  }
  auto to = RankedTensorType::get(want, typeOf(v).getElementType());
  if (typeOf(v) == to)
    return v;
  return n.b().create<aten::ExpandOp>(n.loc(), to, v).getResult();
}

/// One solve (aten.linalg_solve, or what `solve` builds from the flat
/// (N, n, n) and (N, n, k) batches) of a (..., n, n) against rhs
/// (..., n, k) over their broadcast batch, in that batch's shape.
absl::StatusOr<Value> solveBatch(NodeImporter &n, Value a, Value rhs,
                                 function_ref<Value(Value, Value)> solve) {
  ArrayRef<int64_t> aShape = typeOf(a).getShape(), bShape = typeOf(rhs).getShape();
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(aShape.drop_back(2), bShape.drop_back(2), batch))
    return n.error("A's and B's batch dims do not broadcast");
  Value x = expandBatch(n, rhs, batch, 2);
  SmallVector<int64_t> resultShape(typeOf(x).getShape());
  Value flatA = flatBatch(n, expandBatch(n, a, batch, 2)), flatB = flatBatch(n, x);
  Value solved =
      solve ? solve(flatA, flatB)
            : n.b().create<aten::LinalgSolveOp>(n.loc(), typeOf(flatB), flatA, flatB).getResult();
  return viewValue(n, solved, resultShape);
}

/// getrf on the (..., m, n) matrices of `a`, as one (B, m, n) batch.
Factorisation factoriseMatrices(NodeImporter &n, Value a) { return factorise(n, flatBatch(n, a)); }

/// A result of no elements of the declared type (a vector result eager
/// leaves empty without compute_v / compute_uv); null when left out.
absl::StatusOr<Value> emptyResult(NodeImporter &n, int i) {
  if (i >= n.numResults())
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has more"));
  if (n.resultLeftOut(i))
    return Value();
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(i));
  if (type.getNumElements() != 0)
    return n.error(absl::StrCat("result ", i, " is declared with elements"));
  return n.constant(type.getElementType(), 0.0, type.getShape());
}

/// `v` as result `i` declares it, or null when the node leaves it out.
absl::StatusOr<Value> readResult(NodeImporter &n, Value v, int i) {
  if (n.resultLeftOut(i))
    return Value();
  return asResult(n, v, i);
}

/// The (order, order) identity in `element`.
Value identityMatrix(NodeImporter &n, int64_t order, Type element) {
  return convertElements(
      n, tableConstant<bool>(n, {order, order}, n.b().getI1Type(),
                             [order](int64_t k) { return k % (order + 1) == 0; }),
      element);
}

/// P (B, m, m) in `element` from a row order (B, m) i64: P[perm[i], i] = 1.
Value permutationMatrix(NodeImporter &n, Value perm, Type element) {
  const int64_t batch = typeOf(perm).getDimSize(0), order = typeOf(perm).getDimSize(1);
  Value rows = viewValue(n, perm, {batch, order, 1});
  Value cols = tableConstant<int64_t>(n, {1, 1, order}, n.b().getI64Type(),
                                      [](int64_t k) { return k; });
  // [b, i, c] = (perm[i] == c): P^T.
  Value transposedP = pointwise(n, RankedTensorType::get({batch, order, order}, n.b().getI1Type()),
                                "eq", {rows, cols});
  return transposed(n, convertElements(n, transposedP, element));
}

/// The `pivot` flag and A's type of an LU node: pivoted (eager's CPU
/// kernel has no other), f32 or f64 matrices of at most kMaxOrder.
absl::Status checkPivotedLu(NodeImporter &n, Value a) {
  ASSIGN_OR_RETURN(bool pivot, n.boolAttr("pivot", true));
  if (!pivot)
    return n.error("LU without pivoting is not defined on the CPU (eager raises)");
  return matrixSize(n, a, "LU factorisations").status();
}

/// The row order (B, rows) i64 of 1-based int pivots (..., k), as getrf
/// and lu_factor give them (k = min(rows, cols) swaps; rows = k when not
/// given).
absl::StatusOr<Value> rowOrder(NodeImporter &n, Value pivots, int64_t batch, int64_t order,
                               std::optional<int64_t> rows) {
  RankedTensorType type = typeOf(pivots);
  if (!isa<IntegerType>(type.getElementType()) || type.getRank() < 1 ||
      type.getDimSize(type.getRank() - 1) != order || type.getNumElements() != batch * order)
    return n.error(absl::StrCat("the pivots must be integers, ", order,
                                " per matrix of the LU's batch"));
  Type i64 = n.b().getI64Type();
  Value flat = convertElements(n, viewValue(n, pivots, {batch, order}), i64);
  Value zeroBased = n.b().create<aten::SubOp>(n.loc(), typeOf(flat), flat, n.constant(i64, 1.0),
                                              n.b().getF64FloatAttr(1.0));
  return n.b()
      .create<aten::LuPermutationOp>(n.loc(), RankedTensorType::get({batch, rows.value_or(order)}, i64),
                                     zeroBased)
      .getResult();
}

/// legacy triangular_solve's second result: A broadcast to its declared
/// shape (null when left out), real or complex pairs alike.
absl::StatusOr<Value> clonedCoefficient(NodeImporter &n, Value a) {
  if (n.numResults() < 2)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 2"));
  if (n.resultLeftOut(1))
    return Value();
  ASSIGN_OR_RETURN(RankedTensorType coefficientType, n.resultType(1));
  if (coefficientType.getElementType() != typeOf(a).getElementType())
    return n.error("cloned_coefficient is declared with another element type");
  Value coefficient = a;
  if (coefficientType.getShape() != typeOf(a).getShape()) {
    SmallVector<int64_t> broadcast;
    if (!OpTrait::util::getBroadcastedShape(typeOf(a).getShape(), coefficientType.getShape(),
                                            broadcast) ||
        ArrayRef<int64_t>(broadcast) != coefficientType.getShape())
      return n.error("cloned_coefficient's declared shape is not A's, broadcast");
    Value ranked = a;
    if (typeOf(a).getRank() < coefficientType.getRank()) {
      SmallVector<int64_t> ones(coefficientType.getRank() - typeOf(a).getRank(), 1);
      ones.append(typeOf(a).getShape().begin(), typeOf(a).getShape().end());
      ranked = viewValue(n, a, ones);
    }
    coefficient = n.b().create<aten::ExpandOp>(n.loc(), coefficientType, ranked).getResult();
  }
  return coefficient;
}

/// X with A X = b (`direct`), or with op(A) X = b where `flip` gives
/// op(M) (M's transpose, or its conjugate transpose), for A = P L U packed
/// in `lu` (..., n, n, <trailing dims>: 1 for complex pairs) with its
/// 1-based `pivots` (..., n) from lu_factor; b is (..., n, k, <trailing
/// dims>) and the LU's batch broadcasts against b's. A X = b is X = U^-1
/// L^-1 (b's rows in P's order); op(A) X = b is X = P op(L)^-1 op(U)^-1 b.
/// In b's broadcast shape.
absl::StatusOr<Value> solveWithLu(NodeImporter &n, Value lu, Value pivots, Value b,
                                  int64_t order, bool direct, function_ref<Value(Value)> flip,
                                  int64_t trailing) {
  if (typeOf(b).getNumElements() == 0)
    return n.unimplemented("an LU solve with no right-hand side");
  ArrayRef<int64_t> luBatch = typeOf(lu).getShape().drop_back(2 + trailing);
  if (typeOf(pivots).getRank() < 1 || typeOf(pivots).getShape().drop_back() != luBatch)
    return n.error("the pivots must have the LU's batch dims");
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(luBatch, typeOf(b).getShape().drop_back(2 + trailing),
                                          batch))
    return n.error("the LU's and B's batch dims do not broadcast");
  Value flatLu = flatBatch(n, expandBatch(n, lu, batch, 2 + trailing), trailing);
  b = expandBatch(n, b, batch, 2 + trailing);
  Value flatB = flatBatch(n, b, trailing);
  RankedTensorType bType = typeOf(flatB);
  const int64_t count = bType.getDimSize(0);
  ASSIGN_OR_RETURN(Value perm, rowOrder(n, expandBatch(n, pivots, batch, 1), count, order));
  auto solve = [&](Value a, Value y, bool upper, bool unit) -> Value {
    return n.b().create<aten::TriangularSolveOp>(n.loc(), bType, a, y,
                                                 upper ? n.b().getUnitAttr() : UnitAttr(),
                                                 unit ? n.b().getUnitAttr() : UnitAttr());
  };
  Value x;
  if (direct) {
    SmallVector<int64_t> column{count, order};
    column.append(bType.getRank() - 2, 1);
    Value index = n.b().create<aten::ExpandOp>(
        n.loc(), RankedTensorType::get(bType.getShape(), n.b().getI64Type()),
        viewValue(n, perm, column));
    Value rows = n.b().create<aten::GatherOp>(n.loc(), bType, flatB, index,
                                              n.b().getI64IntegerAttr(1));
    x = solve(flatLu, solve(flatLu, rows, /*upper=*/false, /*unit=*/true), true, false);
  } else {
    Value luT = flip(flatLu);
    Value w = solve(luT, solve(luT, flatB, /*upper=*/false, /*unit=*/false), true, true);
    // P times w, whatever its trailing dims: one real bmm over (count, n, rest).
    Value rows = viewValue(n, w, {count, order, bType.getNumElements() / (count * order)});
    Value product = n.b().create<aten::BmmOp>(
        n.loc(), typeOf(rows), permutationMatrix(n, perm, bType.getElementType()), rows);
    x = viewValue(n, product, bType.getShape());
  }
  return viewValue(n, x, typeOf(b).getShape());
}

/// linalg_cholesky_ex's (L, info) for `a` (..., n, n, <trailing dims>: 1
/// for complex pairs): one aten.cholesky of a's lower triangle, or for
/// `upper` of flip(a)'s (flip the transpose, or the conjugate transpose),
/// whose factor is flipped back.
absl::StatusOr<Values> choleskyResults(NodeImporter &n, Value a, bool upper,
                                       function_ref<Value(Value)> flip, int64_t trailing) {
  Value batch = flatBatch(n, upper ? flip(a) : a, trailing);
  auto op = n.b().create<aten::CholeskyOp>(
      n.loc(),
      TypeRange{typeOf(batch),
                RankedTensorType::get({typeOf(batch).getDimSize(0), 1}, n.b().getI64Type())},
      batch);
  Value l = viewValue(n, op.getL(), typeOf(a).getShape());
  ASSIGN_OR_RETURN(Value factor, asResult(n, upper ? flip(l) : l, 0));
  ASSIGN_OR_RETURN(Value info, asResult(n, op.getInfo(), 1));
  return Values{factor, info};
}

/// lu_factor's LU, 1-based pivots and info for the flat (B, m, n) batch
/// (or complex pairs (B, m, n, 2)), as results `first` to first + 2
/// declare them (null where the node leaves one out).
absl::StatusOr<Values> factorisationResults(NodeImporter &n, Value batch, int first) {
  if (n.resultLeftOut(first) && n.resultLeftOut(first + 1) && n.resultLeftOut(first + 2))
    return Values(3, Value()); // nothing reads them
  Factorisation f = factorise(n, batch);
  ASSIGN_OR_RETURN(Values lu, luResults(n, f, first));
  ASSIGN_OR_RETURN(Value info, asResult(n, zeroPivotInfo(n, f), first + 2));
  return Values{lu[0], lu[1], info};
}

namespace {

/// The real packed (B, m, n) LU unpacked, k = min(m, n): L (B, m, k), lower
/// trapezoidal with `diagonal` on its diagonal, from its first k columns;
/// U (B, k, n), upper trapezoidal, from its first k rows.
std::pair<Value, Value> unpackRealFactors(NodeImporter &n, Value lu, double diagonal) {
  RankedTensorType type = typeOf(lu);
  const int64_t rows = type.getDimSize(1), cols = type.getDimSize(2);
  const int64_t steps = std::min(rows, cols);
  Type i1 = n.b().getI1Type(), element = type.getElementType();
  auto mask = [&](int64_t r, int64_t c, function_ref<bool(int64_t, int64_t)> keep) {
    return gridConstant<bool>(n, r, c, i1, keep);
  };
  Value zero = n.constant(element, 0.0), one = n.constant(element, diagonal);
  Value left = cols == steps ? lu : sliceAlong(n, lu, 2, 0, steps);
  Value top = rows == steps ? lu : sliceAlong(n, lu, 1, 0, steps);
  Value strictlyLower = pointwise(n, typeOf(left), "where",
                                  {mask(rows, steps, [](int64_t i, int64_t j) { return i > j; }), left, zero});
  Value l = pointwise(n, typeOf(left), "where",
                      {mask(rows, steps, [](int64_t i, int64_t j) { return i == j; }), one, strictlyLower});
  Value u = pointwise(n, typeOf(top), "where",
                      {mask(steps, cols, [](int64_t i, int64_t j) { return i <= j; }), top, zero});
  return {l, u};
}

} // namespace

/// The packed (B, m, n) LU unpacked: L unit lower trapezoidal, U upper
/// trapezoidal; complex pairs (B, m, n, 2) part by part (L's imaginary
/// part has a zero diagonal).
std::pair<Value, Value> unpackFactors(NodeImporter &n, Value lu) {
  if (typeOf(lu).getRank() == 3)
    return unpackRealFactors(n, lu, 1.0);
  auto [lRe, uRe] = unpackRealFactors(n, realPart(n, lu), 1.0);
  auto [lIm, uIm] = unpackRealFactors(n, imagPart(n, lu), 0.0);
  return {pack(n, lRe, lIm), pack(n, uRe, uIm)};
}

/// (P, L, U) as results 0 to 2 from the flat packed LU `lu` (B, m, n), or
/// complex pairs (B, m, n, 2), and its row order `perm` (B, m) i64: P
/// one-hot in the LU's form; P is empty where `perm` is null, L and U
/// where `unpackData` is false (lu_unpack's flags, as eager's).
absl::StatusOr<Values> unpackedResults(NodeImporter &n, Value lu, Value perm, bool unpackData) {
  if (n.numResults() < 3)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 3"));
  Type element = typeOf(lu).getElementType();
  Values out(3);
  if (unpackData) {
    auto [l, u] = unpackFactors(n, lu);
    ASSIGN_OR_RETURN(out[1], readResult(n, l, 1));
    ASSIGN_OR_RETURN(out[2], readResult(n, u, 2));
  } else {
    ASSIGN_OR_RETURN(out[1], emptyResult(n, 1));
    ASSIGN_OR_RETURN(out[2], emptyResult(n, 2));
  }
  if (perm) {
    Value p = permutationMatrix(n, perm, element);
    if (typeOf(lu).getRank() == 4)
      p = realAsPairs(n, p, element);
    ASSIGN_OR_RETURN(out[0], readResult(n, p, 0));
  } else {
    ASSIGN_OR_RETURN(out[0], emptyResult(n, 0));
  }
  return out;
}

/// The row order (B, m) i64 that `f`'s row swaps leave (getrf's P).
Value rowOrderOf(NodeImporter &n, const Factorisation &f) {
  return n.b().create<aten::LuPermutationOp>(
      n.loc(),
      RankedTensorType::get({typeOf(f.pivots).getDimSize(0), typeOf(f.lu).getDimSize(1)},
                            n.b().getI64Type()),
      f.pivots);
}


// --- QR: one builder each for real matrices and complex pairs -----------

namespace {

/// `v`'s shape without its `trailing` dims (the matrix batch's).
ArrayRef<int64_t> matrixShape(Value v, int64_t trailing) {
  return typeOf(v).getShape().drop_back(trailing);
}

/// `shape` with the `trailing` dims of a matrix operand (a pair's 2).
RankedTensorType withTrailing(ArrayRef<int64_t> shape, int64_t trailing, Type element) {
  SmallVector<int64_t> full(shape);
  if (trailing)
    full.push_back(2);
  return RankedTensorType::get(full, element);
}

/// Reflectors (..., m, r) as geqrf leaves them and their scales (..., k),
/// checked and flattened to (N, m, r) and (N, k); k at most `most`.
absl::StatusOr<std::pair<Value, Value>> reflectors(NodeImporter &n, Value a, Value tau,
                                                   int64_t most, int64_t trailing) {
  if (typeOf(tau).getElementType() != typeOf(a).getElementType())
    return n.error("tau must have the reflectors' element type");
  if (typeOf(tau).getRank() - trailing < 1)
    return n.error("tau must be (..., k) over the reflectors' batch dims");
  ArrayRef<int64_t> aShape = matrixShape(a, trailing), tauShape = matrixShape(tau, trailing);
  if (tauShape.size() != aShape.size() - 1 || tauShape.drop_back() != aShape.drop_back(2))
    return n.error("tau must be (..., k) over the reflectors' batch dims");
  const int64_t k = tauShape.back();
  if (k > most)
    return n.error(absl::StrCat("tau has ", k, " scales; at most ", most, " reflectors fit"));
  Value flat = flatBatch(n, a, trailing);
  RankedTensorType tauType =
      withTrailing({typeOf(flat).getDimSize(0), k}, trailing, typeOf(a).getElementType());
  return std::make_pair(flat, viewValue(n, tau, tauType.getShape()));
}

} // namespace

absl::StatusOr<Values> qrResults(NodeImporter &n, Value a, std::pair<int64_t, int64_t> size,
                                 int64_t trailing) {
  ASSIGN_OR_RETURN(std::string mode, n.stringAttr("mode", "reduced"));
  if (mode != "reduced" && mode != "complete" && mode != "r")
    return n.error("qr's mode must be 'reduced', 'complete' or 'r', not '" + mode + "'");
  auto [rows, cols] = size;
  bool complete = mode == "complete";
  const int64_t columns = complete ? rows : std::min(rows, cols);
  Value batch = flatBatch(n, a, trailing);
  const int64_t count = typeOf(batch).getDimSize(0);
  Type element = typeOf(a).getElementType();
  auto op = n.b().create<aten::QrOp>(
      n.loc(),
      TypeRange{withTrailing({count, rows, columns}, trailing, element),
                withTrailing({count, columns, cols}, trailing, element)},
      batch, complete ? n.b().getUnitAttr() : UnitAttr());
  ASSIGN_OR_RETURN(Value r, asResult(n, op.getR(), 1));
  // Mode "r" leaves Q empty, as eager.
  if (mode == "r") {
    ASSIGN_OR_RETURN(Value q, emptyResult(n, 0));
    return Values{q, r};
  }
  ASSIGN_OR_RETURN(Value q, asResult(n, op.getQ(), 0));
  return Values{q, r};
}

absl::StatusOr<Values> geqrfResults(NodeImporter &n, Value a, std::pair<int64_t, int64_t> size,
                                    int64_t trailing) {
  if (n.numResults() < 2)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 2"));
  Value batch = flatBatch(n, a, trailing);
  const int64_t count = typeOf(batch).getDimSize(0);
  auto op = n.b().create<aten::GeqrfOp>(
      n.loc(),
      TypeRange{typeOf(batch), withTrailing({count, std::min(size.first, size.second)}, trailing,
                                            typeOf(a).getElementType())},
      batch);
  ASSIGN_OR_RETURN(Value compact, asResult(n, op.getA(), 0));
  ASSIGN_OR_RETURN(Value tau, asResult(n, op.getTau(), 1));
  return Values{compact, tau};
}

absl::StatusOr<Values> householderProductResult(NodeImporter &n, Value a, Value tau,
                                                std::pair<int64_t, int64_t> size,
                                                int64_t trailing) {
  if (size.second > size.first)
    return n.error("householder_product needs input.shape[-2] >= input.shape[-1]");
  ASSIGN_OR_RETURN(auto flat, reflectors(n, a, tau, size.second, trailing));
  Value q = n.b().create<aten::HouseholderProductOp>(n.loc(), typeOf(flat.first), flat.first,
                                                     flat.second);
  ASSIGN_OR_RETURN(Value result, asResult(n, q, 0));
  return Values{result};
}

absl::StatusOr<Values> ormqrResult(NodeImporter &n, Value a, Value tau, Value c,
                                   std::pair<int64_t, int64_t> size, int64_t trailing,
                                   llvm::function_ref<Value(Value)> adjointOf) {
  ASSIGN_OR_RETURN(bool left, n.boolAttr("left", true));
  ASSIGN_OR_RETURN(bool transpose, n.boolAttr("transpose", false));
  if (typeOf(c).getElementType() != typeOf(a).getElementType())
    return n.error("input3 must have the reflectors' element type");
  // From the left on C's adjoint for the right-hand forms: C Q = (Q^H C^H)^H
  // and C Q^H = (Q C^H)^H (^H the transpose for real matrices).
  Value other = left ? c : adjointOf(c);
  ArrayRef<int64_t> otherShape = matrixShape(other, trailing);
  if (otherShape.drop_back(2) != matrixShape(a, trailing).drop_back(2))
    return n.error("input3's batch dims must be the reflectors' (eager's ormqr does not "
                   "broadcast them either)");
  if (otherShape.drop_back().back() != size.first)
    return n.error(absl::StrCat("input3 must have ", size.first, left ? " rows" : " columns",
                                " (the reflectors' length)"));
  ASSIGN_OR_RETURN(auto flat, reflectors(n, a, tau, std::min(size.first, size.second), trailing));
  Value flatOther = flatBatch(n, other, trailing);
  Value applied = n.b().create<aten::OrmqrOp>(n.loc(), typeOf(flatOther), flat.first, flat.second,
                                              flatOther,
                                              transpose != !left ? n.b().getUnitAttr() : UnitAttr());
  Value shaped = viewValue(n, applied, typeOf(other).getShape());
  ASSIGN_OR_RETURN(Value result, asResult(n, left ? shaped : adjointOf(shaped), 0));
  return Values{result};
}

} // namespace kiln::linalg

namespace kiln {
namespace {

using namespace linalg;

/// The (..., n, n) input as (B, n, n) of its transpose, with n.
absl::StatusOr<std::pair<Value, int64_t>> transposedBatch(NodeImporter &n, Value a) {
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "determinants"));
  return std::make_pair(flatBatch(n, transposed(n, a)), order);
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
  Value matrices = work.first;
  int64_t batch = typeOf(matrices).getDimSize(0);
  return Factorised{factorise(n, matrices),
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

/// _linalg_solve_ex(A, B, left, check_errors) -> (result, LU, pivots,
/// info). B is a vector (..., n) when it has one dim, or A's batch and n.
absl::StatusOr<Values> solveEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  ASSIGN_OR_RETURN(Value rhs, n.tensor("B"));
  ASSIGN_OR_RETURN(bool left, n.boolAttr("left", true));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "solves"));
  ArrayRef<int64_t> aShape = typeOf(a).getShape(), bShape = typeOf(rhs).getShape();
  if (typeOf(rhs).getElementType() != typeOf(a).getElementType())
    return n.error("A and B must have one element type");
  if (bShape.empty())
    return n.error("B must have at least one dim");
  bool vector = bShape.size() == 1 ||
                (bShape.size() + 1 == aShape.size() && bShape == aShape.drop_back());
  if (vector) {
    SmallVector<int64_t> column(bShape);
    column.push_back(1);
    rhs = viewValue(n, rhs, column);
  } else if (!left) {
    rhs = transposed(n, rhs);
  }
  ArrayRef<int64_t> columns = typeOf(rhs).getShape();
  if (columns.size() < 2 || columns[columns.size() - 2] != order)
    return n.error(absl::StrCat("B must have ", order, " rows (", left ? "A X = B" : "X A = B",
                                ")"));
  ASSIGN_OR_RETURN(Value x, solveBatch(n, left ? a : transposed(n, a), rhs));
  if (!left && !vector)
    x = transposed(n, x);
  ASSIGN_OR_RETURN(Value result, asResult(n, x, 0));
  ASSIGN_OR_RETURN(Values factorisation, factorisationResults(n, flatBatch(n, a), 1));
  return Values{result, factorisation[0], factorisation[1], factorisation[2]};
}

/// One aten.triangular_solve of the triangle `upper` names of `a` against
/// `rhs`, over their broadcast batch.
absl::StatusOr<Value> triangularSolve(NodeImporter &n, Value a, Value rhs, bool upper,
                                      bool unit) {
  return solveBatch(n, a, rhs, [&](Value flatA, Value flatB) -> Value {
    return n.b().create<aten::TriangularSolveOp>(
        n.loc(), typeOf(flatB), flatA, flatB, upper ? n.b().getUnitAttr() : UnitAttr(),
        unit ? n.b().getUnitAttr() : UnitAttr());
  });
}

/// B (..., n, k) for a solve against (..., n, n) A; error otherwise.
absl::Status checkRhs(NodeImporter &n, Value a, Value rhs, int64_t order) {
  if (typeOf(rhs).getElementType() != typeOf(a).getElementType())
    return n.error("A and B must have one element type");
  ArrayRef<int64_t> shape = typeOf(rhs).getShape();
  if (shape.size() < 2 || shape[shape.size() - 2] != order)
    return n.error(absl::StrCat("B must be (..., ", order, ", k)"));
  return absl::OkStatus();
}

/// linalg_solve_triangular(A, B, upper, left, unitriangular): X A = B for
/// left=False is A^T X^T = B^T, whose triangle is the other one.
absl::StatusOr<Values> solveTriangular(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("self"));
  ASSIGN_OR_RETURN(Value rhs, n.tensor("B"));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper"));
  ASSIGN_OR_RETURN(bool left, n.boolAttr("left", true));
  ASSIGN_OR_RETURN(bool unit, n.boolAttr("unitriangular", false));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "triangular solves"));
  if (typeOf(rhs).getRank() < 2)
    return n.error("B must be a batch of matrices (..., m, k)");
  if (!left) {
    a = transposed(n, a);
    rhs = transposed(n, rhs);
    upper = !upper;
  }
  RETURN_IF_ERROR(checkRhs(n, a, rhs, order));
  ASSIGN_OR_RETURN(Value x, triangularSolve(n, a, rhs, upper, unit));
  ASSIGN_OR_RETURN(Value result, asResult(n, left ? x : transposed(n, x), 0));
  return Values{result};
}

/// geqrf(A) -> (a, tau): one aten.geqrf of the (N, m, n) batch.
absl::StatusOr<Values> geqrf(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("self"));
  ASSIGN_OR_RETURN(auto size, matrixSize(n, a, "QR factorisations"));
  return geqrfResults(n, a, size, /*trailing=*/0);
}

/// linalg_householder_product(A, tau): the first n columns of H_0 ...
/// H_{k-1}, one aten.householder_product.
absl::StatusOr<Values> householderProduct(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("input"));
  ASSIGN_OR_RETURN(Value tau, n.tensor("tau"));
  ASSIGN_OR_RETURN(auto size, matrixSize(n, a, "Householder products"));
  return householderProductResult(n, a, tau, size, /*trailing=*/0);
}

/// ormqr(A, tau, C, left, transpose): Q C, Q^T C, C Q or C Q^T for Q = H_0
/// ... H_{k-1}.
absl::StatusOr<Values> ormqr(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("self"));
  ASSIGN_OR_RETURN(Value tau, n.tensor("input2"));
  ASSIGN_OR_RETURN(Value c, n.tensor("input3"));
  ASSIGN_OR_RETURN(auto size, matrixSize(n, a, "Householder products"));
  RETURN_IF_ERROR(matrixSize(n, c, "Householder products").status());
  return ormqrResult(n, a, tau, c, size, /*trailing=*/0,
                     [&](Value v) { return transposed(n, v); });
}

/// X with A X = rhs for A = L L^T (or U^T U for `upper`): a solve against
/// the factor, then one against its transpose.
absl::StatusOr<Value> solveWithCholesky(NodeImporter &n, Value factor, Value rhs, bool upper) {
  Value lower = upper ? transposed(n, factor) : factor;
  ASSIGN_OR_RETURN(Value y, triangularSolve(n, lower, rhs, /*upper=*/false, false));
  return triangularSolve(n, transposed(n, lower), y, /*upper=*/true, false);
}

/// cholesky_solve(B, L, upper): A X = B for A = L L^T (or U^T U).
absl::StatusOr<Values> choleskySolve(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value rhs, n.tensor("self"));
  ASSIGN_OR_RETURN(Value factor, n.tensor("input2"));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", false));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, factor, "Cholesky solves"));
  RETURN_IF_ERROR(checkRhs(n, factor, rhs, order));
  ASSIGN_OR_RETURN(Value x, solveWithCholesky(n, factor, rhs, upper));
  ASSIGN_OR_RETURN(Value result, asResult(n, x, 0));
  return Values{result};
}

/// cholesky_inverse(L, upper): A^-1 for A = L L^T (or U^T U), the Cholesky
/// solve of the identity.
absl::StatusOr<Values> choleskyInverse(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value factor, n.tensor("self"));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", false));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, factor, "Cholesky inverses"));
  ASSIGN_OR_RETURN(Value x, solveWithCholesky(n, factor,
                                              identityMatrix(n, order, typeOf(factor).getElementType()),
                                              upper));
  ASSIGN_OR_RETURN(Value result, asResult(n, x, 0));
  return Values{result};
}

/// triangular_solve(b, A, upper, transpose, unitriangular) -> (solution,
/// cloned_coefficient), the legacy form: A X = b (A^T X = b with
/// transpose, whose triangle is the other one), and A as the second
/// result, broadcast to its declared shape.
absl::StatusOr<Values> legacyTriangularSolve(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value rhs, n.tensor("self"));
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", true));
  ASSIGN_OR_RETURN(bool transpose, n.boolAttr("transpose", false));
  ASSIGN_OR_RETURN(bool unit, n.boolAttr("unitriangular", false));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "triangular solves"));
  if (typeOf(rhs).getRank() < 2)
    return n.error("b must be a batch of matrices (..., n, k)");
  Value system = transpose ? transposed(n, a) : a;
  RETURN_IF_ERROR(checkRhs(n, system, rhs, order));
  ASSIGN_OR_RETURN(Value x, triangularSolve(n, system, rhs, transpose ? !upper : upper, unit));
  ASSIGN_OR_RETURN(Value solution, asResult(n, x, 0));
  ASSIGN_OR_RETURN(Value coefficient, clonedCoefficient(n, a));
  return Values{solution, coefficient};
}

/// linalg_lu(A, pivot) -> (P, L, U) with A = P L U: getrf of A, its row
/// swaps as P, its factors unpacked.
absl::StatusOr<Values> linalgLu(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  RETURN_IF_ERROR(checkPivotedLu(n, a));
  Factorisation f = factoriseMatrices(n, a);
  return unpackedResults(n, f.lu, rowOrderOf(n, f), /*unpackData=*/true);
}

/// lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots) -> (P, L, U)
/// of a packed (m, n) LU and its min(m, n) 1-based pivots; what is not
/// unpacked is empty, as eager's.
absl::StatusOr<Values> luUnpack(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value lu, n.tensor("LU_data"));
  ASSIGN_OR_RETURN(Value pivots, n.tensor("LU_pivots"));
  ASSIGN_OR_RETURN(bool unpackData, n.boolAttr("unpack_data", true));
  ASSIGN_OR_RETURN(bool unpackPivots, n.boolAttr("unpack_pivots", true));
  ASSIGN_OR_RETURN(auto size, matrixSize(n, lu, "LU unpackings"));
  Value batch = flatBatch(n, lu);
  Value perm;
  if (unpackPivots) {
    ASSIGN_OR_RETURN(perm, rowOrder(n, pivots, typeOf(batch).getDimSize(0),
                                    std::min(size.first, size.second), size.first));
  }
  return unpackedResults(n, batch, perm, unpackData);
}

/// linalg_lu_solve(LU, pivots, B, left, adjoint) with A = P L U: A X = B
/// is X = U^-1 L^-1 (B's rows in P's order); A^T X = B is X = P (L^T)^-1
/// (U^T)^-1 B; X A = B and X A^T = B are those for X^T and B^T. The LU
/// and the pivots (one batch) broadcast against B's batch dims.
absl::StatusOr<Values> luSolve(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value lu, n.tensor("LU"));
  ASSIGN_OR_RETURN(Value pivots, n.tensor("pivots"));
  ASSIGN_OR_RETURN(Value rhs, n.tensor("B"));
  ASSIGN_OR_RETURN(bool left, n.boolAttr("left", true));
  ASSIGN_OR_RETURN(bool adjoint, n.boolAttr("adjoint", false));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, lu, "LU solves"));
  if (typeOf(rhs).getRank() < 2)
    return n.error("B must be a batch of matrices (..., n, k)");
  auto transpose = [&](Value v) { return transposed(n, v); };
  Value b = left ? rhs : transpose(rhs);
  RETURN_IF_ERROR(checkRhs(n, lu, b, order));
  // A X = B (or X A^T = B: A X^T = B^T); else A^T X = B (or X A = B).
  ASSIGN_OR_RETURN(Value x, solveWithLu(n, lu, pivots, b, order, left != adjoint, transpose, 0));
  ASSIGN_OR_RETURN(Value result, asResult(n, left ? x : transpose(x), 0));
  return Values{result};
}

/// linalg_lu_factor_ex(A, pivot, check_errors) -> (LU, pivots, info):
/// getrf with partial pivoting (eager's CPU kernel has no other).
absl::StatusOr<Values> luFactorEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  RETURN_IF_ERROR(checkPivotedLu(n, a));
  return factorisationResults(n, flatBatch(n, a), 0);
}

/// linalg_qr(A, mode) -> (Q, R): one aten.qr of the (N, m, n) batch.
absl::StatusOr<Values> qr(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  ASSIGN_OR_RETURN(auto size, matrixSize(n, a, "QR factorisations"));
  return qrResults(n, a, size, /*trailing=*/0);
}

/// _linalg_eigh(A, UPLO, compute_v) -> (eigenvalues, eigenvectors) of the
/// symmetric matrix the triangle UPLO names: one aten.eigh, or one
/// aten.eigvalsh when no vectors are computed or read.
absl::StatusOr<Values> eigh(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  ASSIGN_OR_RETURN(std::string uplo, n.stringAttr("UPLO", "L"));
  ASSIGN_OR_RETURN(bool computeV, n.boolAttr("compute_v", true));
  if (uplo != "L" && uplo != "U")
    return n.error("UPLO must be 'L' or 'U', not '" + uplo + "'");
  if (n.numResults() < 2)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 2"));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "eigenvalues"));
  Value batch = flatBatch(n, uplo == "U" ? transposed(n, a) : a);
  auto valuesType = RankedTensorType::get({typeOf(batch).getDimSize(0), order},
                                          typeOf(a).getElementType());
  if (!computeV || n.resultLeftOut(1)) {
    ASSIGN_OR_RETURN(Value vectors, emptyResult(n, 1));
    Value values = n.b().create<aten::EigvalshOp>(n.loc(), valuesType, batch);
    ASSIGN_OR_RETURN(Value result, asResult(n, values, 0));
    return Values{result, vectors};
  }
  auto op = n.b().create<aten::EighOp>(n.loc(), TypeRange{valuesType, typeOf(batch)}, batch);
  ASSIGN_OR_RETURN(Value values, readResult(n, op.getEigenvalues(), 0));
  ASSIGN_OR_RETURN(Value vectors, asResult(n, op.getEigenvectors(), 1));
  return Values{values, vectors};
}

/// _linalg_svd(A, full_matrices, compute_uv, driver) -> (U, S, Vh): one
/// aten.svd of A, or of its transpose when it is wide (A^T = U' S V'^T
/// gives U = V' and Vh = U'^T); one aten.svdvals when no vectors are
/// computed or read.
absl::StatusOr<Values> svd(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  ASSIGN_OR_RETURN(bool fullMatrices, n.boolAttr("full_matrices", false));
  ASSIGN_OR_RETURN(bool computeUv, n.boolAttr("compute_uv", true));
  if (n.numResults() < 3)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 3"));
  ASSIGN_OR_RETURN(auto size, matrixSize(n, a, "singular values"));
  auto [rows, cols] = size;
  const bool wide = rows < cols;
  const int64_t tall = std::max(rows, cols), narrow = std::min(rows, cols);
  Type element = typeOf(a).getElementType();
  Value batch = flatBatch(n, wide ? transposed(n, a) : a);
  const int64_t count = typeOf(batch).getDimSize(0);
  auto valuesType = RankedTensorType::get({count, narrow}, element);
  if (!computeUv || (n.resultLeftOut(0) && n.resultLeftOut(2))) {
    ASSIGN_OR_RETURN(Value u, emptyResult(n, 0));
    ASSIGN_OR_RETURN(Value vh, emptyResult(n, 2));
    Value values = n.b().create<aten::SvdvalsOp>(n.loc(), valuesType, batch);
    ASSIGN_OR_RETURN(Value s, asResult(n, values, 1));
    return Values{u, s, vh};
  }
  auto op = n.b().create<aten::SvdOp>(
      n.loc(),
      TypeRange{RankedTensorType::get({count, tall, fullMatrices ? tall : narrow}, element),
                valuesType, RankedTensorType::get({count, narrow, narrow}, element)},
      batch, fullMatrices ? n.b().getUnitAttr() : UnitAttr());
  ASSIGN_OR_RETURN(Value u, readResult(n, wide ? op.getV() : op.getU(), 0));
  ASSIGN_OR_RETURN(Value s, readResult(n, op.getS(), 1));
  ASSIGN_OR_RETURN(Value vh, readResult(n, transposed(n, wide ? op.getU() : op.getV()), 2));
  return Values{u, s, vh};
}

/// linalg_inv_ex(A, check_errors) -> (inverse, info): A X = I.
absl::StatusOr<Values> invEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("A"));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "inverses"));
  ASSIGN_OR_RETURN(Value x,
                   solveBatch(n, a, identityMatrix(n, order, typeOf(a).getElementType())));
  ASSIGN_OR_RETURN(Value inverse, asResult(n, x, 0));
  if (n.resultLeftOut(1))
    return Values{inverse, Value()};
  ASSIGN_OR_RETURN(Value info, asResult(n, zeroPivotInfo(n, factoriseMatrices(n, a)), 1));
  return Values{inverse, info};
}

/// linalg_cholesky_ex(A, upper, check_errors) -> (L, info): potrf of A's
/// lower triangle, or for upper=True U = chol(A.mT's lower)^T, which reads
/// A's upper triangle.
absl::StatusOr<Values> choleskyEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("self"));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", false));
  RETURN_IF_ERROR(squareOrder(n, a, "Cholesky factors").status());
  return choleskyResults(n, a, upper, [&](Value v) { return transposed(n, v); }, 0);
}

/// linalg_matrix_exp(A): aten.matrix_exp on the flattened batch, f32 and
/// f64 (complex matrices: ComplexLinalgHandlers.cpp). Eager also takes f16
/// and bf16, but its CPU kernel overflows on them (inf and -inf for a 4 x 4
/// of norm 1 in torch 2.5.1): no result to match, so UNIMPLEMENTED.
absl::StatusOr<Values> matrixExp(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("self"));
  RankedTensorType type = typeOf(a);
  if (type.getRank() >= 1 && !type.getElementType().isF32() &&
      !type.getElementType().isF64() && isa<FloatType>(type.getElementType()))
    return n.unimplemented("matrix exponentials of f16 or bf16 matrices (Kiln computes "
                           "them in f32 and f64)");
  if (type.getRank() >= 2 && type.getNumElements() == 0 &&
      type.getDimSize(type.getRank() - 1) == type.getDimSize(type.getRank() - 2)) {
    // No matrices, or matrices of order 0: an empty result, as eager's.
    Value empty = n.b().create<aten::ConstantOp>(n.loc(), type.getElementType(), 0.0,
                                                 type.getShape());
    ASSIGN_OR_RETURN(Value result, asResult(n, empty, 0));
    return Values{result};
  }
  RETURN_IF_ERROR(squareOrder(n, a, "matrix exponentials").status());
  Value batch = flatBatch(n, a);
  Value e = n.b().create<aten::MatrixExpOp>(n.loc(), typeOf(batch), batch);
  ASSIGN_OR_RETURN(Value result, asResult(n, viewValue(n, e, type.getShape()), 0));
  return Values{result};
}

/// linalg_ldl_factor_ex(A, hermitian, check_errors) -> (LD, pivots, info):
/// one aten.ldl_factor (dsytf2 on the lower triangle) of the flattened
/// batch; for real matrices `hermitian` changes nothing.
absl::StatusOr<Values> ldlFactorEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "LDL factorisations"));
  if (n.numResults() < 3)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 3"));
  Value batch = flatBatch(n, a);
  const int64_t count = typeOf(batch).getDimSize(0);
  Type i64 = n.b().getI64Type();
  auto ldl = n.b().create<aten::LdlFactorOp>(
      n.loc(),
      TypeRange{typeOf(batch), RankedTensorType::get({count, order}, i64),
                RankedTensorType::get({count, 1}, i64)},
      batch);
  ASSIGN_OR_RETURN(Value ld, readResult(n, ldl.getLd(), 0));
  ASSIGN_OR_RETURN(Value pivots, readResult(n, ldl.getPivots(), 1));
  ASSIGN_OR_RETURN(Value info, readResult(n, ldl.getInfo(), 2));
  return Values{ld, pivots, info};
}

/// linalg_ldl_solve(LD, pivots, B, hermitian): one aten.ldl_solve (dsytrs)
/// of the flattened batch; B's batch broadcasts into LD's, or one LD over
/// B's batch (eager's kernel crashed on the other broadcasts here).
absl::StatusOr<Values> ldlSolve(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value ld, n.tensor("LD"));
  ASSIGN_OR_RETURN(Value pivots, n.tensor("pivots"));
  ASSIGN_OR_RETURN(Value rhs, n.tensor("B"));
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, ld, "LDL solves"));
  RETURN_IF_ERROR(checkRhs(n, ld, rhs, order));
  if (typeOf(rhs).getNumElements() == 0)
    return n.unimplemented("an LDL solve with no right-hand side");
  if (!isa<IntegerType>(typeOf(pivots).getElementType()) || typeOf(pivots).getRank() < 1 ||
      typeOf(pivots).getShape().drop_back() != typeOf(ld).getShape().drop_back(2) ||
      typeOf(pivots).getShape().back() != order)
    return n.error("the pivots must be integers, (..., n) with LD's batch dims");
  // Eager broadcasts B's batch into LD's, or a single LD over B's batch;
  // its kernel crashed on the other broadcasts here (torch 2.15).
  ArrayRef<int64_t> ldBatch = typeOf(ld).getShape().drop_back(2);
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(ldBatch, typeOf(rhs).getShape().drop_back(2), batch) ||
      (!ldBatch.empty() && ArrayRef<int64_t>(batch) != ldBatch))
    return n.error("B's batch dims must broadcast to LD's, or LD must be one matrix (eager's "
                   "ldl_solve broadcasts no other way)");
  Value flatLd = flatBatch(n, expandBatch(n, ld, batch, 2));
  Value flatB = flatBatch(n, expandBatch(n, rhs, batch, 2));
  Value expandedPivots = expandBatch(n, pivots, batch, 1);
  const int64_t count = typeOf(flatB).getDimSize(0);
  Value flatPivots =
      convertElements(n, viewValue(n, expandedPivots, {count, order}), n.b().getI64Type());
  Value x = n.b().create<aten::LdlSolveOp>(n.loc(), typeOf(flatB), flatLd, flatPivots, flatB);
  SmallVector<int64_t> resultShape(batch);
  resultShape.append({order, typeOf(rhs).getShape().back()});
  ASSIGN_OR_RETURN(Value result, asResult(n, viewValue(n, x, resultShape), 0));
  return Values{result};
}

} // namespace

void addLinalgHandlers(OpHandlerTable &t) {
  // Reached with real results only, which linalg_eig never declares.
  t["aten.linalg_eig.default"] = linalg::linalgEig;
  t["aten.linalg_ldl_factor_ex.default"] = ldlFactorEx;
  t["aten.linalg_ldl_solve.default"] = ldlSolve;
  t["aten.linalg_matrix_exp.default"] = matrixExp;
  t["aten._linalg_det.default"] = det;
  t["aten._linalg_slogdet.default"] = slogdet;
  t["aten._linalg_solve_ex.default"] = solveEx;
  t["aten.linalg_inv_ex.default"] = invEx;
  t["aten.linalg_lu_factor_ex.default"] = luFactorEx;
  t["aten.linalg_qr.default"] = qr;
  t["aten.geqrf.default"] = geqrf;
  t["aten.linalg_householder_product.default"] = householderProduct;
  t["aten.ormqr.default"] = ormqr;
  t["aten.linalg_solve_triangular.default"] = solveTriangular;
  t["aten.cholesky_solve.default"] = choleskySolve;
  t["aten.cholesky_inverse.default"] = choleskyInverse;
  t["aten.triangular_solve.default"] = legacyTriangularSolve;
  t["aten.linalg_lu.default"] = linalgLu;
  t["aten.lu_unpack.default"] = luUnpack;
  t["aten.linalg_lu_solve.default"] = luSolve;
  t["aten._linalg_eigh.default"] = eigh;
  t["aten._linalg_svd.default"] = svd;
  t["aten.linalg_cholesky_ex.default"] = choleskyEx;
}

} // namespace kiln
