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

/// Reads and writes of matrix m of a (N, n, n) batch.
struct Matrix {
  mlir::Value m;
  int64_t n;

  mlir::Value at(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value i,
                 mlir::Value j) const {
    return Scalars::at(b, l, t, {m, i, j});
  }
  mlir::Value put(mlir::OpBuilder &b, mlir::Location l, mlir::Value v, mlir::Value t,
                  mlir::Value i, mlir::Value j) const {
    return Scalars::put(b, l, v, t, {m, i, j});
  }
};

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
