//===- GeneralEigen.h - the pieces of dgeev in scalar loops ---------------===//
//
// This file declares what the lowering of aten.eigvals and aten.eig
// (GeneralEigen.cpp) shares with dlahqr's Francis QR sweeps (FrancisQr.cpp):
// reads of one matrix of the batch, dlarfg for three entries, and the QR
// loop itself.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MatrixLoops.h"

#include <array>

namespace kiln::aten {

/// dlahqr's and zlahqr's KEXSH: an exceptional shift after this many sweeps
/// without a deflation (at the block's top), twice this many (at its
/// bottom).
constexpr int64_t kExceptionalShiftEvery = 10;

/// Reads and writes of matrix m of a (N, n, n) batch, or of a (N, n, n, 2)
/// batch of complex pairs (`pairs`), whose entries dgebal's and zgebal's
/// common steps exchange, scale and measure part by part.
struct Matrix {
  mlir::Value m;
  int64_t n;
  bool pairs = false;

  mlir::Value at(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                 mlir::Value j) const {
    return Scalars::at(b, l, t, {m, i, j});
  }
  mlir::Value put(mlir::OpBuilder &b, mlir::Location l, mlir::Value v, mlir::Value t,
                  mlir::Value i, mlir::Value j) const {
    return Scalars::put(b, l, v, t, {m, i, j});
  }
  /// Part p of entry (i, j) (the entry itself for a real matrix).
  mlir::Value partAt(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                     mlir::Value j, int64_t p) const;
  mlir::Value partPut(mlir::OpBuilder &b, mlir::Location l, mlir::Value v, mlir::Value t,
                      mlir::Value i, mlir::Value j, int64_t p) const;
  /// `t` with entries (i, j) and (k, q) exchanged.
  mlir::Value swap(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                   mlir::Value j, mlir::Value k, mlir::Value q) const;
  /// `t` with entry (i, j) times the real f.
  mlir::Value scale(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                    mlir::Value j, mlir::Value f) const;
  /// Whether entry (i, j) is 0 (every part).
  mlir::Value isZero(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                     mlir::Value j, mlir::Value zero) const;
  /// |entry (i, j)|, or |re| + |im| of a complex one (dcabs1's measure).
  mlir::Value absSum(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                     mlir::Value j) const;
  /// |entry (i, j)|: the modulus of a complex one.
  mlir::Value magnitude(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                        mlir::Value j, const Limits &c) const;
  /// The 2-norm of the entries `index(x)` for x in [lo, hi) (dnrm2's, or
  /// dznrm2's over both parts).
  mlir::Value norm(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value lo,
                   mlir::Value hi, const Limits &c,
                   llvm::function_ref<std::pair<mlir::Value, mlir::Value>(mlir::Value)> index) const;
};

/// dgebal's (and zgebal's) exchanges: rows that isolate an eigenvalue to the
/// bottom, then columns that do to the left, each recorded in row m of
/// `scales`. Returns h, scales, first and last (the active block).
Carried isolateEigenvalues(mlir::OpBuilder &b, mlir::Location loc, const Matrix &mat,
                           mlir::Value h, mlir::Value scales, const Limits &c);

/// dgebal's (and zgebal's) scaling of the active block [first, last] by
/// powers of 2. Returns h and scales.
Carried balance(mlir::OpBuilder &b, mlir::Location loc, const Matrix &mat, mlir::Value h,
                mlir::Value scales, mlir::Value first, mlir::Value last, const Limits &c);

/// dgebak ('B', 'R') on the vectors, one per row of `vt` (real, or pairs
/// with `mat.pairs`): entry i times scales[i] inside [first, last], then
/// the exchanges undone.
mlir::Value undoBalancing(mlir::OpBuilder &b, mlir::Location loc, const Matrix &mat,
                          mlir::Value vt, mlir::Value scales, mlir::Value first,
                          mlir::Value last);

/// Loops over the entries (i, j) of matrix `mat`, row by row, carrying
/// `init`.
Carried forEachEntry(mlir::OpBuilder &b, mlir::Location loc, const Matrix &mat,
                     mlir::ValueRange init,
                     llvm::function_ref<Carried(mlir::OpBuilder &, mlir::Location, mlir::Value,
                                                mlir::Value, mlir::ValueRange)>
                         body);

/// Whether every entry of matrix m is finite; the matrix set to zeros when
/// not (its values are then NaN, and the loops need numbers).
std::pair<mlir::Value, mlir::Value> finiteOrZero(mlir::OpBuilder &b, mlir::Location loc,
                                                 const Matrix &mat, mlir::Value h,
                                                 const Limits &c);

/// The 1-norm (absSum's) of T's column j above the diagonal: dtrevc3's
/// and ztrevc3's WORK(J).
mlir::Value columnAbove(mlir::OpBuilder &b, mlir::Location loc, const Matrix &mat, mlir::Value t,
                        mlir::Value j, const Limits &c);

/// dtrevc3's guard against overflow in a 1 x 1 step of the back
/// substitution (GeneralEigen.cpp).
mlir::Value overflowScale(Arithmetic &a, mlir::Value bMag, mlir::Value dMag, mlir::Value column,
                          mlir::Value bignum, const Limits &c);

/// dlarfg for alpha and x = (x1, x2): H (alpha, x) = (beta, 0, 0) with
/// H = I - tau (1, v) (1, v)^T. Returns tau, beta, v1, v2 (none: tau 0,
/// beta alpha, v = x, when x is 0).
std::array<mlir::Value, 4> reflector3(mlir::OpBuilder &b, mlir::Location l, mlir::Value alpha,
                                      mlir::Value x1, mlir::Value x2, const Limits &c);

/// What dlahqr leaves: the (quasi-triangular with `schur`) matrix, the
/// eigenvalues' parts in row m of `re` and `im`, Z^T's rows (with
/// `schur`), and whether some deflation took more than 30 max(10, order)
/// sweeps, order the active block's (LAPACK's info > 0).
struct QrResult {
  mlir::Value h, re, im, zt, failed;
};

/// dlahqr on the block [first, last] of matrix `mat` of the Hessenberg
/// batch `h`: the eigenvalues into `re` and `im`. With `zt` (Z^T, one
/// vector per row), also the Schur form (wantt: the sweeps and each 2 x 2
/// block's standardising rotation applied to whole rows and columns) and
/// Z's updates (wantz).
QrResult francisQr(mlir::OpBuilder &b, mlir::Location loc, const Matrix &mat, mlir::Value h,
                   mlir::Value re, mlir::Value im, mlir::Value zt, mlir::Value first,
                   mlir::Value last, const Limits &c);

} // namespace kiln::aten
