//===- ComplexFactorisations.cpp - LU and Cholesky of complex matrices ----===//
//
// This file implements aten.lu_factor, aten.cholesky,
// aten.triangular_solve and the QR ops (aten.qr, aten.geqrf,
// aten.householder_product, aten.ormqr) on complex matrices, (N, m, n, 2) pairs of their (real, imaginary) parts, as scf.for
// loops over each matrix, in place in one copy of the input, as LAPACK's
// unblocked complex routines compute them:
//
// - zgetf2: step k takes the first row p >= k whose column-k entry has the
//   largest |re| + |im| (izamax's measure; a NaN never wins), swaps rows k
//   and p, stores the multipliers a[i, k] / a[k, k] below the pivot (Smith's
//   quotient; 0 under a zero pivot, where the column below is all 0 too)
//   and subtracts their multiples of row k from the trailing rows.
// - zpotf2 (lower, left-looking): column j's pivot is re(a[j, j]) - sum
//   |l[j, p]|^2 over p < j (the diagonal's imaginary part is not read, as
//   LAPACK's); its square root is l[j, j] (real), and the entries below are
//   (a[i, j] - sum l[i, p] conj(l[j, p])) / l[j, j]. A pivot that is not
//   > 0 (or NaN) sets info to j + 1 (the first such j), as the real
//   dpotf2's loops in Factorisations.cpp do. The upper triangle is zeroed.
//
// - ztrtrs: forward (lower) or back (upper) substitution, row by row:
//   x[i, :] -= a[i, j] x[j, :] over the solved rows j, then x[i, :] /=
//   a[i, i] (Smith's quotient) unless the diagonal is a unit one. A zero
//   on the diagonal divides: Smith's quotient by 0 + 0i is NaN.
//
// - zgeqr2: reflector j (zlarfg) maps column j's entries from row j down
//   to (beta, 0, ...), beta real: none when the entries below the diagonal
//   and a[j, j]'s imaginary part are all 0 (tau = 0), else beta =
//   -sign(re a[j, j]) dlapy3(re a[j, j], im a[j, j], ||x||), tau = ((beta -
//   re a[j, j]) / beta, -im a[j, j] / beta) and v = (1, x / (a[j, j] -
//   beta)); H^H = I - conj(tau) v v^H is applied to the columns to its
//   right. zung2r's Q is H_{k-1} .. H_0 applied (with tau) to the
//   identity's first columns, and zunm2r applies them to another matrix:
//   Q C in that order, Q^H C as H_0^H first (conj(tau)).
//
// The code is O(n^3) scalar work per matrix; rounding differs from
// LAPACK's blocked updates (and from its products by a reciprocal) in the
// last bits.
//
//===----------------------------------------------------------------------===//
#include "ComplexFactorisations.h"

#include "ComplexScalars.h"
#include "MatrixLoops.h"

using namespace mlir;

namespace kiln::aten {

bool isComplexMatrixBatch(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 4 && type.getDimSize(3) == 2;
}

namespace {

/// Row i of matrix m minus factor times row j, over columns [from, width).
Value subtractComplexRow(OpBuilder &b, Location l, Value x, Value m, Value i, Value j,
                         Complex factor, int64_t width, Value from) {
  Scalars s(b, l);
  return s.loop(from, s.index(width), {x},
                [&](OpBuilder &b, Location l, Value c, ValueRange t) -> Carried {
                  Arithmetic a(b, l);
                  Complex v = minus(a, pairAt(b, l, t[0], {m, i, c}),
                                    times(a, factor, pairAt(b, l, t[0], {m, j, c})));
                  return {putPair(b, l, v, t[0], {m, i, c})};
                })[0];
}

} // namespace

Carried complexFactorOne(OpBuilder &b, Location loc, Value lu, Value pivots, Value odd, Value m,
                  int64_t rows, int64_t cols) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(std::min(rows, cols)), {lu, pivots, odd},
                [&](OpBuilder &b, Location l, Value k, ValueRange c) -> Carried {
    Scalars s(b, l);
    Arithmetic a(b, l);
    Value lu = c[0];
    Value below = plusOne(b, l, k);
    Value p = bestIndex(b, l, below, s.index(rows), k, absSum(a, pairAt(b, l, lu, {m, k, k})),
                        arith::CmpFPredicate::OGT,
                        [&](OpBuilder &b, Location l, Value i) -> Value {
                          Arithmetic a(b, l);
                          return absSum(a, pairAt(b, l, lu, {m, i, k}));
                        })
                  .first;
    for (int64_t part = 0; part < 2; ++part)
      lu = swapEntries(b, l, lu, cols, [&](Value j, int which) {
        return SmallVector<Value>{m, which ? p : k, j, s.index(part)};
      });
    Value pivotsOut = Scalars::put(b, l, b.create<arith::IndexCastOp>(l, b.getI64Type(), p),
                                   c[1], {m, k});
    Value swapped = a.icmp(arith::CmpIPredicate::ne, p, k);
    Value parity = b.create<arith::XOrIOp>(l, Scalars::at(b, l, c[2], {m, s.index(0)}), swapped);
    Value oddOut = Scalars::put(b, l, parity, c[2], {m, s.index(0)});
    Complex pivot = pairAt(b, l, lu, {m, k, k});
    Value zero = s.number(pivot.re.getType(), 0.0);
    Value zeroPivot = a.both(a.eq(pivot.re, zero), a.eq(pivot.im, zero));
    lu = s.loop(below, s.index(rows), {lu},
                [&](OpBuilder &b, Location l, Value i, ValueRange c) -> Carried {
                  Arithmetic a(b, l);
                  Complex ratio = quotient(a, pairAt(b, l, c[0], {m, i, k}), pivot);
                  Complex multiplier{a.select(zeroPivot, zero, ratio.re),
                                     a.select(zeroPivot, zero, ratio.im)};
                  Value t = putPair(b, l, multiplier, c[0], {m, i, k});
                  return {subtractComplexRow(b, l, t, m, i, k, multiplier, cols, below)};
                })[0];
    return {lu, pivotsOut, oddOut};
  });
}

namespace {

/// The sum over p < j of x[m, i, p] conj(x[m, j, p]).
Complex rowProductConjugate(OpBuilder &b, Location loc, Value x, Value m, Value i, Value j,
                            Value zero) {
  Scalars s(b, loc);
  Carried sum = s.loop(s.index(0), j, {zero, zero},
                       [&](OpBuilder &b, Location l, Value p, ValueRange u) -> Carried {
                         Arithmetic a(b, l);
                         Complex term = timesConjugate(a, pairAt(b, l, x, {m, i, p}),
                                                       pairAt(b, l, x, {m, j, p}));
                         Complex total = plus(a, Complex{u[0], u[1]}, term);
                         return {total.re, total.im};
                       });
  return {sum[0], sum[1]};
}

} // namespace

Carried complexCholeskyOne(OpBuilder &b, Location loc, Value l, Value m, int64_t n) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(l.getType()).getElementType();
  Type i64 = b.getI64Type();
  Value noFailure = b.create<arith::ConstantOp>(loc, i64, b.getI64IntegerAttr(0));
  Value zero = s.number(element, 0.0);
  return s.loop(s.index(0), s.index(n), {l, noFailure},
                [&](OpBuilder &b, Location loc, Value j, ValueRange t) -> Carried {
    Scalars s(b, loc);
    Arithmetic a(b, loc);
    Value l = t[0];
    Value squares = rowProductConjugate(b, loc, l, m, j, j, zero).re;
    Value pivot = a.sub(pairAt(b, loc, l, {m, j, j}).re, squares);
    Value firstFailure = a.both(a.icmp(arith::CmpIPredicate::eq, t[1], noFailure),
                                a.negate(a.gt(pivot, zero)));
    Value order = b.create<arith::IndexCastOp>(loc, i64, plusOne(b, loc, j));
    Value failure = a.select(firstFailure, order, t[1]);
    Value root = a.sqrt(pivot);
    l = putPair(b, loc, Complex{root, zero}, l, {m, j, j});
    l = s.loop(s.index(0), j, {l}, [&](OpBuilder &b, Location loc, Value i, ValueRange u) -> Carried {
      return {putPair(b, loc, Complex{zero, zero}, u[0], {m, i, j})};
    })[0];
    l = s.loop(plusOne(b, loc, j), s.index(n), {l},
               [&](OpBuilder &b, Location loc, Value i, ValueRange u) -> Carried {
                 Arithmetic a(b, loc);
                 Complex v = minus(a, pairAt(b, loc, u[0], {m, i, j}),
                                   rowProductConjugate(b, loc, u[0], m, i, j, zero));
                 return {putPair(b, loc, Complex{a.div(v.re, root), a.div(v.im, root)}, u[0],
                                 {m, i, j})};
               })[0];
    return {l, failure};
  });
}

Value complexSubstitute(OpBuilder &b, Location loc, Value a, Value x, Value m, int64_t n,
                        int64_t width, bool upper, bool unit) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(n), {x},
                [&](OpBuilder &b, Location l, Value r, ValueRange t) -> Carried {
    Scalars s(b, l);
    Arithmetic a0(b, l);
    Value i = upper ? a0.minus(s.index(n - 1), r) : r;
    Value from = upper ? plusOne(b, l, i) : s.index(0);
    Value to = upper ? s.index(n) : i;
    Value y = s.loop(from, to, {t[0]}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
      return {subtractComplexRow(b, l, u[0], m, i, j, pairAt(b, l, a, {m, i, j}), width,
                                 Scalars(b, l).index(0))};
    })[0];
    if (unit)
      return {y};
    Complex pivot = pairAt(b, l, a, {m, i, i});
    return s.loop(s.index(0), s.index(width), {y},
                  [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
                    Arithmetic a(b, l);
                    Complex v = quotient(a, pairAt(b, l, u[0], {m, i, col}), pivot);
                    return {putPair(b, l, v, u[0], {m, i, col})};
                  });
  })[0];
}


// --- QR: zgeqr2, zung2r and zunm2r ---------------------------------------

ComplexHouseholder complexHouseholder(OpBuilder &b, Location l, Complex alpha, Value tailNorm,
                                      const Limits &c) {
  Arithmetic ar(b, l);
  Value nothing = ar.both(ar.eq(tailNorm, c.zero), ar.eq(alpha.im, c.zero));
  Value beta = ar.neg(ar.copySign(
      hypotenuse(b, l, hypotenuse(b, l, alpha.re, alpha.im, c), tailNorm, c), alpha.re));
  Complex tau{ar.select(nothing, c.zero, ar.div(ar.sub(beta, alpha.re), beta)),
              ar.select(nothing, c.zero, ar.div(ar.neg(alpha.im), beta))};
  Complex inverse = quotient(ar, Complex{c.one, c.zero}, Complex{ar.sub(alpha.re, beta), alpha.im});
  Complex scale{ar.select(nothing, c.one, inverse.re), ar.select(nothing, c.zero, inverse.im)};
  Complex head{ar.select(nothing, alpha.re, beta), ar.select(nothing, alpha.im, c.zero)};
  return {tau, head, scale};
}

Carried applyComplexReflector(
    OpBuilder &b, Location l, Value t, Value w, Value m, Value head, int64_t rows, Value from,
    int64_t width, Complex tau,
    function_ref<Complex(OpBuilder &, Location, Value, Value)> vAt) {
  Scalars s(b, l);
  Value below = plusOne(b, l, head), end = s.index(width);
  auto overRow = [&](Value target, function_ref<Value(OpBuilder &, Location, Value, Value)> entry) {
    return s.loop(from, end, {target}, [&](OpBuilder &b, Location l, Value c, ValueRange u) -> Carried {
      return {entry(b, l, u[0], c)};
    })[0];
  };
  w = overRow(w, [&](OpBuilder &b, Location l, Value x, Value c) {
    return putPair(b, l, pairAt(b, l, t, {m, head, c}), x, {c});
  });
  w = s.loop(below, s.index(rows), {w},
             [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
               Complex vi = vAt(b, l, i, t);
               return {Scalars(b, l).loop(
                   from, end, u, [&](OpBuilder &b, Location l, Value c, ValueRange x) -> Carried {
                     Arithmetic a(b, l);
                     Complex sum = plus(a, pairAt(b, l, x[0], {c}),
                                        timesConjugate(a, pairAt(b, l, t, {m, i, c}), vi));
                     return {putPair(b, l, sum, x[0], {c})};
                   })[0]};
             })[0];
  w = overRow(w, [&](OpBuilder &b, Location l, Value x, Value c) {
    Arithmetic a(b, l);
    return putPair(b, l, times(a, tau, pairAt(b, l, x, {c})), x, {c});
  });
  t = overRow(t, [&](OpBuilder &b, Location l, Value x, Value c) {
    Arithmetic a(b, l);
    Complex top = minus(a, pairAt(b, l, x, {m, head, c}), pairAt(b, l, w, {c}));
    return putPair(b, l, top, x, {m, head, c});
  });
  t = s.loop(below, s.index(rows), {t},
             [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
               Complex vi = vAt(b, l, i, u[0]);
               return {Scalars(b, l).loop(
                   from, end, u, [&](OpBuilder &b, Location l, Value c, ValueRange x) -> Carried {
                     Arithmetic a(b, l);
                     Complex v = minus(a, pairAt(b, l, x[0], {m, i, c}),
                                       times(a, pairAt(b, l, w, {c}), vi));
                     return {putPair(b, l, v, x[0], {m, i, c})};
                   })[0]};
             })[0];
  return {t, w};
}

Carried complexGeqr2(OpBuilder &b, Location loc, Value a, Value taus, Value w, Value m,
                     int64_t rows, int64_t cols) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(a.getType()).getElementType();
  return s.loop(
      s.index(0), s.index(std::min(rows, cols)), {a, taus, w},
      [&](OpBuilder &b, Location l, Value j, ValueRange t) -> Carried {
        Scalars s(b, l);
        Arithmetic ar(b, l);
        Limits c(b, l, element);
        Value below = plusOne(b, l, j);
        Value a = t[0];
        Complex alpha = pairAt(b, l, a, {m, j, j});
        // zlarfg: ||x|| as the hypotenuse of its parts' scaled norms.
        auto tailPart = [&](int64_t part) {
          return scaledNorm(b, l, below, s.index(rows), c, [&](OpBuilder &b, Location l, Value i) {
            return Scalars::at(b, l, a, {m, i, j, Scalars(b, l).index(part)});
          });
        };
        Value tailNorm = hypotenuse(b, l, tailPart(0), tailPart(1), c);
        auto [tau, diagonal, scale] = complexHouseholder(b, l, alpha, tailNorm, c);
        a = s.loop(below, s.index(rows), {a},
                   [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                     Arithmetic ar(b, l);
                     return {putPair(b, l, times(ar, pairAt(b, l, u[0], {m, i, j}), scale), u[0],
                                     {m, i, j})};
                   })[0];
        // H^H = I - conj(tau) v v^H on the columns to the right.
        Carried applied = applyComplexReflector(
            b, l, a, t[2], m, j, rows, below, cols, Complex{tau.re, ar.neg(tau.im)},
            [&](OpBuilder &b, Location l, Value i, Value current) {
              return pairAt(b, l, current, {m, i, j});
            });
        a = putPair(b, l, diagonal, applied[0], {m, j, j});
        return {a, putPair(b, l, tau, t[1], {m, j}), applied[1]};
      });
}

Carried complexApplyReflectors(OpBuilder &b, Location loc, Value target, Value reflectors,
                               Value taus, Value w, Value m, int64_t rows, int64_t width,
                               int64_t k, bool adjoint) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(k), {target, w},
                [&](OpBuilder &b, Location l, Value step, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  Arithmetic a(b, l);
                  Value j = adjoint ? step : a.minus(s.index(k - 1), step);
                  Complex tau = pairAt(b, l, taus, {m, j});
                  if (adjoint)
                    tau.im = a.neg(tau.im);
                  return applyComplexReflector(
                      b, l, u[0], u[1], m, j, rows, s.index(0), width, tau,
                      [&](OpBuilder &b, Location l, Value i, Value) {
                        return pairAt(b, l, reflectors, {m, i, j});
                      });
                });
}

Value complexIdentityColumns(OpBuilder &b, Location loc, Value t, Value m) {
  Scalars s(b, loc);
  auto type = cast<RankedTensorType>(t.getType());
  Value zero = s.number(type.getElementType(), 0.0), one = s.number(type.getElementType(), 1.0);
  return s.loop(s.index(0), s.index(type.getDimSize(1)), {t},
                [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                  return Scalars(b, l).loop(
                      Scalars(b, l).index(0), Scalars(b, l).index(type.getDimSize(2)), u,
                      [&](OpBuilder &b, Location l, Value col, ValueRange x) -> Carried {
                        Arithmetic a(b, l);
                        Value diagonal = a.icmp(arith::CmpIPredicate::eq, i, col);
                        return {putPair(b, l, Complex{a.select(diagonal, one, zero), zero}, x[0],
                                        {m, i, col})};
                      });
                })[0];
}

} // namespace kiln::aten
