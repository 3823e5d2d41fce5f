//===- ComplexFactorisations.h - LU and Cholesky of complex matrices ------===//
//
// This file declares the scalar loops of aten.lu_factor, aten.cholesky
// and aten.triangular_solve on complex matrices, carried as (N, m, n, 2) pairs of their (real,
// imaginary) parts (ComplexFactorisations.cpp); Factorisations.cpp's
// patterns call them for operands of that rank.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ScalarLoops.h"

namespace kiln::aten {

/// True for a tensor of (N, m, n, 2) complex pairs.
bool isComplexMatrixBatch(mlir::Value v);

/// zgetf2 on each matrix of the (N, m, n, 2) batch `a`: (lu pairs, pivots
/// (N, min(m, n)) i64, odd (N, 1) i1), as aten.lu_factor's results.
Carried complexLuFactor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a);

/// zpotf2 (lower) on each matrix of the (N, n, n, 2) batch `a`: (l pairs,
/// info (N, 1) i64), as aten.cholesky's results.
Carried complexCholesky(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a);

/// ztrtrs on each matrix of the (N, n, n, 2) batch `a` against the
/// (N, n, k, 2) pairs `rhs`: forward substitution for a lower triangle,
/// back substitution for an upper one, reading only that triangle (and
/// not the diagonal when `unit`); the solution, as aten.triangular_solve's.
mlir::Value complexTriangularSolve(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                                   mlir::Value rhs, bool upper, bool unit);

} // namespace kiln::aten
