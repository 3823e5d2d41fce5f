//===- ComplexFactorisations.h - LU and Cholesky of complex matrices ------===//
//
// This file declares the scalar loops of aten.lu_factor, aten.cholesky,
// aten.triangular_solve and the QR ops on complex matrices, carried as (N, m, n, 2) pairs of their (real,
// imaginary) parts, one matrix of the batch at a time
// (ComplexFactorisations.cpp); Factorisations.cpp's batch loops call them
// for operands of that rank.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ComplexScalars.h"
#include "MatrixLoops.h"

namespace kiln::aten {

/// zlarfg's reflector H = I - tau (1, v) (1, v)^H with H^H (alpha, x) =
/// (beta, 0, ...), beta real, and v = x scale.
struct ComplexHouseholder {
  Complex tau, head, scale;
};

/// zlarfg for alpha and a tail x of 2-norm `tailNorm`: none (tau 0, head
/// alpha, scale 1) when x is 0 and alpha real; else beta = -sign(re alpha)
/// dlapy3(re alpha, im alpha, ||x||), tau = ((beta - re alpha) / beta,
/// -im alpha / beta), scale = 1 / (alpha - beta) and head beta.
ComplexHouseholder complexHouseholder(mlir::OpBuilder &b, mlir::Location l, Complex alpha,
                                      mlir::Value tailNorm, const Limits &c);

/// H = I - tau v v^H applied from the left to columns [from, width) of
/// matrix m of the pairs `t` (N, rows, width, 2), v 1 at row `head` and
/// `vAt(i, t)` below it, as zlarf does it: w = t[head, :] + sum over the
/// rows i below head of conj(v_i) t[i, :], then t[head, :] -= tau w and
/// t[i, :] -= v_i (tau w). `w` is a (>= width, 2) scratch row. Returns t
/// and w.
Carried applyComplexReflector(
    mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value w, mlir::Value m,
    mlir::Value head, int64_t rows, mlir::Value from, int64_t width, Complex tau,
    llvm::function_ref<Complex(mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::Value)> vAt);

/// True for a tensor of (N, m, n, 2) complex pairs.
bool isComplexMatrixBatch(mlir::Value v);

/// zgetf2 on matrix m of the (N, rows, cols, 2) pairs `lu`, in place: the
/// row swapped with each step's row goes to pivots[m, k] (i64) and the
/// parity of the swaps to odd[m, 0], as the real dgetf2 loops record them
/// (Factorisations.cpp's factorBatch runs either over the batch).
Carried complexFactorOne(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lu,
                         mlir::Value pivots, mlir::Value odd, mlir::Value m, int64_t rows,
                         int64_t cols);

/// zpotf2 (lower) on matrix m of the (N, n, n, 2) pairs `l`, in place:
/// (l, info), as the real dpotf2 loop of CholeskyLowering gives them.
Carried complexCholeskyOne(mlir::OpBuilder &b, mlir::Location loc, mlir::Value l, mlir::Value m,
                           int64_t n);

/// ztrtrs on matrix m of the (N, n, width, 2) pairs `x`, in place, against
/// the triangle of the (N, n, n, 2) pairs `a` that `upper` names: forward
/// substitution for a lower triangle, back substitution for an upper one
/// (not reading the diagonal when `unit`), as the real substitute does.
mlir::Value complexSubstitute(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                              mlir::Value x, mlir::Value m, int64_t n, int64_t width, bool upper,
                              bool unit);

/// zgeqr2 on matrix m of the (N, rows, cols, 2) pairs `a`, in place:
/// beta on the diagonal, v's tail below it, tau in taus[m, j] (pairs), as
/// the real geqr2 of Factorisations.cpp. `w` is a (>= cols, 2) scratch
/// row. Returns a, taus and w.
Carried complexGeqr2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a, mlir::Value taus,
                     mlir::Value w, mlir::Value m, int64_t rows, int64_t cols);

/// The reflectors H_0 .. H_{k-1} of matrix m of `reflectors` (pairs, as
/// geqrf leaves them) and `taus` applied from the left to matrix m of the
/// pairs `target` (N, rows, width, 2): Q target (zung2r, zunm2r 'N'), or
/// with `adjoint` Q^H target (zunm2r 'C'). Returns target and w.
Carried complexApplyReflectors(mlir::OpBuilder &b, mlir::Location loc, mlir::Value target,
                               mlir::Value reflectors, mlir::Value taus, mlir::Value w,
                               mlir::Value m, int64_t rows, int64_t width, int64_t k,
                               bool adjoint);

/// Matrix m of the pairs `t` (N, rows, cols, 2) set to the identity's first
/// columns.
mlir::Value complexIdentityColumns(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t,
                                   mlir::Value m);

} // namespace kiln::aten
