//===- Factorisations.cpp - LU, solves, QR and Cholesky as scalar loops ---===//
//
// This file implements the lowering of aten.lu_factor, aten.linalg_solve,
// aten.triangular_solve, aten.qr (aten.geqrf, aten.householder_product and
// aten.ormqr its parts) and aten.cholesky to scf.for loops over
// each matrix of the (N, n, n) batch, written in place into one copy of the
// input, as LAPACK's unblocked routines compute them, and of
// aten.lu_permutation (the row order getrf's swaps leave, for P):
//
// - lu_factor is dgetf2: step k takes the first row p >= k whose column-k
//   entry has the largest magnitude (a NaN never wins, as idamax's strict
//   compare), swaps rows k and p, stores the multipliers below the pivot
//   (0 under a zero pivot: the matrix is singular, and info says so) and
//   subtracts their multiples of row k from the trailing rows.
// - linalg_solve is dgetrs after dgetf2: rhs's rows interchanged as the
//   pivots say, then forward substitution with the unit lower L and back
//   substitution with U (a zero pivot divides: infinities or NaN, as
//   eager's).
// - qr is dgeqr2 then dorg2r (geqrf the first alone, householder_product
//   the second from given reflectors, ormqr dorm2r's application of them
//   to another matrix): reflector j (dlarfg) maps column j's
//   entries from row j down to (beta, 0, ...): none when those below the
//   diagonal are all 0 (tau = 0), else beta = -sign(a[j, j]) *
//   dlapy2(a[j, j], dnrm2(x)) (MatrixLoops' householder),
//   tau = (beta - a[j, j]) / beta and v = (1, x / (a[j, j] - beta)); it is
//   applied to the columns to its right, and Q is the reflectors applied
//   in reverse order to the identity's first columns.
// - triangular_solve is dtrtrs: forward or back substitution reading only
//   the triangle it names (and not the diagonal when it is a unit one).
// - cholesky is dpotf2 (lower, left-looking): column j's pivot is
//   a[j, j] - sum l[j, p]^2 over p < j; its square root is l[j, j], and
//   the entries below are (a[i, j] - sum l[i, p] l[j, p]) / l[j, j]. A
//   pivot that is not > 0 (or NaN) sets info to j + 1 (the first such j);
//   the NaN its square root gives then runs through the later columns,
//   where LAPACK leaves unspecified values. The upper triangle is zeroed.
// Complex matrices (pairs) take ComplexFactorisations.cpp's zgetf2, zpotf2,
// ztrtrs, zgeqr2, zung2r and zunm2r instead, per matrix inside the same
// batch loops. eigvalsh and eigh (a tridiagonal QL) are in SymmetricEigen.cpp, svdvals
// and svd (one-sided Jacobi) in Jacobi.cpp.
//
// The code is O(n^3) scalar work per matrix and its size does not grow
// with n. Rounding differs from LAPACK's blocked updates in the last bits.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "ComplexFactorisations.h"
#include "PopulatePatterns.h"
#include "MatrixLoops.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <type_traits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// x[m, i, c] -= factor * x[m, j, c] over the columns c in [from, width).
Value subtractRow(OpBuilder &b, Location l, Value x, Value m, Value i, Value j, Value factor,
                  int64_t width, Value from) {
  Scalars s(b, l);
  return s.loop(from, s.index(width), {x},
                [&](OpBuilder &b, Location l, Value c, ValueRange t) -> Carried {
                  Value update = b.create<arith::MulFOp>(l, factor, Scalars::at(b, l, t[0], {m, j, c}));
                  Value v = b.create<arith::SubFOp>(l, Scalars::at(b, l, t[0], {m, i, c}), update);
                  return {Scalars::put(b, l, v, t[0], {m, i, c})};
                })[0];
}

/// dgetf2 on matrix `m` of the (N, rows, cols) batch `lu`, in place, for
/// min(rows, cols) steps; the row swapped with each step's row goes to
/// pivots[m, k] (i64) and the parity of the swaps to odd[m, 0] (i1, false
/// on entry).
Carried factorOne(OpBuilder &b, Location loc, Value lu, Value pivots, Value odd, Value m,
                  int64_t rows, int64_t cols) {
  Scalars s(b, loc);
  Value zero = s.index(0), end = s.index(std::min(rows, cols));
  return s.loop(zero, end, {lu, pivots, odd}, [&](OpBuilder &b, Location l, Value k,
                                                   ValueRange c) -> Carried {
    Scalars s(b, l);
    Value lu = c[0];
    Value below = plusOne(b, l, k);
    Value first = b.create<math::AbsFOp>(l, Scalars::at(b, l, lu, {m, k, k}));
    Value p = bestIndex(b, l, below, s.index(rows), k, first, arith::CmpFPredicate::OGT,
                        [&](OpBuilder &b, Location l, Value i) -> Value {
                          return b.create<math::AbsFOp>(l, Scalars::at(b, l, lu, {m, i, k}));
                        })
                  .first;
    lu = swapEntries(b, l, lu, cols, [&](Value j, int which) {
      return SmallVector<Value>{m, which ? p : k, j};
    });
    Value pivotsOut = Scalars::put(b, l, b.create<arith::IndexCastOp>(l, b.getI64Type(), p),
                                   c[1], {m, k});
    Value swapped = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, p, k);
    Value parity = b.create<arith::XOrIOp>(l, Scalars::at(b, l, c[2], {m, s.index(0)}), swapped);
    Value oddOut = Scalars::put(b, l, parity, c[2], {m, s.index(0)});
    Value pivot = Scalars::at(b, l, lu, {m, k, k});
    Type element = pivot.getType();
    Value zeroPivot = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, pivot,
                                              s.number(element, 0.0));
    lu = s.loop(below, s.index(rows), {lu},
                [&](OpBuilder &b, Location l, Value i, ValueRange c) -> Carried {
                  Scalars s(b, l);
                  Value ratio = b.create<arith::DivFOp>(l, Scalars::at(b, l, c[0], {m, i, k}),
                                                        pivot);
                  Value multiplier =
                      b.create<arith::SelectOp>(l, zeroPivot, s.number(element, 0.0), ratio);
                  Value t = Scalars::put(b, l, multiplier, c[0], {m, i, k});
                  return {subtractRow(b, l, t, m, i, k, multiplier, cols, below)};
                })[0];
    return {lu, pivotsOut, oddOut};
  });
}

/// The batch `a` (N, m, n), or complex pairs (N, m, n, 2), factorised:
/// (lu, pivots (N, min(m, n)) i64, odd (N, 1) i1).
Carried factorBatch(OpBuilder &b, Location loc, Value a) {
  Scalars s(b, loc);
  auto type = cast<RankedTensorType>(a.getType());
  int64_t batch = type.getDimSize(0), rows = type.getDimSize(1), cols = type.getDimSize(2);
  const bool complex = isComplexMatrixBatch(a);
  Value lu = s.fresh(type, a);
  Value pivots = s.fresh(RankedTensorType::get({batch, std::min(rows, cols)}, b.getI64Type()));
  Value odd = s.zeros(RankedTensorType::get({batch, 1}, b.getI1Type()));
  return s.loop(s.index(0), s.index(batch), {lu, pivots, odd},
                [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
                  return complex ? complexFactorOne(b, l, c[0], c[1], c[2], m, rows, cols)
                                 : factorOne(b, l, c[0], c[1], c[2], m, rows, cols);
                });
}

struct LuFactorLowering : OpConversionPattern<LuFactorOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LuFactorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, factorBatch(rewriter, op.getLoc(), adaptor.getSelf()));
    return success();
  }
};

/// Row m of x (N, n, width) solved in place against the triangle of `a`
/// (N, n, n) that `upper` names, by forward (lower) or back (upper)
/// substitution: x[i, :] -= a[i, j] x[j, :] over the solved rows j, then
/// x[i, :] /= a[i, i] unless `unit` (a unit diagonal, not read).
Value substitute(OpBuilder &b, Location loc, Value a, Value x, Value m, int64_t n,
                 int64_t width, bool upper, bool unit) {
  Scalars s(b, loc);
  return s.loop(
      s.index(0), s.index(n), {x}, [&](OpBuilder &b, Location l, Value r, ValueRange t) -> Carried {
        Scalars s(b, l);
        Value i = upper ? b.create<arith::SubIOp>(l, s.index(n - 1), r).getResult() : r;
        Value from = upper ? plusOne(b, l, i) : s.index(0);
        Value to = upper ? s.index(n) : i;
        Value y = s.loop(from, to, {t[0]},
                         [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
                           Value factor = Scalars::at(b, l, a, {m, i, j});
                           return {subtractRow(b, l, u[0], m, i, j, factor, width, Scalars(b, l).index(0))};
                         })[0];
        if (unit)
          return {y};
        Value pivot = Scalars::at(b, l, a, {m, i, i});
        return s.loop(s.index(0), s.index(width), {y},
                      [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
                        Value v = b.create<arith::DivFOp>(l, Scalars::at(b, l, u[0], {m, i, col}),
                                                          pivot);
                        return {Scalars::put(b, l, v, u[0], {m, i, col})};
                      });
      })[0];
}

struct LuPermutationLowering : OpConversionPattern<LuPermutationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LuPermutationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    RankedTensorType type = op.getType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    const int64_t steps = cast<RankedTensorType>(adaptor.getPivots().getType()).getDimSize(1);
    Type i64 = b.getI64Type();
    Value perm = s.fresh(type);
    perm = s.loop(s.index(0), s.index(batch), {perm},
                  [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
                    Scalars s(b, l);
                    Value identity = s.loop(
                        s.index(0), s.index(n), {c[0]},
                        [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                          Value v = b.create<arith::IndexCastOp>(l, i64, i);
                          return {Scalars::put(b, l, v, u[0], {m, i})};
                        })[0];
                    return s.loop(
                        s.index(0), s.index(steps), {identity},
                        [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
                          Scalars s(b, l);
                          Value pivot = Scalars::at(b, l, adaptor.getPivots(), {m, j});
                          Value inside = b.create<arith::AndIOp>(
                              l,
                              b.create<arith::CmpIOp>(
                                  l, arith::CmpIPredicate::sge, pivot,
                                  b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0))),
                              b.create<arith::CmpIOp>(
                                  l, arith::CmpIPredicate::slt, pivot,
                                  b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(n))));
                          // Outside [0, n): swap j with itself.
                          Value p = b.create<arith::SelectOp>(
                              l, inside, b.create<arith::IndexCastOp>(l, b.getIndexType(), pivot), j);
                          return {swapEntries(b, l, u[0], 1, [&](Value, int which) {
                            return SmallVector<Value>{m, which ? p : j};
                          })};
                        });
                  })[0];
    rewriter.replaceOp(op, perm);
    return success();
  }
};

struct LinalgSolveLowering : OpConversionPattern<LinalgSolveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LinalgSolveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    RankedTensorType type = op.getType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1), width = type.getDimSize(2);
    Carried lu = factorBatch(b, loc, adaptor.getA());
    Value x = s.fresh(type, adaptor.getRhs());
    x = s.loop(s.index(0), s.index(batch), {x},
               [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
                 Scalars s(b, l);
                 Value x = c[0];
                 // The row interchanges, in order.
                 x = s.loop(s.index(0), s.index(n), {x},
                            [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                              Scalars s(b, l);
                              Value p = b.create<arith::IndexCastOp>(
                                  l, b.getIndexType(), Scalars::at(b, l, lu[1], {m, i}));
                              return s.loop(s.index(0), s.index(width), {t[0]},
                                            [&](OpBuilder &b, Location l, Value col,
                                                ValueRange u) -> Carried {
                                              Value xi = Scalars::at(b, l, u[0], {m, i, col});
                                              Value xp = Scalars::at(b, l, u[0], {m, p, col});
                                              Value w = Scalars::put(b, l, xp, u[0], {m, i, col});
                                              return {Scalars::put(b, l, xi, w, {m, p, col})};
                                            });
                            })[0];
                 // L y = P b (L unit lower), then U x = y.
                 x = substitute(b, l, lu[0], x, m, n, width, /*upper=*/false, /*unit=*/true);
                 return {substitute(b, l, lu[0], x, m, n, width, /*upper=*/true, /*unit=*/false)};
               })[0];
    rewriter.replaceOp(op, x);
    return success();
  }
};

struct TriangularSolveLowering : OpConversionPattern<TriangularSolveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TriangularSolveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    RankedTensorType type = op.getType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1), width = type.getDimSize(2);
    Value a = adaptor.getA();
    const bool complex = isComplexMatrixBatch(a);
    Value x = s.fresh(type, adaptor.getRhs());
    x = s.loop(s.index(0), s.index(batch), {x},
               [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
                 return {(complex ? complexSubstitute : substitute)(
                     b, l, a, c[0], m, n, width, op.getUpper(), op.getUnitriangular())};
               })[0];
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// sum over p < j of t[m, i, p] * t[m, j, p], in the element type.
Value rowProduct(OpBuilder &b, Location l, Value t, Value m, Value i, Value j, Type element) {
  Scalars s(b, l);
  return contiguousDot(b, l, t, {m, i}, t, {m, j}, s.index(0), j, s.number(element, 0.0));
}

/// dgeqr2 on matrix m of `a` (N, rows, cols), in place: reflector j
/// (dlarfg) maps column j's entries from row j down to (beta, 0, ...) and
/// is applied to the columns to its right; beta lands on the diagonal, v's
/// tail below it, tau in taus[m, j]. `w` is a (>= cols) scratch row.
/// Returns a, taus and w.
Carried geqr2(OpBuilder &b, Location loc, Value a, Value taus, Value w, Value m, int64_t rows,
              int64_t cols) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(a.getType()).getElementType();
  return s.loop(
      s.index(0), s.index(std::min(rows, cols)), {a, taus, w},
      [&](OpBuilder &b, Location l, Value j, ValueRange t) -> Carried {
        Scalars s(b, l);
        Value below = plusOne(b, l, j);
        Value a = t[0];
        Value alpha = Scalars::at(b, l, a, {m, j, j});
        // dlarfg on the column from row j down, its tail's norm scaled as
        // dnrm2 scales it (no square overflows or underflows); nothing to
        // reflect when the entries below the diagonal are all 0.
        Limits c(b, l, element);
        Value tailNorm = scaledNorm(b, l, below, s.index(rows), c, [&](OpBuilder &b, Location l, Value i) {
          return Scalars::at(b, l, a, {m, i, j});
        });
        Householder h = householder(b, l, alpha, tailNorm, c);
        Value beta = h.beta, tauJ = h.tau, scale = h.scale;
        a = s.loop(below, s.index(rows), {a},
                   [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                     Value x = b.create<arith::MulFOp>(l, Scalars::at(b, l, u[0], {m, i, j}), scale);
                     return {Scalars::put(b, l, x, u[0], {m, i, j})};
                   })[0];
        // H = I - tau v v^T on the columns to the right (v[j] = 1); v_i from
        // the loop's value: the update never writes column j.
        Carried applied = applyReflector(b, l, a, t[2], m, j, rows, below, cols, tauJ,
                                         [&](OpBuilder &b, Location l, Value i, Value current) {
                                           return Scalars::at(b, l, current, {m, i, j});
                                         });
        a = Scalars::put(b, l, beta, applied[0], {m, j, j});
        return {a, Scalars::put(b, l, tauJ, t[1], {m, j}), applied[1]};
      });
}

/// The reflectors H_0 .. H_{k-1} stored as geqrf leaves them (v_j's tail
/// below the diagonal of column j of matrix m of `reflectors`, tau_j in
/// taus[m, j]) applied from the left to matrix m of `target` (N, rows,
/// width): H_0 (H_1 (... H_{k-1} target)) = Q target, or with `transpose`
/// H_{k-1} (... H_0 target) = Q^T target (dorm2r). `w` is a (>= width)
/// scratch row. Returns target and w.
Carried applyReflectors(OpBuilder &b, Location loc, Value target, Value reflectors, Value taus,
                        Value w, Value m, int64_t rows, int64_t width, int64_t k, bool transpose) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(k), {target, w},
                [&](OpBuilder &b, Location l, Value step, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  Value j = transpose ? step : b.create<arith::SubIOp>(l, s.index(k - 1), step);
                  return applyReflector(b, l, u[0], u[1], m, j, rows, s.index(0), width,
                                        Scalars::at(b, l, taus, {m, j}),
                                        [&](OpBuilder &b, Location l, Value i, Value) {
                                          return Scalars::at(b, l, reflectors, {m, i, j});
                                        });
                });
}

/// A fresh scratch row of `width` elements (of complex pairs: (width, 2)).
Value scratchRow(Scalars &s, Type element, int64_t width, bool pairs = false) {
  SmallVector<int64_t> shape{std::max<int64_t>(width, 1)};
  if (pairs)
    shape.push_back(2);
  return s.fresh(RankedTensorType::get(shape, element));
}

/// `shape` with the pair dim of complex pairs when `pairs`.
RankedTensorType withPairs(ArrayRef<int64_t> shape, bool pairs, Type element) {
  SmallVector<int64_t> full(shape);
  if (pairs)
    full.push_back(2);
  return RankedTensorType::get(full, element);
}

/// geqr2 on matrix m, real or complex pairs (zgeqr2).
Carried geqr2Of(bool pairs, OpBuilder &b, Location l, Value a, Value taus, Value w, Value m,
                int64_t rows, int64_t cols) {
  return (pairs ? complexGeqr2 : geqr2)(b, l, a, taus, w, m, rows, cols);
}

/// applyReflectors on matrix m, real or complex pairs (Q^H for `transpose`).
Carried applyReflectorsOf(bool pairs, OpBuilder &b, Location l, Value target, Value reflectors,
                          Value taus, Value w, Value m, int64_t rows, int64_t width, int64_t k,
                          bool transpose) {
  return (pairs ? complexApplyReflectors : applyReflectors)(b, l, target, reflectors, taus, w, m,
                                                            rows, width, k, transpose);
}

/// Matrix m of `t` set to the identity's first columns, real or pairs.
Value identityColumnsOf(bool pairs, OpBuilder &b, Location l, Value t, Value m) {
  return (pairs ? complexIdentityColumns : identityColumns)(b, l, t, m);
}

struct QrLowering : OpConversionPattern<QrOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QrOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    Type element = type.getElementType();
    const bool pairs = isComplexMatrixBatch(adaptor.getSelf());
    const int64_t batch = type.getDimSize(0), rows = type.getDimSize(1),
                  cols = type.getDimSize(2), k = std::min(rows, cols);
    auto qType = cast<RankedTensorType>(op.getQ().getType());
    auto rType = cast<RankedTensorType>(op.getR().getType());
    const int64_t qCols = qType.getDimSize(2);
    Value work = s.fresh(type, adaptor.getSelf());
    Value tau = s.fresh(withPairs({batch, k}, pairs, element));
    Value q = s.fresh(qType), r = s.fresh(rType);
    Carried out = s.loop(
        s.index(0), s.index(batch),
        {work, tau, q, r, scratchRow(s, element, std::max(cols, qCols), pairs)},
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Scalars s(b, l);
          Value zero = s.number(element, 0.0);
          Carried reduced = geqr2Of(pairs, b, l, c[0], c[1], c[4], m, rows, cols);
          Value a = reduced[0], taus = reduced[1];
          // R: the upper triangle of the first rows (each part of a pair).
          Value rOut = s.loop(
              s.index(0), s.index(rType.getDimSize(1)), {c[3]},
              [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                Scalars s(b, l);
                return s.loop(s.index(0), s.index(cols), {u[0]},
                              [&](OpBuilder &b, Location l, Value col, ValueRange w) -> Carried {
                                Value upper = b.create<arith::CmpIOp>(
                                    l, arith::CmpIPredicate::ule, i, col);
                                Value t = w[0];
                                for (int64_t part = 0; part < (pairs ? 2 : 1); ++part) {
                                  SmallVector<Value> at{m, i, col};
                                  if (pairs)
                                    at.push_back(Scalars(b, l).index(part));
                                  Value x = b.create<arith::SelectOp>(
                                      l, upper, Scalars::at(b, l, a, at), zero);
                                  t = Scalars::put(b, l, x, t, at);
                                }
                                return {t};
                              });
              })[0];
          // Q: the identity's first columns, then H_{k-1} ... H_0 applied.
          Carried orgqr = applyReflectorsOf(pairs, b, l, identityColumnsOf(pairs, b, l, c[2], m),
                                            a, taus, reduced[2], m, rows, qCols, k,
                                            /*transpose=*/false);
          return {a, taus, orgqr[0], rOut, orgqr[1]};
        });
    rewriter.replaceOp(op, {out[2], out[3]});
    return success();
  }
};

struct GeqrfLowering : OpConversionPattern<GeqrfOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GeqrfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    const bool pairs = isComplexMatrixBatch(adaptor.getSelf());
    const int64_t rows = type.getDimSize(1), cols = type.getDimSize(2);
    Carried out = s.loop(
        s.index(0), s.index(type.getDimSize(0)),
        {s.fresh(type, adaptor.getSelf()), s.fresh(cast<RankedTensorType>(op.getTau().getType())),
         scratchRow(s, type.getElementType(), cols, pairs)},
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          return geqr2Of(pairs, b, l, c[0], c[1], c[2], m, rows, cols);
        });
    rewriter.replaceOp(op, {out[0], out[1]});
    return success();
  }
};

/// householder_product (the identity's first columns, Q applied) and
/// ormqr (a copy of `other`, Q or Q^T applied): the reflectors of `self`
/// and `tau` applied from the left, row by row.
template <typename Op>
struct ReflectorsLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  static constexpr bool kProduct = std::is_same_v<Op, HouseholderProductOp>;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    RankedTensorType type = op.getType();
    const int64_t rows = type.getDimSize(1), cols = type.getDimSize(2);
    const int64_t k = cast<RankedTensorType>(adaptor.getTau().getType()).getDimSize(1);
    Value target;
    bool transpose = false;
    if constexpr (kProduct) {
      target = s.fresh(type);
    } else {
      target = s.fresh(type, adaptor.getOther());
      transpose = op.getTranspose();
    }
    const bool pairs = isComplexMatrixBatch(adaptor.getSelf());
    Carried out = s.loop(
        s.index(0), s.index(type.getDimSize(0)),
        {target, scratchRow(s, type.getElementType(), cols, pairs)},
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Value start = kProduct ? identityColumnsOf(pairs, b, l, c[0], m) : c[0];
          return applyReflectorsOf(pairs, b, l, start, adaptor.getSelf(), adaptor.getTau(), c[1],
                                   m, rows, cols, k, transpose);
        });
    rewriter.replaceOp(op, out[0]);
    return success();
  }
};

/// dpotf2 (lower, left-looking) on matrix m of `l` (N, n, n), in place:
/// (l, info).
Carried choleskyOne(OpBuilder &b, Location loc, Value l, Value m, int64_t n) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(l.getType()).getElementType();
  Type i64 = b.getI64Type();
  Value noFailure = b.create<arith::ConstantOp>(loc, i64, b.getI64IntegerAttr(0));
  return s.loop(
      s.index(0), s.index(n), {l, noFailure},
      [&](OpBuilder &b, Location loc, Value j, ValueRange t) -> Carried {
        Scalars s(b, loc);
        Value l = t[0];
        Value pivot = b.create<arith::SubFOp>(
            loc, Scalars::at(b, loc, l, {m, j, j}),
            rowProduct(b, loc, l, m, j, j, element));
        Value positive = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, pivot,
                                                 s.number(element, 0.0));
        Value firstFailure = b.create<arith::AndIOp>(
            loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t[1], noFailure),
            b.create<arith::XOrIOp>(
                loc, positive,
                b.create<arith::ConstantOp>(loc, b.getI1Type(), b.getBoolAttr(true))));
        Value order = b.create<arith::IndexCastOp>(loc, i64, plusOne(b, loc, j));
        Value failure = b.create<arith::SelectOp>(loc, firstFailure, order, t[1]);
        Value root = b.create<math::SqrtOp>(loc, pivot);
        l = Scalars::put(b, loc, root, l, {m, j, j});
        // Above the diagonal: 0.
        l = s.loop(s.index(0), j, {l},
                   [&](OpBuilder &b, Location loc, Value i, ValueRange u) -> Carried {
                     Scalars s(b, loc);
                     return {Scalars::put(b, loc, s.number(element, 0.0), u[0], {m, i, j})};
                   })[0];
        l = s.loop(plusOne(b, loc, j), s.index(n), {l},
                   [&](OpBuilder &b, Location loc, Value i, ValueRange u) -> Carried {
                     Value v = b.create<arith::SubFOp>(
                         loc, Scalars::at(b, loc, u[0], {m, i, j}),
                         rowProduct(b, loc, u[0], m, i, j, element));
                     v = b.create<arith::DivFOp>(loc, v, root);
                     return {Scalars::put(b, loc, v, u[0], {m, i, j})};
                   })[0];
        return {l, failure};
      });
}

struct CholeskyLowering : OpConversionPattern<CholeskyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CholeskyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    const bool complex = isComplexMatrixBatch(adaptor.getSelf());
    Value l = s.fresh(type, adaptor.getSelf());
    Value info = s.fresh(RankedTensorType::get({batch, 1}, b.getI64Type()));
    Carried out = s.loop(
        s.index(0), s.index(batch), {l, info},
        [&](OpBuilder &b, Location loc, Value m, ValueRange c) -> Carried {
          Carried one = (complex ? complexCholeskyOne : choleskyOne)(b, loc, c[0], m, n);
          Value infoOut = Scalars::put(b, loc, one[1], c[1], {m, Scalars(b, loc).index(0)});
          return {one[0], infoOut};
        });
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void kiln::aten::populateFactorisationPatterns(RewritePatternSet &patterns) {
  patterns.add<LuFactorLowering, LuPermutationLowering, LinalgSolveLowering,
               TriangularSolveLowering, QrLowering, GeqrfLowering,
               ReflectorsLowering<HouseholderProductOp>, ReflectorsLowering<OrmqrOp>,
               CholeskyLowering>(patterns.getContext());
}
