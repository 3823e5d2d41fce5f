//===- MatrixLoops.h - building blocks of the decompositions --------------===//
//
// This file declares what the eigen, singular value and QR lowerings
// (SymmetricEigen.cpp, Jacobi.cpp, Factorisations.cpp) share above
// ScalarLoops.h: rows as vectors (swaps, rotations, dot products, a sort
// that moves them with their values), a matrix scaled to unit max,
// identity matrices, transposed batches, the element type's limits, scaled
// norms (dnrm2, dlapy2), and Householder reflectors: made (dlarfg) and
// applied row by row (dlarf).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ScalarLoops.h"

#include "mlir/IR/BuiltinTypes.h"

#include <limits>

namespace kiln::aten {

/// The element type's constants the algorithms test against (ulp is
/// LAPACK's DLAMCH('P'), safmin its DLAMCH('S')).
struct Limits {
  mlir::Value zero, one, two, half, ulp, safmin;

  Limits(mlir::OpBuilder &b, mlir::Location l, mlir::Type element) {
    Scalars s(b, l);
    const bool f32 = element.isF32();
    zero = s.number(element, 0.0);
    one = s.number(element, 1.0);
    two = s.number(element, 2.0);
    half = s.number(element, 0.5);
    ulp = epsilonOf(b, l, element);
    safmin = s.number(element, f32 ? std::numeric_limits<float>::min()
                                   : std::numeric_limits<double>::min());
  }
};

/// What reads entry x of a vector inside a loop.
using EntryAt = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)>;

/// The largest |entry(x)| for x in [lo, hi) (0 when the range is empty).
mlir::Value largestMagnitude(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lo, mlir::Value hi,
                             const Limits &c, EntryAt entry);

/// The 2-norm of entry(x) for x in [lo, hi), scaled by the largest |entry|
/// as dnrm2 scales it (no square overflows or underflows).
mlir::Value scaledNorm(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lo, mlir::Value hi,
                       const Limits &c, EntryAt entry);

/// sqrt(x^2 + y^2) as dlapy2 computes it (no square overflows); 0 for 0.
mlir::Value hypotenuse(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Value y,
                       const Limits &c);

/// dlarfg's reflector H = I - tau (1, v) (1, v)^T with H (alpha, x) =
/// (beta, 0, ...) and v = x scale.
struct Householder {
  mlir::Value tau, beta, scale;
};

/// dlarfg for alpha and a tail x of 2-norm `tailNorm` (scaledNorm's):
/// beta = -sign(alpha) hypotenuse(alpha, tailNorm), tau = (beta - alpha) /
/// beta, scale = 1 / (alpha - beta); none (tau 0, beta alpha, scale 1)
/// when the tail is 0.
Householder householder(mlir::OpBuilder &b, mlir::Location l, mlir::Value alpha,
                        mlir::Value tailNorm, const Limits &c);

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
