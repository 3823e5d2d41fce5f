//===- ComplexEigen.h - the pieces of zgeev in scalar loops ---------------===//
//
// This file declares what the lowering of aten.eigvals and aten.eig on
// complex pairs (ComplexEigen.cpp) shares with zlahqr's single-shift QR
// sweeps (ComplexSchur.cpp): complex reads and writes of one matrix of a
// (N, n, n, 2) batch, the complex square root, and the QR loop itself.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ComplexScalars.h"
#include "GeneralEigen.h"

namespace kiln::aten {

/// Entry (i, j) of matrix `mat` of the pairs `t`.
inline Complex entryOf(mlir::OpBuilder &b, mlir::Location l, const Matrix &mat, mlir::Value t,
                       mlir::Value i, mlir::Value j) {
  return pairAt(b, l, t, {mat.m, i, j});
}

/// `t` with entry (i, j) of matrix `mat` set to `v`.
inline mlir::Value withEntry(mlir::OpBuilder &b, mlir::Location l, const Matrix &mat,
                             Complex v, mlir::Value t, mlir::Value i, mlir::Value j) {
  return putPair(b, l, v, t, {mat.m, i, j});
}

/// The principal square root of z (C's csqrt; Fortran's SQRT of a complex).
Complex complexSqrt(mlir::OpBuilder &b, mlir::Location l, Complex z, const Limits &c);

/// |z| as dlapy2 computes it (no square overflows).
mlir::Value modulusOf(mlir::OpBuilder &b, mlir::Location l, Complex z, const Limits &c);

/// What zlahqr leaves: the (triangular with `zt`) matrix, Z^T's rows (with
/// `zt`), and whether some deflation took more than 30 max(10, order)
/// sweeps, order the active block's (LAPACK's info > 0). The eigenvalues
/// are the diagonal's entries.
struct ComplexQrResult {
  mlir::Value h, zt, failed;
};

/// zlahqr on the block [first, last] of matrix `mat` of the Hessenberg
/// pairs `h`. With `zt` (Z^T, one vector per row), also the Schur form
/// (wantt: the sweeps applied to whole rows and columns) and Z's updates
/// (wantz).
ComplexQrResult complexQr(mlir::OpBuilder &b, mlir::Location loc, const Matrix &mat,
                          mlir::Value h, mlir::Value zt, mlir::Value first, mlir::Value last,
                          const Limits &c);

} // namespace kiln::aten
