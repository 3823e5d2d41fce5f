//===- AtenLinalgOps.cpp - verifiers of the linear-algebra aten ops -------===//
//
// This file implements the verifiers of aten.lu_factor, lu_permutation,
// linalg_solve, triangular_solve, qr, geqrf, householder_product, ormqr,
// ldl_factor, ldl_solve, eigvalsh, eigh, eigvals, eig, svdvals, svd, cholesky and matrix_exp: batches of f32 or
// f64 matrices of order at most kMaxLuOrder, the bound of their scalar
// loops' cubic work (lu_permutation's operand is getrf's i64 pivots).
// lu_factor, cholesky and triangular_solve also take complex matrices as
// (N, m, n, 2) pairs.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "VerifyUtils.h"

#include <algorithm>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// Whether an op also takes complex matrices as (N, m, n, 2) pairs of
/// their (real, imaginary) parts, the importer's complex layout.
enum class Pairs { refused, allowed };

/// The matrix dims (N, m, n) of `type`: its shape, or its shape without
/// the trailing 2 of complex pairs where `pairs` allows them; empty when
/// it is neither.
ArrayRef<int64_t> matrixDims(RankedTensorType type, Pairs pairs) {
  ArrayRef<int64_t> in = type.getShape();
  if (in.size() == 3)
    return in;
  if (pairs == Pairs::allowed && in.size() == 4 && in[3] == 2)
    return in.drop_back();
  return {};
}

/// `a` is a (N, n, n) batch of f32 or f64 matrices (or of complex pairs
/// where `pairs` allows them), N >= 1, n in [1, kMaxLuOrder].
LogicalResult verifySquareBatch(Operation *op, Value a, Pairs pairs = Pairs::refused) {
  auto type = cast<RankedTensorType>(a.getType());
  ArrayRef<int64_t> in = matrixDims(type, pairs);
  if (in.size() != 3 || in[1] != in[2] ||
      !(type.getElementType().isF32() || type.getElementType().isF64()))
    return op->emitOpError(pairs == Pairs::allowed
                               ? "takes a (N, n, n) batch of f32 or f64 matrices, or "
                                 "(N, n, n, 2) of complex pairs"
                               : "takes a (N, n, n) batch of f32 or f64 matrices");
  if (in[0] < 1 || in[1] < 1 || in[1] > kMaxLuOrder)
    return op->emitOpError() << "needs N >= 1 matrices of order n in [1, "
                             << kMaxLuOrder << "]";
  return success();
}

/// `v` is (N, 1) of `width`-bit integers.
bool isPerMatrix(Value v, int64_t batch, unsigned width) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getElementType().isInteger(width) &&
         type.getShape() == ArrayRef<int64_t>{batch, 1};
}

} // namespace

static LogicalResult verifyMatrixBatch(Operation *op, Value a, Pairs pairs = Pairs::refused);

LogicalResult LuFactorOp::verify() {
  if (failed(verifyMatrixBatch(*this, getSelf(), Pairs::allowed)))
    return failure();
  auto type = cast<RankedTensorType>(getSelf().getType());
  ArrayRef<int64_t> in = matrixDims(type, Pairs::allowed);
  if (getLu().getType() != type)
    return emitOpError("lu must have the input's type");
  auto pivots = cast<RankedTensorType>(getPivots().getType());
  if (!pivots.getElementType().isInteger(64) ||
      pivots.getShape() != ArrayRef<int64_t>{in[0], std::min(in[1], in[2])})
    return emitOpError("pivots must be (B, min(m, n)) i64");
  if (!isPerMatrix(getOdd(), in[0], 1))
    return emitOpError("odd must be (B, 1) i1");
  return success();
}

LogicalResult LuPermutationOp::verify() {
  auto pivots = cast<RankedTensorType>(getPivots().getType());
  auto result = cast<RankedTensorType>(getType());
  if (pivots.getRank() != 2 || !pivots.getElementType().isInteger(64))
    return emitOpError("pivots must be (B, k) i64");
  if (result.getRank() != 2 || !result.getElementType().isInteger(64) ||
      result.getDimSize(0) != pivots.getDimSize(0) ||
      result.getDimSize(1) < pivots.getDimSize(1))
    return emitOpError("result must be (B, n) i64 with n >= k");
  return success();
}

/// A solve's operands: a (N, n, n) square batch, rhs (N, n, k) of its
/// element type, and a result of rhs's type; where `pairs` allows them,
/// a (N, n, n, 2) batch of complex pairs against (N, n, k, 2) pairs.
static LogicalResult verifySolve(Operation *op, Value aValue, Value rhsValue, Type result,
                                 Pairs pairs = Pairs::refused) {
  if (failed(verifySquareBatch(op, aValue, pairs)))
    return failure();
  auto a = cast<RankedTensorType>(aValue.getType());
  auto rhs = cast<RankedTensorType>(rhsValue.getType());
  const bool complex = a.getRank() == 4;
  ArrayRef<int64_t> in = matrixDims(a, pairs);
  ArrayRef<int64_t> b = complex ? matrixDims(rhs, pairs) : rhs.getShape();
  if (rhs.getElementType() != a.getElementType() || b.size() != 3 ||
      (complex && rhs.getRank() != 4) || b[0] != in[0] || b[1] != in[1] || b[2] < 1)
    return op->emitOpError(complex ? "rhs must be (N, n, k, 2) pairs of a's element type, k >= 1"
                                   : "rhs must be (N, n, k) of a's element type, k >= 1");
  if (result != rhs)
    return op->emitOpError("result must have rhs's type");
  return success();
}

LogicalResult LinalgSolveOp::verify() {
  return verifySolve(*this, getA(), getRhs(), getType());
}

LogicalResult TriangularSolveOp::verify() {
  return verifySolve(*this, getA(), getRhs(), getType(), Pairs::allowed);
}

/// `shape`, with the pair dim of complex pairs when `pairs`.
static SmallVector<int64_t> withPairs(ArrayRef<int64_t> shape, bool pairs) {
  SmallVector<int64_t> full(shape);
  if (pairs)
    full.push_back(2);
  return full;
}

LogicalResult QrOp::verify() {
  if (failed(verifyMatrixBatch(*this, getSelf(), Pairs::allowed)))
    return failure();
  auto type = cast<RankedTensorType>(getSelf().getType());
  ArrayRef<int64_t> in = matrixDims(type, Pairs::allowed);
  const bool pairs = type.getRank() == 4;
  const int64_t columns = getComplete() ? in[1] : std::min(in[1], in[2]);
  auto q = cast<RankedTensorType>(getQ().getType());
  auto r = cast<RankedTensorType>(getR().getType());
  if (q.getElementType() != type.getElementType() ||
      q.getShape() != ArrayRef<int64_t>(withPairs({in[0], in[1], columns}, pairs)))
    return emitOpError() << "q must be (N, m, " << (getComplete() ? "m" : "min(m, n)") << ")"
                         << (pairs ? " pairs" : "");
  if (r.getElementType() != type.getElementType() ||
      r.getShape() != ArrayRef<int64_t>(withPairs({in[0], columns, in[2]}, pairs)))
    return emitOpError() << "r must be (N, " << (getComplete() ? "m" : "min(m, n)") << ", n)"
                         << (pairs ? " pairs" : "");
  return success();
}

/// `v` has element type `element` and shape `shape`.
static bool hasType(Value v, Type element, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getElementType() == element && type.getShape() == shape;
}

/// `a` is a (N, m, n) batch of f32 or f64 matrices (or of complex pairs
/// where `pairs` allows them) with 1 <= m, n <= kMaxLuOrder (geqrf and
/// the reflectors' operands).
static LogicalResult verifyMatrixBatch(Operation *op, Value a, Pairs pairs) {
  auto type = cast<RankedTensorType>(a.getType());
  ArrayRef<int64_t> in = matrixDims(type, pairs);
  if (in.size() != 3 || !(type.getElementType().isF32() || type.getElementType().isF64()))
    return op->emitOpError(pairs == Pairs::allowed
                               ? "takes a (N, m, n) batch of f32 or f64 matrices, or "
                                 "(N, m, n, 2) of complex pairs"
                               : "takes a (N, m, n) batch of f32 or f64 matrices");
  if (in[0] < 1 || in[1] < 1 || in[2] < 1 || in[1] > kMaxLuOrder || in[2] > kMaxLuOrder)
    return op->emitOpError() << "needs N >= 1 matrices with 1 <= m, n <= " << kMaxLuOrder;
  return success();
}

/// `tau` is (N, k) of `a`'s element type with k <= `most` ((N, k, 2) pairs
/// for complex reflectors).
static LogicalResult verifyTau(Operation *op, Value a, Value tau, int64_t most) {
  auto type = cast<RankedTensorType>(tau.getType());
  auto aType = cast<RankedTensorType>(a.getType());
  const bool pairs = aType.getRank() == 4;
  if (type.getRank() != (pairs ? 3 : 2) || (pairs && type.getDimSize(2) != 2) ||
      type.getElementType() != aType.getElementType() ||
      type.getDimSize(0) != aType.getDimSize(0) || type.getDimSize(1) > most)
    return op->emitOpError() << "tau must be (N, k" << (pairs ? ", 2" : "")
                             << ") of the reflectors' element type with k <= " << most;
  return success();
}

LogicalResult GeqrfOp::verify() {
  if (failed(verifyMatrixBatch(*this, getSelf(), Pairs::allowed)))
    return failure();
  auto type = cast<RankedTensorType>(getSelf().getType());
  ArrayRef<int64_t> in = matrixDims(type, Pairs::allowed);
  const bool pairs = type.getRank() == 4;
  if (getA().getType() != getSelf().getType())
    return emitOpError("a must have the input's type");
  if (!hasType(getTau(), type.getElementType(),
               withPairs({in[0], std::min(in[1], in[2])}, pairs)))
    return emitOpError() << "tau must be (N, min(m, n)" << (pairs ? ", 2" : "")
                         << ") of the input's element type";
  return success();
}

LogicalResult HouseholderProductOp::verify() {
  if (failed(verifyMatrixBatch(*this, getSelf(), Pairs::allowed)))
    return failure();
  ArrayRef<int64_t> in = matrixDims(getSelf().getType(), Pairs::allowed);
  if (in[2] > in[1])
    return emitOpError("needs n <= m");
  if (failed(verifyTau(*this, getSelf(), getTau(), in[2])))
    return failure();
  if (getType() != getSelf().getType())
    return emitOpError("result must have the input's type");
  return success();
}

LogicalResult OrmqrOp::verify() {
  if (failed(verifyMatrixBatch(*this, getSelf(), Pairs::allowed)) ||
      failed(verifyMatrixBatch(*this, getOther(), Pairs::allowed)))
    return failure();
  if (getSelf().getType().getRank() != getOther().getType().getRank())
    return emitOpError("other must be complex pairs exactly when the reflectors are");
  ArrayRef<int64_t> in = matrixDims(getSelf().getType(), Pairs::allowed),
                    other = matrixDims(getOther().getType(), Pairs::allowed);
  if (failed(verifyTau(*this, getSelf(), getTau(), std::min(in[1], in[2]))))
    return failure();
  if (other[0] != in[0] || other[1] != in[1] ||
      getOther().getType().getElementType() != getSelf().getType().getElementType())
    return emitOpError("other must be (N, m, p) of the reflectors' element type");
  if (getType() != getOther().getType())
    return emitOpError("result must have other's type");
  return success();
}

LogicalResult EigvalshOp::verify() {
  if (failed(verifySquareBatch(*this, getSelf())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getSelf());
  if (getType().getElementType() != getSelf().getType().getElementType() ||
      getType().getShape() != ArrayRef<int64_t>{in[0], in[1]})
    return emitOpError("result must be (N, n) of the input's element type");
  return success();
}

/// A square batch `self` (real, or complex pairs) and its eigenvalues'
/// parts, (N, n) each.
static LogicalResult verifyEigenvalueParts(Operation *op, Value self, Value re, Value im) {
  if (failed(verifySquareBatch(op, self, Pairs::allowed)))
    return failure();
  auto type = cast<RankedTensorType>(self.getType());
  ArrayRef<int64_t> in = matrixDims(type, Pairs::allowed);
  Type element = type.getElementType();
  if (!hasType(re, element, {in[0], in[1]}) || !hasType(im, element, {in[0], in[1]}))
    return op->emitOpError("real and imag must be (N, n) of the input's element type");
  return success();
}

LogicalResult EigvalsOp::verify() {
  return verifyEigenvalueParts(*this, getSelf(), getReal(), getImag());
}

LogicalResult LdlFactorOp::verify() {
  if (failed(verifySquareBatch(*this, getSelf())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getSelf());
  if (getLd().getType() != getSelf().getType())
    return emitOpError("ld must have the input's type");
  auto pivots = cast<RankedTensorType>(getPivots().getType());
  if (!pivots.getElementType().isInteger(64) || pivots.getShape() != ArrayRef<int64_t>{in[0], in[1]})
    return emitOpError("pivots must be (B, n) i64");
  auto info = cast<RankedTensorType>(getInfo().getType());
  if (!info.getElementType().isInteger(64) || info.getShape() != ArrayRef<int64_t>{in[0], 1})
    return emitOpError("info must be (B, 1) i64");
  return success();
}

LogicalResult LdlSolveOp::verify() {
  if (failed(verifySolve(*this, getLd(), getRhs(), getType())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getLd());
  auto pivots = cast<RankedTensorType>(getPivots().getType());
  if (!pivots.getElementType().isInteger(64) || pivots.getShape() != ArrayRef<int64_t>{in[0], in[1]})
    return emitOpError("pivots must be (N, n) i64");
  return success();
}

LogicalResult EigOp::verify() {
  if (failed(verifyEigenvalueParts(*this, getSelf(), getReal(), getImag())))
    return failure();
  ArrayRef<int64_t> in = matrixDims(getSelf().getType(), Pairs::allowed);
  Type element = getSelf().getType().getElementType();
  if (!hasType(getVectorsReal(), element, in) || !hasType(getVectorsImag(), element, in))
    return emitOpError("vectors_real and vectors_imag must be (N, n, n) of the input's element type");
  return success();
}

/// `a` is a (N, m, n) batch of f32 or f64 matrices with 1 <= n <= m <=
/// kMaxLuOrder (svdvals and svd).
static LogicalResult verifyTallBatch(Operation *op, Value a) {
  auto type = cast<RankedTensorType>(a.getType());
  ArrayRef<int64_t> in = type.getShape();
  if (in.size() != 3 || !(type.getElementType().isF32() || type.getElementType().isF64()))
    return op->emitOpError("takes a (N, m, n) batch of f32 or f64 matrices");
  if (in[0] < 1 || in[2] < 1 || in[1] < in[2] || in[1] > kMaxLuOrder)
    return op->emitOpError() << "needs N >= 1 matrices with 1 <= n <= m <= " << kMaxLuOrder;
  return success();
}

LogicalResult SvdvalsOp::verify() {
  if (failed(verifyTallBatch(*this, getSelf())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getSelf());
  if (!hasType(getResult(), getSelf().getType().getElementType(), {in[0], in[2]}))
    return emitOpError("result must be (N, n) of the input's element type");
  return success();
}

LogicalResult EighOp::verify() {
  if (failed(verifySquareBatch(*this, getSelf())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getSelf());
  Type element = getSelf().getType().getElementType();
  if (!hasType(getEigenvalues(), element, {in[0], in[1]}))
    return emitOpError("eigenvalues must be (N, n) of the input's element type");
  if (!hasType(getEigenvectors(), element, in))
    return emitOpError("eigenvectors must be (N, n, n) of the input's element type");
  return success();
}

LogicalResult HermitianEigenvectorsOp::verify() {
  if (failed(verifySquareBatch(*this, getSelf())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getSelf());
  if (in[1] % 2 != 0)
    return emitOpError("the embedding's order must be even (2n)");
  int64_t n = in[1] / 2;
  if (!hasType(getResult(), getSelf().getType().getElementType(), {in[0], n, n, 2}))
    return emitOpError("the result must be (N, n, n, 2) pairs of the input's element type");
  return success();
}

LogicalResult ComplexSingularVectorsOp::verify() {
  auto vType = cast<RankedTensorType>(getV().getType());
  ArrayRef<int64_t> v = vType.getShape();
  Type element = vType.getElementType();
  if (v.size() != 3 || v[0] < 1 || v[1] < 2 || v[1] != v[2] || v[1] % 2 != 0 ||
      !(element.isF32() || element.isF64()))
    return emitOpError("v must be a (N, 2n, 2n) batch of f32 or f64, N >= 1, n >= 1");
  const int64_t batch = v[0], n = v[1] / 2;
  auto u = cast<RankedTensorType>(getU().getType());
  if (u.getRank() != 3 || u.getElementType() != element || u.getDimSize(0) != batch ||
      u.getDimSize(1) % 2 != 0 || u.getDimSize(1) < v[1] ||
      (u.getDimSize(2) != v[1] && u.getDimSize(2) != u.getDimSize(1)))
    return emitOpError("u must be (N, 2m, 2n) or (N, 2m, 2m) of v's element type, m >= n");
  if (u.getDimSize(1) > kMaxLuOrder)
    return emitOpError() << "u's 2m rows must be at most " << kMaxLuOrder;
  if (!hasType(getS(), element, {batch, 2 * n}))
    return emitOpError("s must be (N, 2n) of v's element type");
  const int64_t m = u.getDimSize(1) / 2, k = u.getDimSize(2) / 2;
  if (!hasType(getLeft(), element, {batch, m, k, 2}))
    return emitOpError() << "left must be (N, " << m << ", " << k << ", 2) pairs";
  if (!hasType(getRight(), element, {batch, n, n, 2}))
    return emitOpError() << "right must be (N, " << n << ", " << n << ", 2) pairs";
  return success();
}

LogicalResult SvdOp::verify() {
  if (failed(verifyTallBatch(*this, getSelf())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getSelf());
  Type element = getSelf().getType().getElementType();
  if (!hasType(getU(), element, {in[0], in[1], getComplete() ? in[1] : in[2]}))
    return emitOpError() << "u must be (N, m, " << (getComplete() ? "m" : "n")
                         << ") of the input's element type";
  if (!hasType(getS(), element, {in[0], in[2]}))
    return emitOpError("s must be (N, n) of the input's element type");
  if (!hasType(getV(), element, {in[0], in[2], in[2]}))
    return emitOpError("v must be (N, n, n) of the input's element type");
  return success();
}

LogicalResult CholeskyOp::verify() {
  if (failed(verifySquareBatch(*this, getSelf(), Pairs::allowed)))
    return failure();
  if (getL().getType() != getSelf().getType())
    return emitOpError("l must have the input's type");
  if (!isPerMatrix(getInfo(), shapeOf(getSelf())[0], 64))
    return emitOpError("info must be (N, 1) i64");
  return success();
}

LogicalResult MatrixExpOp::verify() {
  if (failed(verifySquareBatch(*this, getSelf())))
    return failure();
  if (getType() != getSelf().getType())
    return emitOpError("result must have the input's type");
  return success();
}
