//===- MatrixLoops.h - building blocks of the decompositions --------------===//
//
// This file declares what the eigen, singular value and QR lowerings
// (SymmetricEigen.cpp, Jacobi.cpp, Factorisations.cpp) share above
// ScalarLoops.h: rows as vectors (swaps, rotations, dot products, a sort
// that moves them with their values), a matrix scaled to unit max,
// identity matrices, transposed batches, and a Householder reflector applied
// row by row.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ScalarLoops.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln::aten {

/// Swaps rows i and k of matrix m of the (N, rows, cols) tensor `t`.
mlir::Value swapRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t, mlir::Value m, mlir::Value i, mlir::Value k);

/// Selection sort of row m of the (N, n) tensor `values`, ascending (or
/// descending); the rows of matrix m of each tensor in `vectors` (the
/// vectors, transposed) move with their values. The sorted values, then
/// the vectors.
Carried sortWithVectors(mlir::OpBuilder &b, mlir::Location loc, mlir::Value values, mlir::ValueRange vectors, mlir::Value m,
                        int64_t n, bool ascending);

/// (x, y) <- (c x - s y, s x + c y) for x = t[m, p(k)], y = t[m, q(k)] over
/// k in [0, count), where `at(k, which)` gives the index of x (which = 0)
/// or y (which = 1).
mlir::Value rotatePairs(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t, int64_t count, mlir::Value c, mlir::Value s,
                  llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value, int)> at);

/// Rows p and q of matrix m of `t` (N, >= n, cols) rotated by (c, s).
mlir::Value rotateRows(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value m, mlir::Value p, mlir::Value q, mlir::Value c, mlir::Value s);

/// The dot product of rows p and q of matrix m of `t` (N, >= n, cols).
mlir::Value rowDot(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value m, mlir::Value p, mlir::Value q);

/// Loops over the pairs p < q of [0, n) carrying `state`.
Carried forEachPair(mlir::OpBuilder &b, mlir::Location loc, int64_t n, mlir::ValueRange state,
                    llvm::function_ref<Carried(mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::Value, mlir::ValueRange)> body);

/// Matrix m of `t` (rows x cols) divided by its largest |entry| (left as
/// it is when that is 0, NaN or infinite), and that divisor: the
/// decompositions then work on entries of at most 1, whose squares and products cannot
/// overflow, and scale their values back by the divisor.
std::pair<mlir::Value, mlir::Value> scaledToUnitMax(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t, mlir::Value m,
                                        int64_t rows, int64_t cols);

/// Matrix m of `t` (N, rows, cols) set to the identity's first columns.
mlir::Value identityColumns(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t, mlir::Value m);

/// `t` (N, r, c) transposed into a fresh (N, c, r) tensor.
mlir::Value transposedBatch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t);

/// H = I - tau v v^T applied from the left to columns [from, width) of
/// matrix m of `t` (N, rows, width), where v is 1 at row `head` and
/// `vAt(i, t)` at rows i in (head, rows) (`t` the current value, for a v
/// stored in t itself where the update does not write), as LAPACK's dlarf
/// does it: w = t[head, :] + sum over rows i below head of v_i t[i, :],
/// then t[head, :] -= tau w and t[i, :] -= v_i (tau w). Both walk t's rows,
/// which are contiguous (LAPACK's column-major columns), so that the inner
/// loops vectorise; `w` is a (>= width) scratch row. Returns t and w.
Carried applyReflector(
    mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::Value w, mlir::Value m,
    mlir::Value head, int64_t rows, mlir::Value from, int64_t width, mlir::Value tau,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::Value)>
        vAt);

} // namespace kiln::aten
