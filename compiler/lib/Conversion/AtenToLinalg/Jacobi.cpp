//===- Jacobi.cpp - symmetric eigen and singular value decompositions -----===//
//
// This file implements the lowering of aten.eigvalsh, aten.eigh,
// aten.svdvals and aten.svd to scf.for loops over each matrix of the batch,
// by Jacobi rotations:
//
// - eigvalsh and eigh are cyclic Jacobi on the matrix made symmetric from
//   its lower triangle: each sweep rotates every pair (p, q) with the
//   rotation J that zeroes s[p, q] (t = sign(theta) / (|theta| +
//   sqrt(theta^2 + 1)), theta = (s[q, q] - s[p, p]) / (2 s[p, q])), until
//   the off-diagonal squares sum to at most n (eps |S|_F)^2 (the rotated
//   pair itself set to 0). J^T S J rotates rows p and q, then the 2x2
//   block's columns, and mirrors the rest of columns p and q from the rows
//   (S stays symmetric). The eigenvalues are the diagonal; eigh also
//   applies each J to V (the identity at first), so that S = V^T A V
//   throughout and V's columns are the eigenvectors.
// - svdvals and svd are one-sided (Hestenes) Jacobi on A^T, whose rows are
//   A's columns: each sweep rotates every pair of columns whose cosine
//   exceeds sqrt(m) eps (dgesvj's test) so that they become orthogonal,
//   until a sweep rotates none. The singular values are the column norms;
//   svd also applies each rotation to V, so that the rotated matrix is
//   A V, and U's column j is its column j over that norm. The columns of
//   U no singular value defines (a column whose squared norm is below the
//   smallest normal number, and those past n for a complete U) complete it
//   to an orthonormal basis: the unit vector e_i with the least weight in
//   the columns so far (sum_c U[i, c]^2, so at least 1/m of it lies
//   outside their span), orthogonalised against them twice (Gram-Schmidt;
//   twice is enough) and normalised.
// - The values are sorted (ascending for eigenvalues, descending for
//   singular values) by a selection sort that moves each vector with its
//   value.
//
// The vectors (V, U and the rotated columns) are kept transposed, one per
// row, and transposed once at the end: the rotations, dot products and
// swaps then walk contiguous rows (LAPACK's column-major columns), which
// vectorise, where strided columns were gathers and scatters.
//
// Each stops after 60 sweeps (Jacobi converges quadratically; a handful of
// sweeps is the rule) and works on the matrix divided by its largest
// |entry| (squares cannot overflow), its values scaled back. A vector's
// sign, and the basis of a repeated value's space, are the rotations'
// choice and not LAPACK's; PyTorch leaves both unspecified. The code is
// O(n^3) scalar work per sweep and its size does not grow with n.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"
#include "ScalarLoops.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// The most Jacobi sweeps; each stops early once converged.
constexpr int64_t kMaxSweeps = 60;

/// Swaps rows i and k of matrix m of the (N, rows, cols) tensor `t`.
Value swapRows(OpBuilder &b, Location loc, Value t, Value m, Value i, Value k) {
  int64_t cols = cast<RankedTensorType>(t.getType()).getDimSize(2);
  return swapEntries(b, loc, t, cols, [&](Value c, int which) {
    return SmallVector<Value>{m, which ? k : i, c};
  });
}

/// Selection sort of row m of the (N, n) tensor `values`, ascending (or
/// descending); the rows of matrix m of each tensor in `vectors` (the
/// vectors, transposed) move with their values. The sorted values, then
/// the vectors.
Carried sortWithVectors(OpBuilder &b, Location loc, Value values, ValueRange vectors, Value m,
                        int64_t n, bool ascending) {
  Scalars s(b, loc);
  Carried init{values};
  init.append(vectors.begin(), vectors.end());
  return s.loop(s.index(0), s.index(n), init,
                [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  Value first = Scalars::at(b, l, u[0], {m, i});
                  auto [index, value] = bestIndex(
                      b, l, plusOne(b, l, i), s.index(n), i, first,
                      ascending ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT,
                      [&](OpBuilder &b, Location l, Value k) -> Value {
                        return Scalars::at(b, l, u[0], {m, k});
                      });
                  Value t = Scalars::put(b, l, first, u[0], {m, index});
                  Carried out{Scalars::put(b, l, value, t, {m, i})};
                  for (Value v : u.drop_front())
                    out.push_back(swapRows(b, l, v, m, i, index));
                  return out;
                });
}

/// The rotation (c, s) with t = sign(x) / (|x| + sqrt(x^2 + 1)), the
/// identity where `skip`.
std::pair<Value, Value> rotation(OpBuilder &b, Location l, Value x, Value skip) {
  Type element = x.getType();
  Value one = b.create<arith::ConstantOp>(l, element, b.getFloatAttr(element, 1.0));
  Value zero = b.create<arith::ConstantOp>(l, element, b.getFloatAttr(element, 0.0));
  Value root = b.create<math::SqrtOp>(
      l, b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, x), one));
  Value t = b.create<arith::DivFOp>(l, b.create<math::CopySignOp>(l, one, x),
                                    b.create<arith::AddFOp>(l, b.create<math::AbsFOp>(l, x), root));
  t = b.create<arith::SelectOp>(l, skip, zero, t);
  Value c = b.create<arith::DivFOp>(
      l, one, b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, t, t), one)));
  return {c, b.create<arith::MulFOp>(l, c, t)};
}

/// (x, y) <- (c x - s y, s x + c y) for x = t[m, p(k)], y = t[m, q(k)] over
/// k in [0, count), where `at(k, which)` gives the index of x (which = 0)
/// or y (which = 1).
Value rotatePairs(OpBuilder &b, Location loc, Value t, int64_t count, Value c, Value s,
                  function_ref<SmallVector<Value>(Value, int)> at) {
  Scalars sc(b, loc);
  return sc.loop(sc.index(0), sc.index(count), {t},
                 [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
                   SmallVector<Value> xi = at(k, 0), yi = at(k, 1);
                   Value x = Scalars::at(b, l, u[0], xi), y = Scalars::at(b, l, u[0], yi);
                   Value nx = b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, c, x),
                                                     b.create<arith::MulFOp>(l, s, y));
                   Value ny = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, s, x),
                                                     b.create<arith::MulFOp>(l, c, y));
                   Value v = Scalars::put(b, l, nx, u[0], xi);
                   return {Scalars::put(b, l, ny, v, yi)};
                 })[0];
}

/// Rows p and q of matrix m of `t` (N, >= n, cols) rotated by (c, s).
Value rotateRows(OpBuilder &b, Location l, Value t, Value m, Value p, Value q, Value c, Value s) {
  int64_t cols = cast<RankedTensorType>(t.getType()).getDimSize(2);
  return rotatePairs(b, l, t, cols, c, s, [&](Value k, int which) {
    return SmallVector<Value>{m, which ? q : p, k};
  });
}

/// The dot product of rows p and q of matrix m of `t` (N, >= n, cols).
Value rowDot(OpBuilder &b, Location l, Value t, Value m, Value p, Value q) {
  Scalars s(b, l);
  auto type = cast<RankedTensorType>(t.getType());
  return sumOfProducts(b, l, s.index(0), s.index(type.getDimSize(2)),
                       s.number(type.getElementType(), 0.0),
                       [&](OpBuilder &b, Location l, Value k) -> std::pair<Value, Value> {
                         return {Scalars::at(b, l, t, {m, p, k}), Scalars::at(b, l, t, {m, q, k})};
                       });
}

/// Loops over the pairs p < q of [0, n) carrying `state`.
Carried forEachPair(OpBuilder &b, Location loc, int64_t n, ValueRange state,
                    function_ref<Carried(OpBuilder &, Location, Value, Value, ValueRange)> body) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(n), state,
                [&](OpBuilder &b, Location l, Value p, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  return s.loop(plusOne(b, l, p), s.index(n), u,
                                [&](OpBuilder &b, Location l, Value q, ValueRange w) -> Carried {
                                  return body(b, l, p, q, w);
                                });
                });
}

/// Up to kMaxSweeps runs of `sweep` over `state`, which returns the new
/// state and whether it has converged; none after it has.
Carried sweepUntilConverged(OpBuilder &b, Location loc, ValueRange state,
                            function_ref<Carried(OpBuilder &, Location, ValueRange)> sweep) {
  Scalars s(b, loc);
  SmallVector<Value> init(state);
  init.push_back(b.create<arith::ConstantOp>(loc, b.getBoolAttr(false)));
  Carried out = s.loop(
      s.index(0), s.index(kMaxSweeps), init,
      [&](OpBuilder &b, Location l, Value, ValueRange u) -> Carried {
        auto branch = b.create<scf::IfOp>(
            l, u.back(),
            [&](OpBuilder &tb, Location tl) { tb.create<scf::YieldOp>(tl, u); },
            [&](OpBuilder &eb, Location el) {
              eb.create<scf::YieldOp>(el, sweep(eb, el, u.drop_back()));
            });
        return Carried(branch.getResults());
      });
  out.pop_back();
  return out;
}

/// Matrix m of `t` (rows x cols) divided by its largest |entry| (left as
/// it is when that is 0, NaN or infinite), and that divisor: Jacobi then
/// works on entries of at most 1, whose squares and products cannot
/// overflow, and its values are scaled back by the divisor.
std::pair<Value, Value> scaledToUnitMax(OpBuilder &b, Location loc, Value t, Value m,
                                        int64_t rows, int64_t cols) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(t.getType()).getElementType();
  auto overEntries = [&](ValueRange init,
                         function_ref<Carried(OpBuilder &, Location, Value, Value, ValueRange)> body) {
    return s.loop(s.index(0), s.index(rows), init,
                  [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                    Scalars s(b, l);
                    return s.loop(s.index(0), s.index(cols), u,
                                  [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
                                    return body(b, l, i, j, w);
                                  });
                  });
  };
  Value largest = overEntries({s.number(element, 0.0)},
                              [&](OpBuilder &b, Location l, Value i, Value j, ValueRange w) -> Carried {
                                Value x = b.create<math::AbsFOp>(l, Scalars::at(b, l, t, {m, i, j}));
                                return {b.create<arith::MaximumFOp>(l, w[0], x)};
                              })[0];
  Value usable = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, largest, s.number(element, 0.0)),
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, largest,
                              s.number(element, std::numeric_limits<double>::infinity())));
  Value divisor = b.create<arith::SelectOp>(loc, usable, largest, s.number(element, 1.0));
  Value scaled = overEntries({t}, [&](OpBuilder &b, Location l, Value i, Value j,
                                      ValueRange w) -> Carried {
    Value x = b.create<arith::DivFOp>(l, Scalars::at(b, l, w[0], {m, i, j}), divisor);
    return {Scalars::put(b, l, x, w[0], {m, i, j})};
  })[0];
  return {scaled, divisor};
}

/// The (N, n, n) batch of identity matrices of `type`.
Value identityBatch(OpBuilder &b, Location loc, RankedTensorType type) {
  Scalars s(b, loc);
  Value one = s.number(type.getElementType(), 1.0);
  return s.loop(s.index(0), s.index(type.getDimSize(0)), {s.zeros(type)},
                [&](OpBuilder &b, Location l, Value m, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  return s.loop(s.index(0), s.index(type.getDimSize(1)), u,
                                [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                                  return {Scalars::put(b, l, one, w[0], {m, i, i})};
                                });
                })[0];
}

/// Two-sided Jacobi on matrix m of `work` (N, n, n), in place: row m of
/// `values` gets its eigenvalues, ascending, and matrix m of `vectors`
/// (the identity on entry; none when null) the eigenvectors in their
/// order. Returns work, values and (when given) vectors.
Carried eigenOne(OpBuilder &b, Location l, Value work, Value values, Value vectors, Value m,
                 int64_t n) {
  Scalars s(b, l);
  Type element = cast<RankedTensorType>(work.getType()).getElementType();
  Value zero = s.number(element, 0.0), two = s.number(element, 2.0);
  // Symmetric from the lower triangle; the squares' sum.
  Value symmetric = forEachPair(
      b, l, n, {work}, [&](OpBuilder &b, Location l, Value p, Value q, ValueRange u) -> Carried {
        return {Scalars::put(b, l, Scalars::at(b, l, u[0], {m, q, p}), u[0], {m, p, q})};
      })[0];
  auto [unit, divisor] = scaledToUnitMax(b, l, symmetric, m, n, n);
  Value frobenius = s.loop(s.index(0), s.index(n), {zero},
                           [&](OpBuilder &b, Location l, Value i, ValueRange acc) -> Carried {
                             Value row = rowDot(b, l, unit, m, i, i);
                             return {b.create<arith::AddFOp>(l, acc[0], row)};
                           })[0];
  Value eps = epsilonOf(b, l, element);
  Value tolerance = b.create<arith::MulFOp>(
      l, b.create<arith::MulFOp>(l, s.number(element, static_cast<double>(n)), frobenius),
      b.create<arith::MulFOp>(l, eps, eps));
  Carried state{unit};
  if (vectors)
    state.push_back(vectors);
  Carried converged = sweepUntilConverged(
      b, l, state, [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Carried rotated = forEachPair(
            b, l, n, u, [&](OpBuilder &b, Location l, Value p, Value q, ValueRange w) -> Carried {
              Value t = w[0];
              Value apq = Scalars::at(b, l, t, {m, p, q});
              Value skip = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, apq, zero);
              Value theta = b.create<arith::DivFOp>(
                  l,
                  b.create<arith::SubFOp>(l, Scalars::at(b, l, t, {m, q, q}),
                                          Scalars::at(b, l, t, {m, p, p})),
                  b.create<arith::MulFOp>(l, two, apq));
              auto [cos, sin] = rotation(b, l, theta, skip);
              // J^T S (rows p, q: contiguous), then (J^T S) J: in columns p
              // and q only the 2x2 block differs from the rows by symmetry,
              // so the block is rotated and the rest mirrored from the rows.
              t = rotateRows(b, l, t, m, p, q, cos, sin);
              for (Value row : {p, q})
                t = rotatePairs(b, l, t, 1, cos, sin, [&](Value, int which) {
                  return SmallVector<Value>{m, row, which ? q : p};
                });
              Scalars sl(b, l);
              t = sl.loop(
                  sl.index(0), sl.index(n), {t},
                  [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
                    Value other = b.create<arith::AndIOp>(
                        l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, k, p),
                        b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, k, q));
                    Value x = u[0];
                    for (Value row : {p, q}) {
                      Value mirrored = b.create<arith::SelectOp>(
                          l, other, Scalars::at(b, l, x, {m, row, k}),
                          Scalars::at(b, l, x, {m, k, row}));
                      x = Scalars::put(b, l, mirrored, x, {m, k, row});
                    }
                    return {x};
                  })[0];
              // The rotation zeroes (p, q) and (q, p); what rounding leaves
              // there is dropped (NR's jacobi), or kept where nothing
              // rotated.
              Value kept = Scalars::at(b, l, t, {m, p, q});
              Value cleared = b.create<arith::SelectOp>(l, skip, kept, zero);
              t = Scalars::put(b, l, cleared, t, {m, p, q});
              Carried next{Scalars::put(b, l, cleared, t, {m, q, p})};
              if (w.size() > 1) // (V J)^T
                next.push_back(rotateRows(b, l, w[1], m, p, q, cos, sin));
              return next;
            });
        Value off = forEachPair(
            b, l, n, {zero}, [&](OpBuilder &b, Location l, Value p, Value q, ValueRange acc) -> Carried {
              Value x = Scalars::at(b, l, rotated[0], {m, p, q});
              return {b.create<arith::AddFOp>(l, acc[0], b.create<arith::MulFOp>(l, x, x))};
            })[0];
        rotated.push_back(b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ULE, off, tolerance));
        return rotated;
      });
  Value diagonal = s.loop(s.index(0), s.index(n), {values},
                          [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                            Value w = b.create<arith::MulFOp>(
                                l, Scalars::at(b, l, converged[0], {m, i, i}), divisor);
                            return {Scalars::put(b, l, w, u[0], {m, i})};
                          })[0];
  Carried sorted = sortWithVectors(b, l, diagonal, ValueRange(converged).drop_front(), m, n,
                                   /*ascending=*/true);
  Carried out{converged[0]};
  out.append(sorted.begin(), sorted.end());
  return out;
}

/// One-sided Jacobi on matrix m of `work` (N, n, rows), A's transpose, in
/// place: its rows are A's columns, so that the dot products and rotations
/// walk contiguous memory (LAPACK's columns). Row m of `values` gets the
/// singular values, descending, and (when `vectorsT`, the identity on
/// entry, is given) matrix m of vectorsT gets V^T, and work's rows move
/// with their values. Returns work, values and (when given) vectorsT;
/// work's rows are then (A V)^T scaled by 1 / max |A|.
Carried singularOne(OpBuilder &b, Location l, Value work, Value values, Value vectorsT, Value m,
                    int64_t rows, int64_t n) {
  Scalars s(b, l);
  Type element = cast<RankedTensorType>(work.getType()).getElementType();
  Value two = s.number(element, 2.0);
  Value rootRowsEps = b.create<arith::MulFOp>(
      l, epsilonOf(b, l, element), s.number(element, std::sqrt(static_cast<double>(rows))));
  auto [unit, divisor] = scaledToUnitMax(b, l, work, m, n, rows);
  Carried state{unit};
  if (vectorsT)
    state.push_back(vectorsT);
  Carried converged = sweepUntilConverged(
      b, l, state, [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Carried init(u);
        init.push_back(b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
        return forEachPair(
            b, l, n, init, [&](OpBuilder &b, Location l, Value p, Value q, ValueRange w) -> Carried {
              Value t = w[0];
              Value alpha = rowDot(b, l, t, m, p, p);
              Value beta = rowDot(b, l, t, m, q, q);
              Value gamma = rowDot(b, l, t, m, p, q);
              // dgesvj's test: |gamma| > sqrt(m) eps |p| |q| (the norms
              // apart, so that their product cannot overflow).
              Value bound = b.create<arith::MulFOp>(
                  l, b.create<arith::MulFOp>(l, rootRowsEps, b.create<math::SqrtOp>(l, alpha)),
                  b.create<math::SqrtOp>(l, beta));
              Value rotate = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT,
                                                     b.create<math::AbsFOp>(l, gamma), bound);
              Value skip = b.create<arith::XOrIOp>(
                  l, rotate, b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
              Value zeta = b.create<arith::DivFOp>(l, b.create<arith::SubFOp>(l, beta, alpha),
                                                   b.create<arith::MulFOp>(l, two, gamma));
              auto [cos, sin] = rotation(b, l, zeta, skip);
              Carried next{rotateRows(b, l, t, m, p, q, cos, sin)};
              if (w.size() > 2) // (V J)^T
                next.push_back(rotateRows(b, l, w[1], m, p, q, cos, sin));
              next.push_back(b.create<arith::AndIOp>(l, w.back(), skip));
              return next;
            });
      });
  Value norms = s.loop(s.index(0), s.index(n), {values},
                       [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
                         Value squares = rowDot(b, l, converged[0], m, j, j);
                         Value norm =
                             b.create<arith::MulFOp>(l, b.create<math::SqrtOp>(l, squares), divisor);
                         return {Scalars::put(b, l, norm, u[0], {m, j})};
                       })[0];
  Carried moved;
  if (vectorsT)
    moved = {converged[1], converged[0]};
  Carried sorted =
      sortWithVectors(b, l, norms, moved, m, n, /*ascending=*/false);
  if (!vectorsT)
    return {converged[0], sorted[0]};
  return {sorted[2], sorted[0], sorted[1]};
}

/// Row j of matrix m of `u` (N, k, rows) made orthogonal to the other rows
/// (which are orthonormal or zero), twice.
Value orthogonalise(OpBuilder &b, Location loc, Value u, Value m, Value j, int64_t rows, int64_t k) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(u.getType()).getElementType();
  Value zero = s.number(element, 0.0);
  for (int pass = 0; pass < 2; ++pass)
    u = s.loop(s.index(0), s.index(k), {u},
               [&](OpBuilder &b, Location l, Value c, ValueRange w) -> Carried {
                 Scalars s(b, l);
                 Value dot = rowDot(b, l, w[0], m, c, j);
                 Value other = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, c, j);
                 Value d = b.create<arith::SelectOp>(l, other, dot, zero);
                 return s.loop(s.index(0), s.index(rows), w,
                               [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                                 Value x = b.create<arith::SubFOp>(
                                     l, Scalars::at(b, l, t[0], {m, j, i}),
                                     b.create<arith::MulFOp>(l, d, Scalars::at(b, l, t[0], {m, c, i})));
                                 return {Scalars::put(b, l, x, t[0], {m, j, i})};
                               });
               })[0];
  return u;
}

/// Row j of matrix m of `u` (N, k, rows) divided by `norm`.
Value scaleRow(OpBuilder &b, Location loc, Value u, Value m, Value j, int64_t rows, Value norm) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(rows), {u},
                [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                  Value x = b.create<arith::DivFOp>(l, Scalars::at(b, l, t[0], {m, j, i}), norm);
                  return {Scalars::put(b, l, x, t[0], {m, j, i})};
                })[0];
}

/// Matrix m of `ut` (N, k, rows, zeros on entry) filled with U^T, the left
/// singular vectors of `work` ((A V)^T scaled, its rows in the values'
/// order) in its rows: each row of work over its norm, then the rows no
/// value defines completed to an orthonormal basis.
Value leftVectors(OpBuilder &b, Location loc, Value work, Value ut, Value m, int64_t rows,
                  int64_t n, int64_t k) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(ut.getType()).getElementType();
  Value zero = s.number(element, 0.0), one = s.number(element, 1.0);
  Value smallest = s.number(element, element.isF32()
                                         ? double(std::numeric_limits<float>::min())
                                         : std::numeric_limits<double>::min());
  ut = s.loop(s.index(0), s.index(n), {ut},
              [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
                Value squares = rowDot(b, l, work, m, j, j);
                // Unordered: a NaN row stays NaN, as eager's would.
                Value defined =
                    b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UGE, squares, smallest);
                Value norm = b.create<math::SqrtOp>(l, squares);
                Scalars s(b, l);
                return s.loop(s.index(0), s.index(rows), w,
                              [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                                Value x = b.create<arith::DivFOp>(
                                    l, Scalars::at(b, l, work, {m, j, i}), norm);
                                x = b.create<arith::SelectOp>(l, defined, x, zero);
                                return {Scalars::put(b, l, x, t[0], {m, j, i})};
                              });
              })[0];
  return s.loop(
      s.index(0), s.index(k), {ut}, [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
        Value empty = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                              rowDot(b, l, w[0], m, j, j), zero);
        auto fill = b.create<scf::IfOp>(
            l, empty,
            [&](OpBuilder &b, Location l) {
              Scalars s(b, l);
              // The unit vector with the least weight in the rows so far.
              Value lightest =
                  bestIndex(b, l, s.index(0), s.index(rows), s.index(0),
                            s.number(element, std::numeric_limits<double>::infinity()),
                            arith::CmpFPredicate::OLT,
                            [&](OpBuilder &b, Location l, Value i) -> Value {
                              Scalars s(b, l);
                              return s.loop(s.index(0), s.index(k), {zero},
                                            [&](OpBuilder &b, Location l, Value row,
                                                ValueRange acc) -> Carried {
                                              Value x = Scalars::at(b, l, w[0], {m, row, i});
                                              return {b.create<arith::AddFOp>(
                                                  l, acc[0], b.create<arith::MulFOp>(l, x, x))};
                                            })[0];
                            })
                      .first;
              Value t = Scalars::put(b, l, one, w[0], {m, j, lightest});
              t = orthogonalise(b, l, t, m, j, rows, k);
              Value norm = b.create<math::SqrtOp>(l, rowDot(b, l, t, m, j, j));
              b.create<scf::YieldOp>(l, scaleRow(b, l, t, m, j, rows, norm));
            },
            [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, w[0]); });
        return Carried(fill.getResults());
      })[0];
}

/// `t` (N, r, c) transposed into a fresh (N, c, r) tensor.
Value transposedBatch(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  auto to = RankedTensorType::get({type.getDimSize(0), type.getDimSize(2), type.getDimSize(1)},
                                  type.getElementType());
  return b.create<linalg::TransposeOp>(loc, t, Scalars(b, loc).fresh(to),
                                       ArrayRef<int64_t>{0, 2, 1})
      .getResult()[0];
}

template <typename Op>
struct EigenLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  static constexpr bool kVectors = std::is_same_v<Op, EighOp>;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    Carried init{s.fresh(type, adaptor.getSelf()),
                 s.fresh(RankedTensorType::get({batch, n}, type.getElementType()))};
    if (kVectors)
      init.push_back(identityBatch(b, loc, type));
    Carried out = s.loop(s.index(0), s.index(batch), init,
                         [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
                           return eigenOne(b, l, c[0], c[1], kVectors ? c[2] : Value(), m, n);
                         });
    if (kVectors)
      rewriter.replaceOp(op, {out[1], transposedBatch(b, loc, out[2])});
    else
      rewriter.replaceOp(op, out[1]);
    return success();
  }
};

template <typename Op>
struct SingularLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  static constexpr bool kVectors = std::is_same_v<Op, SvdOp>;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), rows = type.getDimSize(1), n = type.getDimSize(2);
    // A^T: its rows are A's columns.
    Carried init{transposedBatch(b, loc, adaptor.getSelf()),
                 s.fresh(RankedTensorType::get({batch, n}, element))};
    int64_t k = n;
    if constexpr (kVectors) {
      k = op.getComplete() ? rows : n;
      init.push_back(identityBatch(b, loc, RankedTensorType::get({batch, n, n}, element)));
      init.push_back(s.zeros(RankedTensorType::get({batch, k, rows}, element)));
    }
    Carried out = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Carried one = singularOne(b, l, c[0], c[1], kVectors ? c[2] : Value(), m, rows, n);
          if (kVectors)
            one.push_back(leftVectors(b, l, one[0], c[3], m, rows, n, k));
          return one;
        });
    if (kVectors)
      rewriter.replaceOp(op, {transposedBatch(b, loc, out[3]), out[1],
                              transposedBatch(b, loc, out[2])});
    else
      rewriter.replaceOp(op, out[1]);
    return success();
  }
};

} // namespace

void kiln::aten::populateJacobiPatterns(RewritePatternSet &patterns) {
  patterns.add<EigenLowering<EigvalshOp>, EigenLowering<EighOp>, SingularLowering<SvdvalsOp>,
               SingularLowering<SvdOp>>(patterns.getContext());
}
