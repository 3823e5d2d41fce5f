//===- GeneralEigen.cpp - eigvals of real matrices by Francis QR ----------===//
//
// This file implements the lowering of aten.eigvals to scf loops over each
// matrix of the batch, as LAPACK's dgeev computes the eigenvalues without
// vectors:
//
// - dgebal balances the matrix: rows that isolate an eigenvalue (zero off
//   the diagonal within the active columns) are exchanged to the bottom,
//   then columns that do to the left, which leaves an active block [k, l];
//   the block's rows and columns are then scaled by powers of 2 (exact)
//   until no scaling cuts a row's and column's norms by 5 %.
// - dgehd2 reduces the block to upper Hessenberg form with Householder
//   reflectors (dlarfg's, applied from the right, then from the left).
// - dlahqr, eigenvalues only, runs Francis double-shift QR sweeps on the
//   unreduced part: a subdiagonal entry is negligible by Ahues and
//   Kressner's criterion; every 10th sweep without a deflation takes an
//   exceptional shift; at most 30 max(10, n) sweeps per deflation. A 1 x 1
//   block's value is its entry, a 2 x 2 block's are dlanv2's (a real pair
//   in its order, or a + bi then a - bi).
//
// The values land where LAPACK puts them (the isolated ones at their
// diagonal positions, the others where they deflate), so they come in
// eager's order, though PyTorch promises none. A matrix with a NaN or an
// infinity (eager raises) or a block that does not deflate within the limit
// (LAPACK's info > 0) has NaN values.
//
//===----------------------------------------------------------------------===//
#include "MatrixLoops.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// The most balancing sweeps (dgebal has no limit; a few is the rule).
constexpr int64_t kMaxBalanceSweeps = 1000;
/// dlahqr's KEXSH: an exceptional shift after this many sweeps without a
/// deflation (at the block's top), twice this many (at its bottom).
constexpr int64_t kExceptionalShiftEvery = 10;

/// Reads of matrix m of the (N, n, n) batch.
struct Matrix {
  Value m;
  int64_t n;

  Value at(OpBuilder &b, Location l, Value t, Value i, Value j) const {
    return Scalars::at(b, l, t, {m, i, j});
  }
  Value put(OpBuilder &b, Location l, Value v, Value t, Value i, Value j) const {
    return Scalars::put(b, l, v, t, {m, i, j});
  }
};

/// The element type's constants the algorithms test against.
struct Limits {
  Value zero, one, two, half, ulp, safmin;

  Limits(OpBuilder &b, Location l, Type element) {
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

/// Columns j and p of matrix `mat` over rows [0, last] and rows j and p
/// over columns [first, n) exchanged (dgebal's exchange).
Value exchange(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value j, Value p,
               Value first, Value last) {
  Scalars s(b, loc);
  h = s.loop(s.index(0), plusOne(b, loc, last), {h},
             [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
               Value x = mat.at(b, l, u[0], r, j), y = mat.at(b, l, u[0], r, p);
               return {mat.put(b, l, x, mat.put(b, l, y, u[0], r, j), r, p)};
             })[0];
  return s.loop(first, s.index(mat.n), {h},
                [&](OpBuilder &b, Location l, Value c, ValueRange u) -> Carried {
                  Value x = mat.at(b, l, u[0], j, c), y = mat.at(b, l, u[0], p, c);
                  return {mat.put(b, l, x, mat.put(b, l, y, u[0], j, c), p, c)};
                })[0];
}

/// Whether entries (`entry(x)`) for x in [lo, hi), x != j, are all zero.
Value zeroOffDiagonal(OpBuilder &b, Location loc, Value j, Value lo, Value hi,
                      function_ref<Value(OpBuilder &, Location, Value)> entry, Value zero) {
  Scalars s(b, loc);
  return s.loop(lo, hi, {Arithmetic(b, loc).truth(true)},
                [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
                  Arithmetic a(b, l);
                  Value diagonal = a.icmp(arith::CmpIPredicate::eq, x, j);
                  return {a.both(u[0], a.either(diagonal, a.eq(entry(b, l, x), zero)))};
                })[0];
}

/// dgebal's exchanges: while some row j in [0, last] is zero in columns [0,
/// last] off the diagonal (the last such j), it is exchanged with row (and
/// column) `last`, and last moves up; then while some column j in [first,
/// last] is zero in rows [first, last] off the diagonal (the first such
/// j), with column `first`, and first moves down. Returns h, first, last.
Carried isolateEigenvalues(OpBuilder &b, Location loc, const Matrix &mat, Value h,
                           const Limits &c) {
  Scalars s(b, loc);
  Value zero = s.index(0);
  auto rowsDone = whileLoop(
      b, loc, {h, s.index(mat.n - 1), zero},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Scalars s(b, l);
        Arithmetic a(b, l);
        Value last = u[1], end = plusOne(b, l, last);
        Carried found = s.loop(
            s.index(0), end, {zero, a.truth(false)},
            [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
              Arithmetic a(b, l);
              Value isolated = zeroOffDiagonal(
                  b, l, j, Scalars(b, l).index(0), end,
                  [&](OpBuilder &b, Location l, Value i) { return mat.at(b, l, u[0], j, i); },
                  c.zero);
              return {a.select(isolated, j, w[0]), a.either(w[1], isolated)};
            });
        Value go = a.both(a.icmp(arith::CmpIPredicate::sgt, last, zero), found[1]);
        return {go, {u[0], last, found[0]}};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Arithmetic a(b, l);
        Value swapped = exchange(b, l, mat, u[0], u[2], u[1], a.index(0), u[1]);
        return {swapped, a.minus(u[1], a.index(1)), u[2]};
      });
  Value last = rowsDone[1];
  auto columnsDone = whileLoop(
      b, loc, {rowsDone[0], zero, zero},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Scalars s(b, l);
        Arithmetic a(b, l);
        Value first = u[1], end = plusOne(b, l, last);
        Carried found = s.loop(
            first, end, {first, a.truth(false)},
            [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
              Arithmetic a(b, l);
              Value isolated = zeroOffDiagonal(
                  b, l, j, first, end,
                  [&](OpBuilder &b, Location l, Value i) { return mat.at(b, l, u[0], i, j); },
                  c.zero);
              Value take = a.both(isolated, a.negate(w[1]));
              return {a.select(take, j, w[0]), a.either(w[1], isolated)};
            });
        Value go = a.both(a.icmp(arith::CmpIPredicate::slt, first, last), found[1]);
        return {go, {u[0], first, found[0]}};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Value swapped = exchange(b, l, mat, u[0], u[2], u[1], u[1], last);
        return {swapped, plusOne(b, l, u[1]), u[2]};
      });
  return {columnsDone[0], columnsDone[1], last};
}

/// The 2-norm of entry(x) for x in [lo, hi), scaled by the largest |entry|
/// (no square overflows or underflows), and the largest |entry|.
Value scaledNorm(OpBuilder &b, Location loc, Value lo, Value hi, const Limits &c,
                 function_ref<Value(OpBuilder &, Location, Value)> entry) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Value largest = s.loop(lo, hi, {c.zero}, [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
    return {Arithmetic(b, l).max(u[0], Arithmetic(b, l).abs(entry(b, l, x)))};
  })[0];
  Value unit = a.select(a.eq(largest, c.zero), c.one, largest);
  Value squares = s.loop(lo, hi, {c.zero}, [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value y = a.div(entry(b, l, x), unit);
    return {a.add(u[0], a.mul(y, y))};
  })[0];
  return a.mul(unit, a.sqrt(squares));
}

/// The largest |entry(x)| for x in [lo, hi).
Value largestMagnitude(OpBuilder &b, Location loc, Value lo, Value hi, const Limits &c,
                       function_ref<Value(OpBuilder &, Location, Value)> entry) {
  return Scalars(b, loc).loop(lo, hi, {c.zero}, [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
    return {Arithmetic(b, l).max(u[0], Arithmetic(b, l).abs(entry(b, l, x)))};
  })[0];
}

/// dgebal's scaling of the active block [first, last]: sweeps over its rows
/// and columns i, each scaled by a power of 2, f, that brings the column's
/// and row's norms (c f, r / f) within a factor 2 of each other, when that
/// cuts c + r by 5 % (and keeps the total scale of i in range); until a
/// sweep scales nothing. `scales` is a scratch (N, n) tensor. Returns h and
/// scales.
Carried balance(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value scales, Value first,
                Value last, const Limits &c) {
  Scalars s(b, loc);
  Type element = c.zero.getType();
  const bool f32 = element.isF32();
  const double tiny = f32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  Value sfmin1 = s.number(element, tiny / eps), sfmax1 = s.number(element, eps / tiny);
  Value sfmin2 = s.number(element, 2 * tiny / eps), sfmax2 = s.number(element, eps / (2 * tiny));
  Value factor = s.number(element, 0.95);
  Value end = plusOne(b, loc, last);
  scales = s.loop(first, end, {scales}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
    return {Scalars::put(b, l, c.one, u[0], {mat.m, i})};
  })[0];
  Arithmetic top(b, loc);
  Carried done = whileLoop(
      b, loc, {h, scales, top.truth(true), s.index(0)},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Arithmetic a(b, l);
        Value more = a.icmp(arith::CmpIPredicate::slt, u[3], a.index(kMaxBalanceSweeps));
        return {a.both(u[2], more), Carried(u)};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Scalars s(b, l);
        Carried swept = s.loop(
            first, end, {u[0], u[1], Arithmetic(b, l).truth(false)},
            [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
              Arithmetic a(b, l);
              Value h = w[0];
              auto column = [&](OpBuilder &b, Location l, Value x) { return mat.at(b, l, h, x, i); };
              auto row = [&](OpBuilder &b, Location l, Value x) { return mat.at(b, l, h, i, x); };
              Value cn = scaledNorm(b, l, first, end, c, column);
              Value rn = scaledNorm(b, l, first, end, c, row);
              Value ca = largestMagnitude(b, l, a.index(0), end, c, column);
              Value ra = largestMagnitude(b, l, first, a.index(mat.n), c, row);
              Value usable = a.both(a.gt(cn, c.zero), a.gt(rn, c.zero));
              auto step = b.create<scf::IfOp>(
                  l, usable,
                  [&](OpBuilder &b, Location l) {
                    Arithmetic a(b, l);
                    Value sum = a.add(cn, rn);
                    // f doubles while the column is below half the row.
                    Carried up = whileLoop(
                        b, l, {c.one, cn, ca, rn, a.div(rn, c.two), ra},
                        [&](OpBuilder &b, Location l, ValueRange v) -> std::pair<Value, Carried> {
                          Arithmetic a(b, l);
                          Value stop = a.either(
                              a.ge(v[1], v[4]),
                              a.either(a.ge(a.max(v[0], a.max(v[1], v[2])), sfmax2),
                                       a.le(a.min(v[3], a.min(v[4], v[5])), sfmin2)));
                          return {a.negate(stop), Carried(v)};
                        },
                        [&](OpBuilder &b, Location l, ValueRange v) -> Carried {
                          Arithmetic a(b, l);
                          return {a.mul(v[0], c.two), a.mul(v[1], c.two), a.mul(v[2], c.two),
                                  a.div(v[3], c.two), a.div(v[4], c.two), a.div(v[5], c.two)};
                        });
                    // f halves while the column's half is at least the row.
                    Carried down = whileLoop(
                        b, l, {up[0], up[1], a.div(up[1], c.two), up[2], up[3], up[5]},
                        [&](OpBuilder &b, Location l, ValueRange v) -> std::pair<Value, Carried> {
                          Arithmetic a(b, l);
                          Value stop = a.either(
                              a.lt(v[2], v[4]),
                              a.either(a.ge(a.max(v[4], v[5]), sfmax2),
                                       a.le(a.min(a.min(v[0], v[1]), a.min(v[2], v[3])), sfmin2)));
                          return {a.negate(stop), Carried(v)};
                        },
                        [&](OpBuilder &b, Location l, ValueRange v) -> Carried {
                          Arithmetic a(b, l);
                          return {a.div(v[0], c.two), a.div(v[1], c.two), a.div(v[2], c.two),
                                  a.div(v[3], c.two), a.mul(v[4], c.two), a.mul(v[5], c.two)};
                        });
                    Value f = down[0];
                    Value scale = Scalars::at(b, l, w[1], {mat.m, i});
                    Value slight = a.ge(a.add(down[1], down[4]), a.mul(factor, sum));
                    Value tooSmall = a.both(a.both(a.lt(f, c.one), a.lt(scale, c.one)),
                                            a.le(a.mul(f, scale), sfmin1));
                    Value tooLarge = a.both(a.both(a.gt(f, c.one), a.gt(scale, c.one)),
                                            a.ge(scale, a.div(sfmax1, f)));
                    Value skip = a.either(slight, a.either(tooSmall, tooLarge));
                    auto scaled = b.create<scf::IfOp>(
                        l, skip, [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, w); },
                        [&](OpBuilder &b, Location l) {
                          Scalars s(b, l);
                          Arithmetic a(b, l);
                          Value g = a.div(c.one, f);
                          Value t = s.loop(first, s.index(mat.n), {w[0]},
                                           [&](OpBuilder &b, Location l, Value x, ValueRange v) -> Carried {
                                             Value y = Arithmetic(b, l).mul(mat.at(b, l, v[0], i, x), g);
                                             return {mat.put(b, l, y, v[0], i, x)};
                                           })[0];
                          t = s.loop(s.index(0), end, {t},
                                     [&](OpBuilder &b, Location l, Value x, ValueRange v) -> Carried {
                                       Value y = Arithmetic(b, l).mul(mat.at(b, l, v[0], x, i), f);
                                       return {mat.put(b, l, y, v[0], x, i)};
                                     })[0];
                          Value sc = Scalars::put(b, l, a.mul(scale, f), w[1], {mat.m, i});
                          b.create<scf::YieldOp>(l, ValueRange{t, sc, a.truth(true)});
                        });
                    b.create<scf::YieldOp>(l, scaled.getResults());
                  },
                  [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, w); });
              return Carried(step.getResults());
            });
        return {swept[0], swept[1], swept[2], plusOne(b, l, u[3])};
      });
  return {done[0], done[1]};
}

/// dlarfg for alpha and x = (x1, x2): H (alpha, x) = (beta, 0, 0) with
/// H = I - tau (1, v) (1, v)^T; x's norm scaled as dnrm2's. Returns tau,
/// beta, v1, v2 (none: tau 0, beta alpha, v = x, when x is 0).
std::array<Value, 4> reflector3(OpBuilder &b, Location l, Value alpha, Value x1, Value x2,
                                const Limits &c) {
  Arithmetic a(b, l);
  auto hypot = [&](Value x, Value y) {
    Value ax = a.abs(x), ay = a.abs(y);
    Value big = a.max(ax, ay), small = a.min(ax, ay);
    Value ratio = a.div(small, big);
    return a.select(a.eq(big, c.zero), c.zero, a.mul(big, a.sqrt(a.add(c.one, a.mul(ratio, ratio)))));
  };
  Value xnorm = hypot(x1, x2);
  Value nothing = a.eq(xnorm, c.zero);
  Value beta = a.neg(a.copySign(hypot(alpha, xnorm), alpha));
  Value tau = a.select(nothing, c.zero, a.div(a.sub(beta, alpha), beta));
  Value scale = a.select(nothing, c.one, a.div(c.one, a.sub(alpha, beta)));
  return {tau, a.select(nothing, alpha, beta), a.mul(x1, scale), a.mul(x2, scale)};
}

/// dgehd2 on the active block [first, last] of matrix `mat`: reflector i
/// maps column i's entries from row i + 1 down to (beta, 0, ...) and is
/// applied from the right to rows [first, last] and from the left to
/// columns [i + 1, n) (v's tail is kept in the scratch row `v`, its 1 at i
/// + 1; `w` is a second scratch row). Returns h, v and w.
Carried hessenberg(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value v, Value w,
                   Value first, Value last, const Limits &c) {
  Scalars s(b, loc);
  Value end = plusOne(b, loc, last);
  Value stop = Arithmetic(b, loc).largest(Arithmetic(b, loc).minus(last, s.index(1)), first);
  return s.loop(first, stop, {h, v, w}, [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
    Scalars s(b, l);
    Arithmetic a(b, l);
    Value h = t[0], v = t[1];
    Value head = plusOne(b, l, i), below = plusOne(b, l, head);
    auto column = [&](OpBuilder &b, Location l, Value x) { return mat.at(b, l, h, x, i); };
    Value alpha = mat.at(b, l, h, head, i);
    Value tailNorm = scaledNorm(b, l, below, end, c, column);
    std::array<Value, 4> reflector = reflector3(b, l, alpha, tailNorm, c.zero, c);
    Value tau = reflector[0], beta = reflector[1];
    Value nothing = a.eq(tailNorm, c.zero);
    Value scale = a.select(nothing, c.one, a.div(c.one, a.sub(alpha, beta)));
    // v = (1, x scale) from row i + 1; the column below the subdiagonal
    // becomes (beta, 0, ...).
    v = Scalars::put(b, l, c.one, v, {head});
    Carried moved = s.loop(below, end, {v, h}, [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
      Value x = Arithmetic(b, l).mul(mat.at(b, l, u[1], r, i), scale);
      return {Scalars::put(b, l, x, u[0], {r}), mat.put(b, l, c.zero, u[1], r, i)};
    });
    v = moved[0];
    h = mat.put(b, l, beta, moved[1], head, i);
    // From the right: row r -= tau (row r . v) v over columns [i + 1, last].
    h = s.loop(first, end, {h}, [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
      Arithmetic a(b, l);
      Value dot = contiguousDot(b, l, u[0], {mat.m, r}, v, {}, head, end, c.zero);
      Value scaled = a.mul(tau, dot);
      return Scalars(b, l).loop(head, end, {u[0]}, [&](OpBuilder &b, Location l, Value x, ValueRange z) -> Carried {
        Arithmetic a(b, l);
        Value y = a.sub(mat.at(b, l, z[0], r, x), a.mul(scaled, Scalars::at(b, l, v, {x})));
        return {mat.put(b, l, y, z[0], r, x)};
      });
    })[0];
    // From the left, over rows [i + 1, last] (v is 0 below the block).
    Carried left = applyReflector(b, l, h, t[2], mat.m, head, mat.n, head, mat.n, tau,
                                  [&](OpBuilder &b, Location l, Value r, Value) {
                                    Arithmetic a(b, l);
                                    Value inside = a.icmp(arith::CmpIPredicate::sle, r, last);
                                    return a.select(inside, Scalars::at(b, l, v, {r}), c.zero);
                                  });
    return {left[0], v, left[1]};
  });
}

/// dlanv2's eigenvalues of [[p, q], [r, t]]: (re1, im1, re2, im2) in its
/// order (a real pair as the standardised block's diagonal, a complex one
/// with the positive imaginary part first).
std::array<Value, 4> pairValues(OpBuilder &b, Location l, Value p, Value q, Value r, Value t,
                                const Limits &c) {
  Arithmetic a(b, l);
  Scalars s(b, l);
  Type element = c.zero.getType();
  auto sign = [&](Value x) { return a.copySign(c.one, x); };
  auto hypot = [&](Value x, Value y) {
    Value ax = a.abs(x), ay = a.abs(y);
    Value big = a.max(ax, ay), small = a.min(ax, ay);
    Value ratio = a.div(small, big);
    return a.select(a.eq(big, c.zero), c.zero, a.mul(big, a.sqrt(a.add(c.one, a.mul(ratio, ratio)))));
  };
  Value diff = a.sub(p, t), hd = a.mul(c.half, diff);
  Value bcmax = a.max(a.abs(q), a.abs(r));
  Value bcmis = a.mul(a.min(a.abs(q), a.abs(r)), a.mul(sign(q), sign(r)));
  Value scale = a.max(a.abs(hd), bcmax);
  Value z = a.add(a.mul(a.div(hd, scale), hd), a.mul(a.div(bcmax, scale), bcmis));
  // Real and distinct: t + zz and t - (bcmax / zz) bcmis.
  Value zz = a.add(hd, a.copySign(a.mul(a.sqrt(scale), a.sqrt(z)), hd));
  Value real1 = a.add(t, zz), real2 = a.sub(t, a.mul(a.div(bcmax, zz), bcmis));
  // Otherwise the rotation that makes the diagonal equal.
  Value sigma = a.add(q, r);
  Value tau = hypot(sigma, diff);
  Value cs = a.sqrt(a.mul(c.half, a.add(c.one, a.div(a.abs(sigma), tau))));
  Value sn = a.mul(a.neg(a.div(hd, a.mul(tau, cs))), sign(sigma));
  Value aa = a.add(a.mul(p, cs), a.mul(q, sn)), bb = a.add(a.mul(a.neg(p), sn), a.mul(q, cs));
  Value cc = a.add(a.mul(r, cs), a.mul(t, sn)), dd = a.add(a.mul(a.neg(r), sn), a.mul(t, cs));
  Value p2 = a.add(a.mul(aa, cs), a.mul(cc, sn)), q2 = a.add(a.mul(bb, cs), a.mul(dd, sn));
  Value r2 = a.add(a.mul(a.neg(aa), sn), a.mul(cc, cs)), t2 = a.add(a.mul(a.neg(bb), sn), a.mul(dd, cs));
  Value mean = a.mul(c.half, a.add(p2, t2));
  Value spread = a.mul(a.sqrt(a.abs(q2)), a.sqrt(a.abs(r2)));
  Value sameSign = a.eq(sign(q2), sign(r2));
  Value rotatedReal = a.either(a.either(a.eq(r2, c.zero), a.eq(q2, c.zero)), sameSign);
  Value split = a.both(a.both(a.ne(r2, c.zero), a.ne(q2, c.zero)), sameSign);
  Value signedSpread = a.select(split, a.copySign(spread, r2), c.zero);
  Value rotated1 = a.add(mean, signedSpread), rotated2 = a.sub(mean, signedSpread);
  Value rotatedIm = a.select(rotatedReal, c.zero, spread);
  // A complex pair already standard: p == t, q and r of opposite signs.
  Value standard = a.both(a.eq(diff, c.zero), a.ne(sign(q), sign(r)));
  Value standardIm = a.mul(a.sqrt(a.abs(q)), a.sqrt(a.abs(r)));
  Value distinct = a.ge(z, s.number(element, 4.0 * (element.isF32()
                                                         ? std::numeric_limits<float>::epsilon()
                                                         : std::numeric_limits<double>::epsilon())));
  // The cases in dlanv2's order, the last first.
  Value re1 = a.select(distinct, real1, rotated1), re2 = a.select(distinct, real2, rotated2);
  Value im = a.select(distinct, c.zero, rotatedIm);
  re1 = a.select(standard, p, re1);
  re2 = a.select(standard, t, re2);
  im = a.select(standard, standardIm, im);
  Value upper = a.eq(q, c.zero);  // swapped: (t, p)
  re1 = a.select(upper, t, re1);
  re2 = a.select(upper, p, re2);
  im = a.select(upper, c.zero, im);
  Value lower = a.eq(r, c.zero);  // already triangular
  re1 = a.select(lower, p, re1);
  re2 = a.select(lower, t, re2);
  im = a.select(lower, c.zero, im);
  return {re1, im, re2, a.neg(im)};
}

/// The state of dlahqr's deflation loop: the matrix, the values, the
/// bottom of the unreduced part (i), its top as last found (lo), the sweeps
/// since the last deflation, dlahqr's KDEFL and whether it gave up.
struct QrState {
  Value h, re, im, i, lo, sweeps, kdefl, failed;

  Carried values() const { return {h, re, im, i, lo, sweeps, kdefl, failed}; }
  static QrState from(ValueRange v) { return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}; }
};

/// The bottom-most k in (lo, i] whose subdiagonal entry h[k, k - 1] is
/// negligible (dlahqr's test: tiny, or small against its neighbours by
/// Ahues and Kressner's criterion), or lo when none is.
Value deflationPoint(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value i, Value lo,
                     Value first, Value last, Value smlnum, const Limits &c) {
  Scalars s(b, loc);
  Arithmetic top(b, loc);
  Value count = top.minus(i, lo);
  return s.loop(s.index(0), count, {lo, top.truth(false)},
                [&](OpBuilder &b, Location l, Value step, ValueRange u) -> Carried {
                  Arithmetic a(b, l);
                  Value k = a.minus(i, step), above = a.minus(k, a.index(1));
                  auto at = [&](Value r, Value col) { return mat.at(b, l, h, r, col); };
                  Value sub = a.abs(at(k, above));
                  Value tst = a.add(a.abs(at(above, above)), a.abs(at(k, k)));
                  // Both diagonal entries 0: the neighbours inside the block.
                  Value left = a.minus(k, a.index(2));
                  Value hasLeft = a.icmp(arith::CmpIPredicate::sge, left, first);
                  Value leftEntry = at(above, a.largest(left, a.index(0)));
                  Value down = plusOne(b, l, k);
                  Value hasDown = a.icmp(arith::CmpIPredicate::sle, down, last);
                  Value downEntry = at(a.smallest(down, a.index(mat.n - 1)), k);
                  Value neighbours = a.add(a.select(hasLeft, a.abs(leftEntry), c.zero),
                                           a.select(hasDown, a.abs(downEntry), c.zero));
                  tst = a.select(a.eq(tst, c.zero), a.add(tst, neighbours), tst);
                  Value superEntry = a.abs(at(above, k));
                  Value ab = a.max(sub, superEntry), ba = a.min(sub, superEntry);
                  Value gap = a.abs(a.sub(at(above, above), at(k, k)));
                  Value aa = a.max(a.abs(at(k, k)), gap), bb = a.min(a.abs(at(k, k)), gap);
                  Value sum = a.add(aa, ab);
                  Value relative = a.le(a.mul(ba, a.div(ab, sum)),
                                        a.max(smlnum, a.mul(c.ulp, a.mul(bb, a.div(aa, sum)))));
                  Value negligible = a.either(
                      a.le(sub, smlnum), a.both(a.le(sub, a.mul(c.ulp, tst)), relative));
                  Value take = a.both(negligible, a.negate(u[1]));
                  return {a.select(take, k, u[0]), a.either(u[1], negligible)};
                })[0];
}

/// The double-shift sweep's reflector applied to rows k, k + 1 (and k + 2
/// when `three`) over columns [k, i], then to those columns over rows [lo,
/// min(k + 3, i)].
Value applySmallReflector(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value k,
                          Value i, Value lo, Value t1, Value v2, Value v3, bool three) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Value k1 = plusOne(b, loc, k), k2 = plusOne(b, loc, k1);
  Value t2 = a.mul(t1, v2), t3 = a.mul(t1, v3);
  Value end = plusOne(b, loc, i);
  h = s.loop(k, end, {h}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value t = u[0];
    Value x0 = mat.at(b, l, t, k, j), x1 = mat.at(b, l, t, k1, j);
    Value sum = a.add(x0, a.mul(v2, x1));
    Value x2;
    if (three) {
      x2 = mat.at(b, l, t, k2, j);
      sum = a.add(sum, a.mul(v3, x2));
    }
    t = mat.put(b, l, a.sub(x0, a.mul(sum, t1)), t, k, j);
    t = mat.put(b, l, a.sub(x1, a.mul(sum, t2)), t, k1, j);
    if (three)
      t = mat.put(b, l, a.sub(x2, a.mul(sum, t3)), t, k2, j);
    return {t};
  })[0];
  Value rowsEnd = plusOne(b, loc, a.smallest(a.plus(k, 3), i));
  return s.loop(lo, rowsEnd, {h}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value t = u[0];
    Value x0 = mat.at(b, l, t, j, k), x1 = mat.at(b, l, t, j, k1);
    Value sum = a.add(x0, a.mul(v2, x1));
    Value x2;
    if (three) {
      x2 = mat.at(b, l, t, j, k2);
      sum = a.add(sum, a.mul(v3, x2));
    }
    t = mat.put(b, l, a.sub(x0, a.mul(sum, t1)), t, j, k);
    t = mat.put(b, l, a.sub(x1, a.mul(sum, t2)), t, j, k1);
    if (three)
      t = mat.put(b, l, a.sub(x2, a.mul(sum, t3)), t, j, k2);
    return {t};
  })[0];
}

/// One Francis double-shift sweep on rows and columns [lo, i] (dlahqr's
/// loop body after the deflation test, lo < i - 1): the shifts (the
/// trailing 2 x 2 block's eigenvalues, or an exceptional shift every
/// kExceptionalShiftEvery-th sweep), the start m where two consecutive
/// subdiagonal entries are small enough, then the bulge chased from m down
/// to i. `kdefl` is the count with this sweep.
Value francisSweep(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value i, Value lo,
                   Value kdefl, const Limits &c) {
  Arithmetic a(b, loc);
  Type element = c.zero.getType();
  Scalars s(b, loc);
  auto at = [&](Value r, Value col) { return mat.at(b, loc, h, r, col); };
  Value i1 = a.minus(i, a.index(1)), i2 = a.minus(i, a.index(2));
  Value lo1 = plusOne(b, loc, lo), lo2 = plusOne(b, loc, lo1);
  // Exceptional shifts (dlahqr's DAT1 = 3/4, DAT2 = -0.4375).
  Value dat1 = s.number(element, 0.75), dat2 = s.number(element, -0.4375);
  Value bottomS = a.add(a.abs(at(i, i1)), a.abs(at(i1, i2)));
  Value topS = a.add(a.abs(at(lo1, lo)), a.abs(at(lo2, lo1)));
  Value atBottom = a.icmp(arith::CmpIPredicate::eq, a.remainder(kdefl, 2 * kExceptionalShiftEvery), a.index(0));
  Value atTop = a.icmp(arith::CmpIPredicate::eq, a.remainder(kdefl, kExceptionalShiftEvery), a.index(0));
  Value exceptional = a.either(atBottom, atTop);
  Value es = a.select(atBottom, bottomS, topS);
  Value ediag = a.add(a.mul(dat1, es), a.select(atBottom, at(i, i), at(lo, lo)));
  Value h11 = a.select(exceptional, ediag, at(i1, i1));
  Value h12 = a.select(exceptional, a.mul(dat2, es), at(i1, i));
  Value h21 = a.select(exceptional, es, at(i, i1));
  Value h22 = a.select(exceptional, ediag, at(i, i));
  Value sc = a.add(a.add(a.abs(h11), a.abs(h12)), a.add(a.abs(h21), a.abs(h22)));
  Value n11 = a.div(h11, sc), n12 = a.div(h12, sc), n21 = a.div(h21, sc), n22 = a.div(h22, sc);
  Value tr = a.div(a.add(n11, n22), c.two);
  Value det = a.sub(a.mul(a.sub(n11, tr), a.sub(n22, tr)), a.mul(n12, n21));
  Value rtdisc = a.sqrt(a.abs(det));
  Value complexShifts = a.ge(det, c.zero);
  Value plusRoot = a.add(tr, rtdisc), minusRoot = a.sub(tr, rtdisc);
  Value nearer = a.select(a.le(a.abs(a.sub(plusRoot, n22)), a.abs(a.sub(minusRoot, n22))), plusRoot,
                          minusRoot);
  Value zeroBlock = a.eq(sc, c.zero);
  Value rt1r = a.select(zeroBlock, c.zero, a.mul(a.select(complexShifts, tr, nearer), sc));
  Value rt2r = rt1r;
  Value rt1i = a.select(a.both(complexShifts, a.negate(zeroBlock)), a.mul(rtdisc, sc), c.zero);
  Value rt2i = a.neg(rt1i);
  // The start: the bottom-most m in [lo, i - 2] where the first column of
  // the double shift's polynomial, v, meets small subdiagonal entries.
  auto firstColumn = [&](OpBuilder &b, Location l, Value m) -> std::array<Value, 3> {
    Arithmetic a(b, l);
    auto at = [&](Value r, Value col) { return mat.at(b, l, h, r, col); };
    Value m1 = plusOne(b, l, m), m2 = plusOne(b, l, m1);
    Value hmm = at(m, m);
    Value sub = at(m1, m);
    Value sv = a.add(a.add(a.abs(a.sub(hmm, rt2r)), a.abs(rt2i)), a.abs(sub));
    Value h21s = a.div(sub, sv);
    Value v1 = a.sub(a.add(a.mul(h21s, at(m, m1)), a.mul(a.sub(hmm, rt1r), a.div(a.sub(hmm, rt2r), sv))),
                     a.mul(rt1i, a.div(rt2i, sv)));
    Value v2 = a.mul(h21s, a.sub(a.sub(a.add(hmm, at(m1, m1)), rt1r), rt2r));
    Value v3 = a.mul(h21s, at(m2, m1));
    Value total = a.add(a.add(a.abs(v1), a.abs(v2)), a.abs(v3));
    return {a.div(v1, total), a.div(v2, total), a.div(v3, total)};
  };
  Carried start = whileLoop(
      b, loc, {i2, c.zero, c.zero, c.zero},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Arithmetic a(b, l);
        Value m = u[0];
        auto [v1, v2, v3] = firstColumn(b, l, m);
        Value m1 = plusOne(b, l, m), before = a.largest(a.minus(m, a.index(1)), a.index(0));
        Value h00 = a.mul(a.abs(mat.at(b, l, h, m, before)), a.add(a.abs(v2), a.abs(v3)));
        Value h01 = a.mul(a.mul(c.ulp, a.abs(v1)),
                          a.add(a.add(a.abs(mat.at(b, l, h, before, before)), a.abs(mat.at(b, l, h, m, m))),
                                a.abs(mat.at(b, l, h, m1, m1))));
        Value go = a.both(a.icmp(arith::CmpIPredicate::ne, m, lo), a.negate(a.le(h00, h01)));
        return {go, {m, v1, v2, v3}};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Arithmetic a(b, l);
        return {a.minus(u[0], a.index(1)), u[1], u[2], u[3]};
      });
  Value m = start[0];
  // The bulge chase: k from m to i - 1, a reflector of 3 rows (2 at k = i - 1).
  return s.loop(m, i, {h}, [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value t = u[0];
    Value three = a.icmp(arith::CmpIPredicate::slt, plusOne(b, l, k), i);
    Value later = a.icmp(arith::CmpIPredicate::sgt, k, m);
    Value prev = a.largest(a.minus(k, a.index(1)), a.index(0));
    Value k1 = plusOne(b, l, k), k2 = a.smallest(plusOne(b, l, k1), a.index(mat.n - 1));
    Value b0 = mat.at(b, l, t, k, prev), b1 = mat.at(b, l, t, k1, prev), b2 = mat.at(b, l, t, k2, prev);
    Value x0 = a.select(later, b0, start[1]);
    Value x1 = a.select(later, b1, start[2]);
    Value x2 = a.select(three, a.select(later, b2, start[3]), c.zero);
    auto [t1, beta, v2, v3] = reflector3(b, l, x0, x1, x2, c);
    // The bulge's column becomes (beta, 0, 0); at the start, a split-off
    // top keeps its subdiagonal entry times (1 - t1) (dlahqr's guard
    // against v underflowing).
    Value keepTop = a.icmp(arith::CmpIPredicate::sgt, m, lo);
    Value first = a.select(later, beta, a.select(keepTop, a.mul(b0, a.sub(c.one, t1)), b0));
    t = mat.put(b, l, first, t, k, prev);
    t = mat.put(b, l, a.select(later, c.zero, b1), t, k1, prev);
    t = mat.put(b, l, a.select(a.both(later, three), c.zero, mat.at(b, l, t, k2, prev)), t, k2, prev);
    auto applied = b.create<scf::IfOp>(
        l, three,
        [&](OpBuilder &b, Location l) {
          b.create<scf::YieldOp>(l, applySmallReflector(b, l, mat, t, k, i, lo, t1, v2, v3, true));
        },
        [&](OpBuilder &b, Location l) {
          b.create<scf::YieldOp>(l, applySmallReflector(b, l, mat, t, k, i, lo, t1, v2, v3, false));
        });
    return {applied.getResult(0)};
  })[0];
}

/// dlahqr without Schur form or vectors on the block [first, last] of the
/// Hessenberg matrix: its eigenvalues into row m of `re` and `im`, and
/// whether a deflation took more than 30 max(10, n) sweeps.
QrState francisQr(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value re, Value im,
                  Value first, Value last, const Limits &c) {
  Arithmetic a(b, loc);
  Type element = c.zero.getType();
  Value order = a.plus(a.minus(last, first), a.index(1));
  Value orderF = b.create<arith::SIToFPOp>(
      loc, element, b.create<arith::IndexCastOp>(loc, b.getI64Type(), order));
  Value smlnum = a.mul(c.safmin, a.div(orderF, c.ulp));
  Value limit = b.create<arith::MulIOp>(loc, a.index(30), a.largest(a.index(10), order));
  QrState init{h, re, im, last, first, a.index(0), a.index(0), a.truth(false)};
  Carried out = whileLoop(
      b, loc, init.values(),
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Arithmetic a(b, l);
        return {a.icmp(arith::CmpIPredicate::sge, u[3], first), Carried(u)};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Arithmetic a(b, l);
        QrState st = QrState::from(u);
        Value over = a.icmp(arith::CmpIPredicate::sgt, st.sweeps, limit);
        auto step = b.create<scf::IfOp>(
            l, over,
            [&](OpBuilder &b, Location l) {
              QrState gaveUp = st;
              gaveUp.i = Arithmetic(b, l).minus(first, Arithmetic(b, l).index(1));
              gaveUp.failed = Arithmetic(b, l).truth(true);
              b.create<scf::YieldOp>(l, gaveUp.values());
            },
            [&](OpBuilder &b, Location l) {
              Arithmetic a(b, l);
              Value lo = deflationPoint(b, l, mat, st.h, st.i, st.lo, first, last, smlnum, c);
              Value cut = a.icmp(arith::CmpIPredicate::sgt, lo, first);
              Value loPrev = a.largest(a.minus(lo, a.index(1)), a.index(0));
              Value hh = mat.put(b, l, a.select(cut, c.zero, mat.at(b, l, st.h, lo, loPrev)), st.h, lo, loPrev);
              Value split = a.icmp(arith::CmpIPredicate::sge, lo, a.minus(st.i, a.index(1)));
              auto next = b.create<scf::IfOp>(
                  l, split,
                  [&](OpBuilder &b, Location l) {
                    Arithmetic a(b, l);
                    QrState done = st;
                    done.h = hh;
                    Value i = st.i, i1 = a.largest(a.minus(i, a.index(1)), a.index(0));
                    Value single = a.icmp(arith::CmpIPredicate::eq, lo, i);
                    auto [re1, im1, re2, im2] =
                        pairValues(b, l, mat.at(b, l, hh, i1, i1), mat.at(b, l, hh, i1, i),
                                   mat.at(b, l, hh, i, i1), mat.at(b, l, hh, i, i), c);
                    // A pair writes i - 1 then i; a single value writes i only.
                    Value reAbove = a.select(single, Scalars::at(b, l, st.re, {mat.m, i1}), re1);
                    Value imAbove = a.select(single, Scalars::at(b, l, st.im, {mat.m, i1}), im1);
                    done.re = Scalars::put(b, l, reAbove, st.re, {mat.m, i1});
                    done.im = Scalars::put(b, l, imAbove, st.im, {mat.m, i1});
                    done.re = Scalars::put(b, l, a.select(single, mat.at(b, l, hh, i, i), re2), done.re,
                                           {mat.m, i});
                    done.im = Scalars::put(b, l, a.select(single, c.zero, im2), done.im, {mat.m, i});
                    done.i = a.minus(lo, a.index(1));
                    done.lo = first;
                    done.sweeps = a.index(0);
                    done.kdefl = a.index(0);
                    b.create<scf::YieldOp>(l, done.values());
                  },
                  [&](OpBuilder &b, Location l) {
                    Arithmetic a(b, l);
                    QrState swept = st;
                    swept.kdefl = a.plus(st.kdefl, 1);
                    swept.h = francisSweep(b, l, mat, hh, st.i, lo, swept.kdefl, c);
                    swept.lo = lo;
                    swept.sweeps = a.plus(st.sweeps, 1);
                    b.create<scf::YieldOp>(l, swept.values());
                  });
              b.create<scf::YieldOp>(l, next.getResults());
            });
        return Carried(step.getResults());
      });
  return QrState::from(out);
}

/// Loops over the entries (i, j) of matrix `mat`, row by row, carrying
/// `init`.
Carried forEachEntry(OpBuilder &b, Location loc, const Matrix &mat, ValueRange init,
                     function_ref<Carried(OpBuilder &, Location, Value, Value, ValueRange)> body) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(mat.n), init,
                [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  return s.loop(s.index(0), s.index(mat.n), u,
                                [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
                                  return body(b, l, i, j, w);
                                });
                });
}

/// Whether every entry of matrix m is finite; the matrix set to zeros when
/// not (its values are then NaN, and the loops need numbers).
std::pair<Value, Value> finiteOrZero(OpBuilder &b, Location loc, const Matrix &mat, Value h,
                                     const Limits &c) {
  Scalars s(b, loc);
  Value inf = s.number(c.zero.getType(), std::numeric_limits<double>::infinity());
  Value finite = forEachEntry(b, loc, mat, {Arithmetic(b, loc).truth(true)},
                              [&](OpBuilder &b, Location l, Value i, Value j, ValueRange u) -> Carried {
                                Arithmetic a(b, l);
                                return {a.both(u[0], a.lt(a.abs(mat.at(b, l, h, i, j)), inf))};
                              })[0];
  h = forEachEntry(b, loc, mat, {h}, [&](OpBuilder &b, Location l, Value i, Value j, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    return {mat.put(b, l, a.select(finite, mat.at(b, l, u[0], i, j), c.zero), u[0], i, j)};
  })[0];
  return {finite, h};
}

struct EigvalsLowering : OpConversionPattern<EigvalsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(EigvalsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    auto rowsType = RankedTensorType::get({batch, n}, element);
    auto rowType = RankedTensorType::get({n}, element);
    Carried init{s.fresh(type, adaptor.getSelf()), s.fresh(rowsType), s.fresh(rowsType),
                 s.fresh(rowsType), s.fresh(rowType), s.fresh(rowType)};
    Carried out = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange t) -> Carried {
          Scalars s(b, l);
          Limits c(b, l, element);
          Matrix mat{m, n};
          auto [finite, h] = finiteOrZero(b, l, mat, t[0], c);
          Carried isolated = isolateEigenvalues(b, l, mat, h, c);
          Value first = isolated[1], last = isolated[2];
          Carried balanced = balance(b, l, mat, isolated[0], t[3], first, last, c);
          // Every value starts as its diagonal entry (the isolated ones stay).
          Carried values = s.loop(
              s.index(0), s.index(n), {t[1], t[2]},
              [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                return {Scalars::put(b, l, mat.at(b, l, balanced[0], i, i), u[0], {m, i}),
                        Scalars::put(b, l, c.zero, u[1], {m, i})};
              });
          Carried reduced = hessenberg(b, l, mat, balanced[0], t[4], t[5], first, last, c);
          QrState qr = francisQr(b, l, mat, reduced[0], values[0], values[1], first, last, c);
          Arithmetic a(b, l);
          Value invalid = a.either(a.negate(finite), qr.failed);
          Value nan = s.number(element, std::numeric_limits<double>::quiet_NaN());
          Carried written = s.loop(
              s.index(0), s.index(n), {qr.re, qr.im},
              [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                Arithmetic a(b, l);
                Value re = a.select(invalid, nan, Scalars::at(b, l, u[0], {m, i}));
                Value im = a.select(invalid, nan, Scalars::at(b, l, u[1], {m, i}));
                return {Scalars::put(b, l, re, u[0], {m, i}), Scalars::put(b, l, im, u[1], {m, i})};
              });
          return {qr.h, written[0], written[1], balanced[1], reduced[1], reduced[2]};
        });
    rewriter.replaceOp(op, {out[1], out[2]});
    return success();
  }
};

} // namespace

void kiln::aten::populateGeneralEigenPatterns(RewritePatternSet &patterns) {
  patterns.add<EigvalsLowering>(patterns.getContext());
}
