//===- ComplexLinalgHandlers.cpp - linear algebra of complex matrices -----===//
//
// This file implements the importer handlers of torch.linalg's ops on
// complex matrices, carried as (..., m, n, 2) pairs of their parts
// (ComplexHandlers.cpp says why), and linalg_eig, whose results are
// complex:
//
// - det, slogdet, lu_factor, lu and cholesky: one aten.lu_factor or
//   aten.cholesky of the pairs, which kiln-convert-aten-to-linalg writes
//   as LAPACK's zgetf2 and zpotf2 (ComplexFactorisations.cpp). Unlike the
//   real det, eager factorises a complex A itself (not A's transpose): the
//   LU and pivots results are lu_factor(A)'s. det is the product of U's
//   diagonal (pairwise, as the complex prod), negated for an odd number of
//   row swaps; slogdet's sign is that product of sgn(u_ii) (0 for a zero
//   pivot) and its log |det| the sum of log |u_ii|, as eager computes
//   them. cholesky with upper=True factorises A^H (whose lower triangle is
//   A's upper one, conjugated) and returns the factor's conjugate
//   transpose.
// - solve_triangular, the legacy triangular_solve, cholesky_solve,
//   cholesky_inverse and lu_solve: aten.triangular_solve of the pairs
//   (ztrtrs' substitutions), with conjugate transposes where A = L L^H or
//   A^H X = B asks for them; lu_unpack unpacks the pairs part by part.
// - eigvalsh, eigh, svdvals and svd: the values of the real embedding,
//   which has each of them twice; eigh's vectors from the embedding's by
//   complex Gram-Schmidt (aten.hermitian_eigenvectors), and svd's from the
//   embedding's pairs of singular vectors (aten.complex_singular_vectors).
// - qr, geqrf, householder_product and ormqr: one aten.qr, aten.geqrf,
//   aten.householder_product or aten.ormqr of the pairs (zgeqr2, zung2r and
//   zunm2r, ComplexFactorisations.cpp), built by the real handlers' own
//   builders (LinalgShared.h); ormqr's transpose is Q's conjugate transpose,
//   and its right-hand forms work on C^H.
// - inv and solve: through the real embedding [[X, -Y], [Y, X]]; the LU,
//   pivots and info results, when read, from one aten.lu_factor of A.
// - matrix_exp: the exponential of the real embedding, whose left column
//   of blocks is exp(A)'s parts.
// - linalg_eig: one aten.eig (for a real matrix dgeev's balancing,
//   Hessenberg reduction, Francis QR and dtrevc3's vectors,
//   GeneralEigen.cpp; for a complex one, as pairs, zgeev's, with zlahqr's
//   single-shift QR, ComplexEigen.cpp), or aten.eigvals when nothing reads
//   the vectors, its parts packed as the complex results' pairs.
//
//===----------------------------------------------------------------------===//
#include "ComplexPairs.h"
#include "LinalgShared.h"

#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Traits.h"

using namespace mlir;

namespace kiln {


namespace {

using namespace linalg;

// --- complex matrices through their real embedding --------------------

/// A complex (..., n, n) matrix X + iY (pairs) as the real (..., 2n, 2n)
/// [[X, -Y], [Y, X]]: the embedding is a ring homomorphism, so it maps the
/// inverse to the inverse and A z = b to [[X, -Y], [Y, X]] [re z; im z] =
/// [re b; im b], with A's condition number.
Value realEmbedding(NodeImporter &n, Value pairs) {
  Value re = realPart(n, pairs), im = imagPart(n, pairs);
  int64_t rank = typeOf(re).getRank();
  Value negIm = n.b().create<aten::NegOp>(n.loc(), typeOf(im), im);
  auto join = [&](Value a, Value b, int64_t dim) -> Value {
    SmallVector<int64_t> shape(typeOf(a).getShape());
    shape[dim] += typeOf(b).getDimSize(dim);
    return n.b().create<aten::CatOp>(n.loc(), typeOf(a).clone(shape), ValueRange{a, b},
                                     n.b().getI64IntegerAttr(dim));
  };
  return join(join(re, negIm, rank - 1), join(im, re, rank - 1), rank - 2);
}

/// The real embedding of the complex (..., m, n) matrices `pairs`; error
/// unless 2n is within the factorisation loops' order.
absl::StatusOr<Value> embeddingWithin(NodeImporter &n, Value pairs, const std::string &what) {
  ArrayRef<int64_t> shape = complexShape(pairs);
  if (2 * std::max(shape[shape.size() - 2], shape.back()) > kMaxOrder)
    return n.unimplemented(absl::StrCat(
        what, " of a complex ", shape[shape.size() - 2], " x ", shape.back(),
        " matrix (Kiln computes them from its real embedding, of twice the order, and the "
        "loops take at most ", kMaxOrder, ")"));
  return realEmbedding(n, pairs);
}

/// Rows [0, n) and [n, 2n) of a real (..., 2n, k) as the complex (..., n, k).
Value stackedRowsAsPairs(NodeImporter &n, Value stacked, int64_t order) {
  int64_t rows = typeOf(stacked).getRank() - 2;
  return pack(n, sliceAlong(n, stacked, rows, 0, order), sliceAlong(n, stacked, rows, order, order));
}

// --- factorisations of complex matrices --------------------------------

/// The (rows, cols) of a complex (..., m, n) input (pairs); error unless
/// m and n are from 1 to kMaxOrder (and equal when `square`).
absl::StatusOr<std::pair<int64_t, int64_t>> complexMatrixSize(NodeImporter &n, Value a,
                                                              const std::string &what,
                                                              bool square) {
  ArrayRef<int64_t> shape = complexShape(a);
  if (shape.size() < 2)
    return n.error("the input must be a batch of matrices (..., m, n)");
  const int64_t rows = shape[shape.size() - 2], cols = shape.back();
  if (square && rows != cols)
    return n.error("the input must be a batch of square matrices (..., n, n)");
  if (rows == 0 || cols == 0)
    return n.unimplemented(what + " of a complex matrix with no elements");
  if (std::max(rows, cols) > kMaxOrder)
    return n.unimplemented(absl::StrCat(what, " of a ", rows, " x ", cols,
                                        " matrix (the factorisation loops take at most ",
                                        kMaxOrder, ")"));
  return std::make_pair(rows, cols);
}

/// Pairs (..., r, c, 2) viewed as one (N, r, c, 2) batch.
Value flatPairs(NodeImporter &n, Value pairs) { return flatBatch(n, pairs, /*trailing=*/1); }

/// The transpose of pairs (..., r, c, 2): (..., c, r, 2).
Value transposedPairs(NodeImporter &n, Value pairs) { return transposed(n, pairs, /*trailing=*/1); }

/// The conjugate transpose of pairs (..., r, c, 2): (..., c, r, 2).
Value adjoint(NodeImporter &n, Value pairs) {
  Value swapped = transposedPairs(n, pairs);
  Value im = imagPart(n, swapped);
  return pack(n, realPart(n, swapped), n.b().create<aten::NegOp>(n.loc(), typeOf(im), im));
}

/// Pairs `value` (B, 1, 2) negated where the factorisation swapped rows an
/// odd number of times.
Value withPermutationSign(NodeImporter &n, const Factorisation &f, Value value) {
  const int64_t batch = typeOf(value).getDimSize(0);
  Value odd = viewValue(n, f.odd, {batch, 1, 1});
  Value negated = n.b().create<aten::NegOp>(n.loc(), typeOf(value), value);
  return pointwise(n, typeOf(value), "where", {odd, negated, value});
}

/// The LU factorisation of argument A (complex, square), batched.
absl::StatusOr<Factorisation> factoriseSquare(NodeImporter &n, const char *what) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "A"));
  RETURN_IF_ERROR(complexMatrixSize(n, a, what, /*square=*/true).status());
  return factorise(n, flatPairs(n, a));
}

/// _linalg_det(A) -> (det, LU, pivots) of complex matrices.
absl::StatusOr<Values> complexDet(NodeImporter &n) {
  ASSIGN_OR_RETURN(Factorisation f, factoriseSquare(n, "determinants"));
  Value det = withPermutationSign(n, f, productAlong(n, f.diagonal, 1));
  ASSIGN_OR_RETURN(Value result, asResult(n, det, 0));
  ASSIGN_OR_RETURN(Values lu, luResults(n, f, 1));
  return Values{result, lu[0], lu[1]};
}

/// _linalg_slogdet(A) -> (sign, logabsdet, LU, pivots) of complex
/// matrices: sign the product of sgn(u_ii) (z / |z|, 0 for 0), logabsdet
/// (real) the sum of log |u_ii|.
absl::StatusOr<Values> complexSlogdet(NodeImporter &n) {
  ASSIGN_OR_RETURN(Factorisation f, factoriseSquare(n, "determinants"));
  Value re = realPart(n, f.diagonal), im = imagPart(n, f.diagonal);
  RankedTensorType parts = typeOf(re);
  PartMath m(n, parts);
  Value magnitude = modulus(m, Parts{re, im});
  Value zero = m.number(0.0);
  Value isZero = m.test("eq", {magnitude, zero});
  Value units = pack(n, m.where(isZero, zero, m.div(re, magnitude)),
                     m.where(isZero, zero, m.div(im, magnitude)));
  Value sign = withPermutationSign(n, f, productAlong(n, units, 1));
  Value logs = m.fn("log", magnitude);
  Value logabs = n.b().create<aten::SumOp>(
      n.loc(), RankedTensorType::get({parts.getDimSize(0), 1}, parts.getElementType()), logs,
      n.b().getDenseI64ArrayAttr({1}), n.b().getBoolAttr(true));
  ASSIGN_OR_RETURN(Value signOut, asResult(n, sign, 0));
  ASSIGN_OR_RETURN(Value logOut, asResult(n, logabs, 1));
  ASSIGN_OR_RETURN(Values lu, luResults(n, f, 2));
  return Values{signOut, logOut, lu[0], lu[1]};
}

/// The pivot flag of an LU node (eager's CPU kernel pivots always) and
/// its complex argument A, batched.
absl::StatusOr<Value> pivotedLuArgument(NodeImporter &n) {
  ASSIGN_OR_RETURN(bool pivot, n.boolAttr("pivot", true));
  if (!pivot)
    return n.error("LU without pivoting is not defined on the CPU (eager raises)");
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "A"));
  RETURN_IF_ERROR(complexMatrixSize(n, a, "LU factorisations", /*square=*/false).status());
  return flatPairs(n, a);
}

/// linalg_lu_factor_ex(A, pivot, check_errors) -> (LU, pivots, info) of
/// complex matrices.
absl::StatusOr<Values> complexLuFactorEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value batch, pivotedLuArgument(n));
  return factorisationResults(n, batch, 0);
}

/// linalg_lu(A, pivot) -> (P, L, U) of complex matrices, A = P L U; P is
/// complex too, as eager's.
absl::StatusOr<Values> complexLinalgLu(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value batch, pivotedLuArgument(n));
  Factorisation f = factorise(n, batch);
  return unpackedResults(n, f.lu, rowOrderOf(n, f), /*unpackData=*/true);
}

/// linalg_cholesky_ex(A, upper, check_errors) -> (L, info) of complex
/// Hermitian matrices: zpotf2 of A's lower triangle, or for upper=True U =
/// chol(A^H)^H, which reads A's upper triangle.
absl::StatusOr<Values> complexCholeskyEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "self"));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", false));
  RETURN_IF_ERROR(complexMatrixSize(n, a, "Cholesky factors", /*square=*/true).status());
  return choleskyResults(n, a, upper, [&](Value v) { return adjoint(n, v); }, /*trailing=*/1);
}

// --- triangular solves and what builds on them --------------------------

/// Argument `name`, a complex tensor of the complex `a`'s precision (as
/// eager's solves require: no promotion); error otherwise.
absl::StatusOr<Value> pairsLike(NodeImporter &n, const std::string &name, Value a) {
  if (!n.isComplexTensor(name))
    return n.error(absl::StrCat("argument '", name, "' must be a complex tensor of the "
                                "matrix's dtype"));
  ASSIGN_OR_RETURN(Value v, complexArgument(n, name));
  if (typeOf(v).getElementType() != typeOf(a).getElementType())
    return n.error(absl::StrCat("argument '", name, "' must have the matrix's dtype"));
  return v;
}

/// The pairs `rhs` (..., n, k) for a solve against complex (..., n, n)
/// matrices of order `order`; error otherwise.
absl::Status checkComplexRhs(NodeImporter &n, Value rhs, int64_t order) {
  ArrayRef<int64_t> shape = complexShape(rhs);
  if (shape.size() < 2 || shape[shape.size() - 2] != order)
    return n.error(absl::StrCat("B must be (..., ", order, ", k)"));
  return absl::OkStatus();
}

/// One aten.triangular_solve of the triangle `upper` names of the complex
/// `a` (..., n, n) against the complex `rhs` (..., n, k), both pairs, over
/// their broadcast batch.
absl::StatusOr<Value> complexTriangularSolve(NodeImporter &n, Value a, Value rhs, bool upper,
                                             bool unit) {
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(complexShape(a).drop_back(2),
                                          complexShape(rhs).drop_back(2), batch))
    return n.error("A's and B's batch dims do not broadcast");
  Value x = expandBatch(n, rhs, batch, 3);
  Value flatA = flatPairs(n, expandBatch(n, a, batch, 3)), flatB = flatPairs(n, x);
  Value solved = n.b().create<aten::TriangularSolveOp>(
      n.loc(), typeOf(flatB), flatA, flatB, upper ? n.b().getUnitAttr() : UnitAttr(),
      unit ? n.b().getUnitAttr() : UnitAttr());
  return viewValue(n, solved, typeOf(x).getShape());
}

/// linalg_solve_triangular(A, B, upper, left, unitriangular) of complex
/// matrices: X A = B for left=False is A^T X^T = B^T, whose triangle is
/// the other one.
absl::StatusOr<Values> complexSolveTriangular(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "self"));
  ASSIGN_OR_RETURN(Value rhs, pairsLike(n, "B", a));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper"));
  ASSIGN_OR_RETURN(bool left, n.boolAttr("left", true));
  ASSIGN_OR_RETURN(bool unit, n.boolAttr("unitriangular", false));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "triangular solves", /*square=*/true));
  if (complexRank(rhs) < 2)
    return n.error("B must be a batch of matrices (..., m, k)");
  if (!left) {
    a = transposedPairs(n, a);
    rhs = transposedPairs(n, rhs);
    upper = !upper;
  }
  RETURN_IF_ERROR(checkComplexRhs(n, rhs, size.first));
  ASSIGN_OR_RETURN(Value x, complexTriangularSolve(n, a, rhs, upper, unit));
  ASSIGN_OR_RETURN(Value result, asResult(n, left ? x : transposedPairs(n, x), 0));
  return Values{result};
}

/// triangular_solve(b, A, upper, transpose, unitriangular) ->
/// (solution, cloned_coefficient), the legacy form, of complex matrices:
/// A X = b (A^T X = b with transpose, not the conjugate transpose, as
/// eager's), and A broadcast as the second result.
absl::StatusOr<Values> complexLegacyTriangularSolve(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "A"));
  ASSIGN_OR_RETURN(Value rhs, pairsLike(n, "self", a));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", true));
  ASSIGN_OR_RETURN(bool transpose, n.boolAttr("transpose", false));
  ASSIGN_OR_RETURN(bool unit, n.boolAttr("unitriangular", false));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "triangular solves", /*square=*/true));
  if (complexRank(rhs) < 2)
    return n.error("b must be a batch of matrices (..., n, k)");
  RETURN_IF_ERROR(checkComplexRhs(n, rhs, size.first));
  ASSIGN_OR_RETURN(Value x, complexTriangularSolve(n, transpose ? transposedPairs(n, a) : a, rhs,
                                                   transpose ? !upper : upper, unit));
  ASSIGN_OR_RETURN(Value solution, asResult(n, x, 0));
  ASSIGN_OR_RETURN(Value coefficient, clonedCoefficient(n, a));
  return Values{solution, coefficient};
}

/// X with A X = rhs for A = L L^H (or U^H U for `upper`), all pairs: a
/// solve against the lower factor, then one against its adjoint.
absl::StatusOr<Value> complexCholeskySolveWith(NodeImporter &n, Value factor, Value rhs,
                                               bool upper) {
  Value lower = upper ? adjoint(n, factor) : factor;
  ASSIGN_OR_RETURN(Value y, complexTriangularSolve(n, lower, rhs, /*upper=*/false, false));
  return complexTriangularSolve(n, adjoint(n, lower), y, /*upper=*/true, false);
}

/// cholesky_solve(B, L, upper) of complex matrices: A X = B for A = L L^H
/// (or U^H U).
absl::StatusOr<Values> complexCholeskySolve(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value factor, complexArgument(n, "input2"));
  ASSIGN_OR_RETURN(Value rhs, pairsLike(n, "self", factor));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", false));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, factor, "Cholesky solves", /*square=*/true));
  RETURN_IF_ERROR(checkComplexRhs(n, rhs, size.first));
  ASSIGN_OR_RETURN(Value x, complexCholeskySolveWith(n, factor, rhs, upper));
  ASSIGN_OR_RETURN(Value result, asResult(n, x, 0));
  return Values{result};
}

/// cholesky_inverse(L, upper) of complex matrices: the Cholesky solve of
/// the identity.
absl::StatusOr<Values> complexCholeskyInverse(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value factor, complexArgument(n, "self"));
  ASSIGN_OR_RETURN(bool upper, n.boolAttr("upper", false));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, factor, "Cholesky inverses", /*square=*/true));
  Type element = typeOf(factor).getElementType();
  Value identity = realAsPairs(n, identityMatrix(n, size.first, element), element);
  ASSIGN_OR_RETURN(Value x, complexCholeskySolveWith(n, factor, identity, upper));
  ASSIGN_OR_RETURN(Value result, asResult(n, x, 0));
  return Values{result};
}

/// linalg_lu_solve(LU, pivots, B, left, adjoint) of complex matrices, A =
/// P L U: A X = B is X = U^-1 L^-1 (B's rows in P's order), and so is X
/// A^H = B, as A X^H = B^H; A^H X = B is X = P (L^H)^-1 (U^H)^-1 B, and X A
/// = B the same with transposes, as A^T X^T = B^T.
absl::StatusOr<Values> complexLuSolve(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value lu, complexArgument(n, "LU"));
  ASSIGN_OR_RETURN(Value pivots, n.tensor("pivots"));
  ASSIGN_OR_RETURN(Value rhs, pairsLike(n, "B", lu));
  ASSIGN_OR_RETURN(bool left, n.boolAttr("left", true));
  ASSIGN_OR_RETURN(bool conjugated, n.boolAttr("adjoint", false));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, lu, "LU solves", /*square=*/true));
  const int64_t order = size.first;
  if (complexRank(rhs) < 2)
    return n.error("B must be a batch of matrices (..., n, k)");
  auto flip = [&](Value v) { return conjugated ? adjoint(n, v) : transposedPairs(n, v); };
  Value b = left ? rhs : flip(rhs);
  RETURN_IF_ERROR(checkComplexRhs(n, b, order));
  ASSIGN_OR_RETURN(Value x, solveWithLu(n, lu, pivots, b, order, left != conjugated, flip, 1));
  ASSIGN_OR_RETURN(Value result, asResult(n, left ? x : flip(x), 0));
  return Values{result};
}

/// lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots) -> (P, L, U)
/// of a packed complex LU: P a real one-hot matrix as pairs, L and U
/// unpacked part by part; what is not unpacked is empty, as eager's.
absl::StatusOr<Values> complexLuUnpack(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value lu, complexArgument(n, "LU_data"));
  ASSIGN_OR_RETURN(Value pivots, n.tensor("LU_pivots"));
  ASSIGN_OR_RETURN(bool unpackData, n.boolAttr("unpack_data", true));
  ASSIGN_OR_RETURN(bool unpackPivots, n.boolAttr("unpack_pivots", true));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, lu, "LU unpackings", /*square=*/false));
  Value batch = flatPairs(n, lu);
  Value perm;
  if (unpackPivots) {
    ASSIGN_OR_RETURN(perm, rowOrder(n, pivots, typeOf(batch).getDimSize(0),
                                    std::min(size.first, size.second), size.first));
  }
  return unpackedResults(n, batch, perm, unpackData);
}

// --- eigenvalues and singular values through the real embedding -------

/// Every other entry of the last dim of `values` (..., 2k): the embedding
/// gives each eigenvalue or singular value twice, adjacent once sorted.
Value everyOther(NodeImporter &n, Value values) {
  SmallVector<int64_t> pairsShape(typeOf(values).getShape());
  pairsShape.back() /= 2;
  pairsShape.push_back(2);
  Value first = sliceAlong(n, viewValue(n, values, pairsShape), pairsShape.size() - 1, 0, 1);
  pairsShape.pop_back();
  return viewValue(n, first, pairsShape);
}

/// _linalg_eigh(A, UPLO, compute_v) of complex Hermitian matrices, the
/// eigenvalues alone: those of the real embedding [[X, -Y], [Y, X]], which
/// is symmetric for a Hermitian X + iY and has each of its eigenvalues
/// twice; Y is rebuilt antisymmetric from the triangle UPLO names (the
/// diagonal's imaginary part is not read, as LAPACK's). The eigenvectors,
/// when read, are aten.hermitian_eigenvectors of the embedding's (aten.eigh):
/// its columns made complex and orthonormal by Gram-Schmidt, each
/// eigenvalue's once.
absl::StatusOr<Values> complexEigh(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "A"));
  ASSIGN_OR_RETURN(std::string uplo, n.stringAttr("UPLO", "L"));
  ASSIGN_OR_RETURN(bool computeV, n.boolAttr("compute_v", true));
  if (uplo != "L" && uplo != "U")
    return n.error("UPLO must be 'L' or 'U', not '" + uplo + "'");
  if (n.numResults() < 2)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 2"));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "eigenvalues", /*square=*/true));
  const int64_t order = size.first;
  Value lower = flatPairs(n, uplo == "U" ? adjoint(n, a) : a);
  Value re = realPart(n, lower), im = imagPart(n, lower);
  // Y antisymmetric from its strictly lower triangle.
  RankedTensorType parts = typeOf(re);
  Type i1 = n.b().getI1Type();
  Value below = gridConstant<bool>(n, order, order, i1, [](int64_t i, int64_t j) { return i > j; });
  Value above = gridConstant<bool>(n, order, order, i1, [](int64_t i, int64_t j) { return i < j; });
  PartMath m(n, parts);
  Value zero = m.number(0.0);
  Value mirrored = m.neg(transposed(n, im));
  Value y = m.where(below, im, m.where(above, mirrored, zero));
  ASSIGN_OR_RETURN(Value embedded, embeddingWithin(n, pack(n, re, y), "eigenvalues"));
  auto valuesType = RankedTensorType::get({parts.getDimSize(0), 2 * order}, parts.getElementType());
  if (!computeV || n.resultLeftOut(1)) {
    Value doubled = n.b().create<aten::EigvalshOp>(n.loc(), valuesType, embedded);
    ASSIGN_OR_RETURN(Value values, asResult(n, everyOther(n, doubled), 0));
    ASSIGN_OR_RETURN(Value vectors, emptyResult(n, 1));
    return Values{values, vectors};
  }
  auto eigh = n.b().create<aten::EighOp>(n.loc(), TypeRange{valuesType, typeOf(embedded)},
                                         embedded);
  ASSIGN_OR_RETURN(Value values, readResult(n, everyOther(n, eigh.getEigenvalues()), 0));
  auto pairsType = RankedTensorType::get({parts.getDimSize(0), order, order, 2},
                                         parts.getElementType());
  Value complexVectors = n.b().create<aten::HermitianEigenvectorsOp>(n.loc(), pairsType,
                                                                     eigh.getEigenvectors());
  ASSIGN_OR_RETURN(Value vectors, asResult(n, complexVectors, 1));
  return Values{values, vectors};
}

/// _linalg_svd(A, full_matrices, compute_uv, driver) of complex matrices:
/// aten.svd of the real embedding of A (of A^H when A is wide: A^H =
/// U' S V'^H gives U = V' and Vh = U'^H), which has each singular value
/// twice; the vectors, when read, are aten.complex_singular_vectors of the
/// embedding's (its pairs of columns made complex, u and v taken together
/// by Gram-Schmidt). One aten.svdvals when no vectors are computed or read.
absl::StatusOr<Values> complexSvd(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "A"));
  ASSIGN_OR_RETURN(bool fullMatrices, n.boolAttr("full_matrices", false));
  ASSIGN_OR_RETURN(bool computeUv, n.boolAttr("compute_uv", true));
  if (n.numResults() < 3)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 3"));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "singular values", /*square=*/false));
  auto [rows, cols] = size;
  const bool wide = rows < cols;
  Value batch = flatPairs(n, wide ? adjoint(n, a) : a);
  ASSIGN_OR_RETURN(Value embedded, embeddingWithin(n, batch, "singular values"));
  RankedTensorType type = typeOf(embedded);
  Type element = type.getElementType();
  const int64_t count = type.getDimSize(0);
  const int64_t tall = std::max(rows, cols), narrow = std::min(rows, cols);
  if (!computeUv || (n.resultLeftOut(0) && n.resultLeftOut(2))) {
    Value doubled = n.b().create<aten::SvdvalsOp>(
        n.loc(), RankedTensorType::get({count, 2 * narrow}, element), embedded);
    ASSIGN_OR_RETURN(Value u, emptyResult(n, 0));
    ASSIGN_OR_RETURN(Value s, asResult(n, everyOther(n, doubled), 1));
    ASSIGN_OR_RETURN(Value vh, emptyResult(n, 2));
    return Values{u, s, vh};
  }
  const int64_t kept = fullMatrices ? tall : narrow;
  auto svd = n.b().create<aten::SvdOp>(
      n.loc(),
      TypeRange{RankedTensorType::get({count, 2 * tall, 2 * kept}, element),
                RankedTensorType::get({count, 2 * narrow}, element),
                RankedTensorType::get({count, 2 * narrow, 2 * narrow}, element)},
      embedded, fullMatrices ? n.b().getUnitAttr() : UnitAttr());
  auto vectors = n.b().create<aten::ComplexSingularVectorsOp>(
      n.loc(),
      TypeRange{RankedTensorType::get({count, tall, kept, 2}, element),
                RankedTensorType::get({count, narrow, narrow, 2}, element)},
      svd.getU(), svd.getS(), svd.getV());
  Value left = vectors.getLeft(), right = vectors.getRight();
  ASSIGN_OR_RETURN(Value u, readResult(n, wide ? right : left, 0));
  ASSIGN_OR_RETURN(Value s, readResult(n, everyOther(n, svd.getS()), 1));
  ASSIGN_OR_RETURN(Value vh, readResult(n, adjoint(n, wide ? left : right), 2));
  return Values{u, s, vh};
}

// --- inverses and solves through the real embedding --------------------

/// linalg_inv_ex(A, check_errors) -> (inverse, info) of complex matrices:
/// the embedding's inverse, whose left column of blocks is (re, im) of
/// A^-1; info from lu_factor(A), as eager's, when it is read.
absl::StatusOr<Values> complexInvEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "A"));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "inverses", /*square=*/true));
  const int64_t order = size.first;
  ASSIGN_OR_RETURN(Value embedded, embeddingWithin(n, a, "inverses"));
  Value left = sliceAlong(n, identityMatrix(n, 2 * order, typeOf(embedded).getElementType()), 1,
                          0, order);
  ASSIGN_OR_RETURN(Value x, solveBatch(n, embedded, left));
  ASSIGN_OR_RETURN(Value inverse, asResult(n, stackedRowsAsPairs(n, x, order), 0));
  if (n.numResults() < 2 || n.resultLeftOut(1))
    return Values{inverse, Value()};
  ASSIGN_OR_RETURN(Value info, asResult(n, zeroPivotInfo(n, factorise(n, flatPairs(n, a))), 1));
  return Values{inverse, info};
}

/// linalg_matrix_exp(A) of complex matrices: the exponential of the real
/// embedding [[X, -Y], [Y, X]] (one aten.matrix_exp of the flattened
/// batch), whose left column of blocks is (re, im) of exp(A). exp is a
/// power series and the embedding a ring homomorphism that is continuous,
/// so it maps exp(A) to exp of the embedding; eager's complex kernel is
/// the same scaling and squaring on complex products (its 1-norm of A is
/// at most the embedding's, so Kiln may square once more).
absl::StatusOr<Values> complexMatrixExp(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "self"));
  ArrayRef<int64_t> shape = complexShape(a);
  if (shape.size() >= 2 && shape[shape.size() - 2] == shape.back() &&
      typeOf(a).getNumElements() == 0) {
    // No matrices, or matrices of order 0: an empty result, as eager's.
    ASSIGN_OR_RETURN(Value empty, emptyResult(n, 0));
    return Values{empty};
  }
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "matrix exponentials", /*square=*/true));
  const int64_t order = size.first;
  ASSIGN_OR_RETURN(Value embedded, embeddingWithin(n, flatPairs(n, a), "matrix exponentials"));
  Value e = n.b().create<aten::MatrixExpOp>(n.loc(), typeOf(embedded), embedded);
  Value left = sliceAlong(n, e, /*dim=*/2, 0, order);
  Value pairs = stackedRowsAsPairs(n, left, order);
  ASSIGN_OR_RETURN(Value result, asResult(n, viewValue(n, pairs, typeOf(a).getShape()), 0));
  return Values{result};
}

/// _linalg_solve_ex(A, B, left, check_errors) -> (result, LU, pivots,
/// info) of complex matrices: the embedding solves [re B; im B] (X A = B
/// for left=False as A^T X^T = B^T); the LU, pivots and info are
/// lu_factor(A)'s, as eager's, when they are read.
absl::StatusOr<Values> complexSolveEx(NodeImporter &n) {
  ASSIGN_OR_RETURN(bool left, n.boolAttr("left", true));
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  Type element = type.getElementType();
  ASSIGN_OR_RETURN(Value a, pairsOf(n, "A", element));
  ASSIGN_OR_RETURN(Value rhs, pairsOf(n, "B", element));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "solves", /*square=*/true));
  const int64_t order = size.first;
  ArrayRef<int64_t> aShape = complexShape(a), bShape = complexShape(rhs);
  if (bShape.empty())
    return n.error("B must have at least one dim");
  bool vector = bShape.size() == 1 ||
                (bShape.size() + 1 == aShape.size() && bShape == aShape.drop_back());
  if (!left && !vector)
    rhs = transposedPairs(n, rhs);
  Value re = realPart(n, rhs), im = imagPart(n, rhs);
  if (vector) {
    re = asColumn(n, re);
    im = asColumn(n, im);
  }
  ArrayRef<int64_t> columns = typeOf(re).getShape();
  if (columns.size() < 2 || columns[columns.size() - 2] != order)
    return n.error(absl::StrCat("B must have ", order, " rows (", left ? "A X = B" : "X A = B",
                                ")"));
  SmallVector<int64_t> stackedShape(columns);
  stackedShape[stackedShape.size() - 2] *= 2;
  Value stacked = n.b().create<aten::CatOp>(
      n.loc(), typeOf(re).clone(stackedShape), ValueRange{re, im},
      n.b().getI64IntegerAttr(static_cast<int64_t>(columns.size()) - 2));
  ASSIGN_OR_RETURN(Value embedded,
                   embeddingWithin(n, left ? a : transposedPairs(n, a), "solves"));
  ASSIGN_OR_RETURN(Value x, solveBatch(n, embedded, stacked));
  Value solved = stackedRowsAsPairs(n, x, order);
  if (!left && !vector)
    solved = transposedPairs(n, solved);
  ASSIGN_OR_RETURN(Value result, asResult(n, solved, 0));
  Values results{result};
  if (n.numResults() < 4)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 4"));
  ASSIGN_OR_RETURN(Values factorisation, factorisationResults(n, flatPairs(n, a), 1));
  results.append(factorisation.begin(), factorisation.end());
  return results;
}

// --- QR -----------------------------------------------------------------

/// linalg_qr(A, mode) -> (Q, R) of complex matrices (zgeqr2, zung2r).
absl::StatusOr<Values> complexQr(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "A"));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "QR factorisations", /*square=*/false));
  return qrResults(n, a, size, /*trailing=*/1);
}

/// geqrf(A) -> (a, tau) of complex matrices.
absl::StatusOr<Values> complexGeqrf(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "self"));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "QR factorisations", /*square=*/false));
  return geqrfResults(n, a, size, /*trailing=*/1);
}

/// linalg_householder_product(A, tau) of complex reflectors.
absl::StatusOr<Values> complexHouseholderProduct(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "input"));
  ASSIGN_OR_RETURN(Value tau, pairsLike(n, "tau", a));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "Householder products", /*square=*/false));
  return householderProductResult(n, a, tau, size, /*trailing=*/1);
}

/// ormqr(A, tau, C, left, transpose) of complex reflectors: transpose is
/// Q's conjugate transpose, as eager's (zunm2r's 'C').
absl::StatusOr<Values> complexOrmqr(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value a, complexArgument(n, "self"));
  ASSIGN_OR_RETURN(Value tau, pairsLike(n, "input2", a));
  ASSIGN_OR_RETURN(Value c, pairsLike(n, "input3", a));
  ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "Householder products", /*square=*/false));
  RETURN_IF_ERROR(
      complexMatrixSize(n, c, "Householder products", /*square=*/false).status());
  return ormqrResult(n, a, tau, c, size, /*trailing=*/1, [&](Value v) { return adjoint(n, v); });
}

} // namespace

namespace linalg {

namespace {

/// linalg_eig's results from one aten.eigvals or aten.eig of the (N,
/// order, order) batch, real or complex pairs.
absl::StatusOr<Values> eigResults(NodeImporter &n, Value batch, int64_t order) {
  if (n.numResults() < 2)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 2"));
  if (!n.resultIsComplex(0))
    return n.error("the eigenvalues must be declared complex");
  Type element = typeOf(batch).getElementType();
  const int64_t count = typeOf(batch).getDimSize(0);
  auto partsType = RankedTensorType::get({count, order}, element);
  auto vectorsType = RankedTensorType::get({count, order, order}, element);
  if (n.resultLeftOut(1)) {
    auto eig = n.b().create<aten::EigvalsOp>(n.loc(), TypeRange{partsType, partsType}, batch);
    ASSIGN_OR_RETURN(Value values, asResult(n, pack(n, eig.getReal(), eig.getImag()), 0));
    return Values{values, Value()};
  }
  if (!n.resultIsComplex(1))
    return n.error("the eigenvectors must be declared complex");
  auto eig = n.b().create<aten::EigOp>(n.loc(), TypeRange{partsType, partsType, vectorsType, vectorsType},
                                       batch);
  ASSIGN_OR_RETURN(Value values, readResult(n, pack(n, eig.getReal(), eig.getImag()), 0));
  ASSIGN_OR_RETURN(Value vectors, asResult(n, pack(n, eig.getVectorsReal(), eig.getVectorsImag()), 1));
  return Values{values, vectors};
}

} // namespace

/// linalg_eig(A) -> (eigenvalues, eigenvectors), both complex: for a real
/// f32 or f64 (..., n, n) A, or a complex one as pairs, one aten.eig of
/// the flattened batch (one aten.eigvals when nothing reads the vectors),
/// the real and imaginary parts packed as pairs.
absl::StatusOr<Values> linalgEig(NodeImporter &n) {
  if (n.isComplexTensor("self")) {
    // Complex matrices with no elements are importOverEmptyTensors' (every
    // result is empty).
    ASSIGN_OR_RETURN(Value a, complexArgument(n, "self"));
    ASSIGN_OR_RETURN(auto size, complexMatrixSize(n, a, "eigenvalues", /*square=*/true));
    return eigResults(n, flatPairs(n, a), size.first);
  }
  ASSIGN_OR_RETURN(Value a, n.tensor("self"));
  if (n.numResults() < 2)
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has 2"));
  if (!n.resultIsComplex(0))
    return n.error("the eigenvalues must be declared complex");
  RankedTensorType type = typeOf(a);
  int64_t rank = type.getRank();
  if (rank >= 2 && type.getNumElements() == 0 &&
      type.getDimSize(rank - 1) == type.getDimSize(rank - 2)) {
    // No matrices, or matrices of order 0: no eigenvalues or vectors, as
    // eager's.
    Values empty(2);
    for (int i : {0, 1}) {
      if (n.resultLeftOut(i))
        continue;
      if (!n.resultIsComplex(i))
        return n.error(absl::StrCat("result ", i, " must be declared complex"));
      ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(i));
      if (declared.getNumElements() != 0)
        return n.error(absl::StrCat("result ", i, " is declared with elements"));
      empty[i] = n.constant(declared.getElementType(), 0.0, declared.getShape());
    }
    return empty;
  }
  ASSIGN_OR_RETURN(int64_t order, squareOrder(n, a, "eigenvalues"));
  return eigResults(n, flatBatch(n, a), order);
}

} // namespace linalg

void addComplexLinalgHandlers(OpHandlerTable &t) {
  t["aten.linalg_qr.default"] = complexQr;
  t["aten.geqrf.default"] = complexGeqrf;
  t["aten.linalg_householder_product.default"] = complexHouseholderProduct;
  t["aten.ormqr.default"] = complexOrmqr;
  t["aten.linalg_eig.default"] = linalg::linalgEig;
  t["aten.linalg_inv_ex.default"] = complexInvEx;
  t["aten.linalg_matrix_exp.default"] = complexMatrixExp;
  t["aten._linalg_solve_ex.default"] = complexSolveEx;
  t["aten._linalg_det.default"] = complexDet;
  t["aten._linalg_slogdet.default"] = complexSlogdet;
  t["aten.linalg_lu_factor_ex.default"] = complexLuFactorEx;
  t["aten.linalg_lu.default"] = complexLinalgLu;
  t["aten.linalg_cholesky_ex.default"] = complexCholeskyEx;
  t["aten.linalg_solve_triangular.default"] = complexSolveTriangular;
  t["aten.triangular_solve.default"] = complexLegacyTriangularSolve;
  t["aten.cholesky_solve.default"] = complexCholeskySolve;
  t["aten.cholesky_inverse.default"] = complexCholeskyInverse;
  t["aten.linalg_lu_solve.default"] = complexLuSolve;
  t["aten.lu_unpack.default"] = complexLuUnpack;
  t["aten._linalg_eigh.default"] = complexEigh;
  t["aten._linalg_svd.default"] = complexSvd;
}

} // namespace kiln
