//===- GeneralEigen.cpp - eig and eigvals of real matrices as dgeev ------===//
//
// This file implements the lowering of aten.eigvals and aten.eig to scf
// loops over each matrix of the batch, as LAPACK's dgeev computes them:
//
// - dgebal balances the matrix: rows that isolate an eigenvalue (zero off
//   the diagonal within the active columns) are exchanged to the bottom,
//   then columns that do to the left, which leaves an active block [k, l]
//   (each exchange recorded, as dgebal's SCALE records it); the block's
//   rows and columns are then scaled by powers of 2 (exact) until no
//   scaling cuts a row's and column's norms by 5 %.
// - dgehd2 reduces the block to upper Hessenberg form with Householder
//   reflectors (dlarfg's, applied from the right, then from the left); for
//   vectors they are also accumulated into Z (dorghr's Q).
// - dlahqr (FrancisQr.cpp) runs Francis double-shift QR sweeps: values
//   only, or the Schur form T = Z^T A Z with Z updated.
// - For vectors, dtrevc3 solves T x = lambda x by back substitution from
//   each value's position (x's entry there 1; a complex pair's 2 x 2 block
//   solved first, then complex back substitution), through T's 1 x 1 and
//   2 x 2 blocks, and back-transforms x by Z in place of Z's own row
//   (which is why it runs from the last value up); dgebak undoes the
//   scaling and the exchanges; each vector is scaled to norm 1, and a
//   complex one turned so that its entry of largest modulus is real.
//
// Vectors live in rows (V^T, Z^T), so back transforms and rotations walk
// contiguous memory; the columns of (re, im) are written at the end. The
// values land where LAPACK's dlahqr puts them (the isolated ones at their
// diagonal positions, the others where they deflate), so up to order 75,
// where LAPACK's dhseqr runs dlahqr too, they come in eager's order (past
// it dhseqr's aggressive early deflation may order them otherwise; PyTorch
// promises no order); a vector's phase is the algorithm's
// (PyTorch leaves it unspecified). A matrix with a NaN or an infinity
// (eager raises) or a block that does not deflate within the limit
// (LAPACK's info > 0) has NaN values and vectors.
//
//===----------------------------------------------------------------------===//
#include "ComplexScalars.h"
#include "GeneralEigen.h"
#include "MatrixLoops.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <array>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace kiln::aten;

Value Matrix::partAt(OpBuilder &b, Location l, Value t, Value i, Value j, int64_t p) const {
  if (!pairs)
    return at(b, l, t, i, j);
  return Scalars::at(b, l, t, {m, i, j, Scalars(b, l).index(p)});
}

Value Matrix::partPut(OpBuilder &b, Location l, Value v, Value t, Value i, Value j,
                      int64_t p) const {
  if (!pairs)
    return put(b, l, v, t, i, j);
  return Scalars::put(b, l, v, t, {m, i, j, Scalars(b, l).index(p)});
}

Value Matrix::swap(OpBuilder &b, Location l, Value t, Value i, Value j, Value k, Value q) const {
  for (int64_t p = 0; p < (pairs ? 2 : 1); ++p) {
    Value x = partAt(b, l, t, i, j, p), y = partAt(b, l, t, k, q, p);
    t = partPut(b, l, x, partPut(b, l, y, t, i, j, p), k, q, p);
  }
  return t;
}

Value Matrix::scale(OpBuilder &b, Location l, Value t, Value i, Value j, Value f) const {
  for (int64_t p = 0; p < (pairs ? 2 : 1); ++p)
    t = partPut(b, l, Arithmetic(b, l).mul(partAt(b, l, t, i, j, p), f), t, i, j, p);
  return t;
}

Value Matrix::isZero(OpBuilder &b, Location l, Value t, Value i, Value j, Value zero) const {
  Arithmetic a(b, l);
  Value zeroed = a.eq(partAt(b, l, t, i, j, 0), zero);
  return pairs ? a.both(zeroed, a.eq(partAt(b, l, t, i, j, 1), zero)) : zeroed;
}

Value Matrix::absSum(OpBuilder &b, Location l, Value t, Value i, Value j) const {
  Arithmetic a(b, l);
  Value sum = a.abs(partAt(b, l, t, i, j, 0));
  return pairs ? a.add(sum, a.abs(partAt(b, l, t, i, j, 1))) : sum;
}

Value kiln::aten::columnAbove(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value j,
                              const Limits &c) {
  return Scalars(b, loc).loop(Scalars(b, loc).index(0), j, {c.zero},
                              [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                                return {Arithmetic(b, l).add(u[0], mat.absSum(b, l, t, i, j))};
                              })[0];
}

Value Matrix::magnitude(OpBuilder &b, Location l, Value t, Value i, Value j,
                        const Limits &c) const {
  if (!pairs)
    return Arithmetic(b, l).abs(at(b, l, t, i, j));
  return hypotenuse(b, l, partAt(b, l, t, i, j, 0), partAt(b, l, t, i, j, 1), c);
}

Value Matrix::norm(OpBuilder &b, Location l, Value t, Value lo, Value hi, const Limits &c,
                   function_ref<std::pair<Value, Value>(Value)> index) const {
  auto part = [&](int64_t p) {
    return scaledNorm(b, l, lo, hi, c, [&](OpBuilder &b, Location l, Value x) {
      auto [i, j] = index(x);
      return partAt(b, l, t, i, j, p);
    });
  };
  return pairs ? hypotenuse(b, l, part(0), part(1), c) : part(0);
}

namespace {

/// The most balancing sweeps (dgebal has no limit; a few is the rule).
constexpr int64_t kMaxBalanceSweeps = 1000;

/// Columns j and p of matrix `mat` of `t` exchanged over rows [0, end).
Value swapColumns(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value j, Value p,
                  Value end) {
  return Scalars(b, loc).loop(Scalars(b, loc).index(0), end, {t},
                              [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
                                return {mat.swap(b, l, u[0], r, j, r, p)};
                              })[0];
}

/// Columns j and p of matrix `mat` over rows [0, last] and rows j and p
/// over columns [first, n) exchanged (dgebal's exchange).
Value exchange(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value j, Value p,
               Value first, Value last) {
  Scalars s(b, loc);
  h = swapColumns(b, loc, mat, h, j, p, plusOne(b, loc, last));
  return s.loop(first, s.index(mat.n), {h},
                [&](OpBuilder &b, Location l, Value c, ValueRange u) -> Carried {
                  return {mat.swap(b, l, u[0], j, c, p, c)};
                })[0];
}

/// Whether entries (`zero(x)` tells) for x in [lo, hi), x != j, are all zero.
Value zeroOffDiagonal(OpBuilder &b, Location loc, Value j, Value lo, Value hi,
                      function_ref<Value(OpBuilder &, Location, Value)> zero) {
  Scalars s(b, loc);
  return s.loop(lo, hi, {Arithmetic(b, loc).truth(true)},
                [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
                  Arithmetic a(b, l);
                  Value diagonal = a.icmp(arith::CmpIPredicate::eq, x, j);
                  return {a.both(u[0], a.either(diagonal, zero(b, l, x)))};
                })[0];
}

} // namespace

/// dgebal's exchanges (the loops carry their tensors first: canonicalization
/// drops the unused index a before region receives, and bufferization
/// pairs the values scf.condition passes with the before region's
/// arguments by position): while some row j in [0, last] is zero in columns [0,
/// last] off the diagonal (the last such j), it is exchanged with row (and
/// column) `last`, and last moves up; then while some column j in [first,
/// last] is zero in rows [first, last] off the diagonal (the first such
/// j), with column `first`, and first moves down. Each exchange's j is
/// recorded at its position in row m of `scales`, as dgebal's SCALE
/// records it (dgebak undoes them from there). Returns h, scales, first,
/// last.
Carried kiln::aten::isolateEigenvalues(OpBuilder &b, Location loc, const Matrix &mat, Value h,
                                       Value scales, const Limits &c) {
  Scalars s(b, loc);
  Value zero = s.index(0);
  Type element = c.zero.getType();
  auto record = [&](OpBuilder &b, Location l, Value scales, Value at, Value j) {
    Value x = b.create<arith::SIToFPOp>(l, element,
                                        b.create<arith::IndexCastOp>(l, b.getI64Type(), j));
    return Scalars::put(b, l, x, scales, {mat.m, at});
  };
  auto rowsDone = whileLoop(
      b, loc, {h, scales, s.index(mat.n - 1), zero},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Scalars s(b, l);
        Arithmetic a(b, l);
        Value last = u[2], end = plusOne(b, l, last);
        Carried found = s.loop(
            s.index(0), end, {zero, a.truth(false)},
            [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
              Arithmetic a(b, l);
              Value isolated = zeroOffDiagonal(
                  b, l, j, Scalars(b, l).index(0), end,
                  [&](OpBuilder &b, Location l, Value i) { return mat.isZero(b, l, u[0], j, i, c.zero); });
              return {a.select(isolated, j, w[0]), a.either(w[1], isolated)};
            });
        Value go = a.both(a.icmp(arith::CmpIPredicate::sgt, last, zero), found[1]);
        return {go, {u[0], u[1], last, found[0]}};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Arithmetic a(b, l);
        Value swapped = exchange(b, l, mat, u[0], u[3], u[2], a.index(0), u[2]);
        return {swapped, record(b, l, u[1], u[2], u[3]), a.minus(u[2], a.index(1)), u[3]};
      });
  Value last = rowsDone[2];
  auto columnsDone = whileLoop(
      b, loc, {rowsDone[0], rowsDone[1], zero, zero},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Scalars s(b, l);
        Arithmetic a(b, l);
        Value first = u[2], end = plusOne(b, l, last);
        Carried found = s.loop(
            first, end, {first, a.truth(false)},
            [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
              Arithmetic a(b, l);
              Value isolated = zeroOffDiagonal(
                  b, l, j, first, end,
                  [&](OpBuilder &b, Location l, Value i) { return mat.isZero(b, l, u[0], i, j, c.zero); });
              Value take = a.both(isolated, a.negate(w[1]));
              return {a.select(take, j, w[0]), a.either(w[1], isolated)};
            });
        Value go = a.both(a.icmp(arith::CmpIPredicate::slt, first, last), found[1]);
        return {go, {u[0], u[1], first, found[0]}};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Value swapped = exchange(b, l, mat, u[0], u[3], u[2], u[2], last);
        return {swapped, record(b, l, u[1], u[2], u[3]), plusOne(b, l, u[2]), u[3]};
      });
  return {columnsDone[0], columnsDone[1], columnsDone[2], last};
}

/// dgebal's scaling of the active block [first, last]: sweeps over its rows
/// and columns i, each scaled by a power of 2, f, that brings the column's
/// and row's norms (c f, r / f) within a factor 2 of each other, when that
/// cuts c + r by 5 % (and keeps the total scale of i in range); until a
/// sweep scales nothing. Row m of `scales` holds the exchanges outside
/// [first, last] and gets each i's total factor inside (dgebal's SCALE,
/// which dgebak reads). Returns h and scales.
Carried kiln::aten::balance(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value scales,
                            Value first, Value last, const Limits &c) {
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
              auto column = [&](OpBuilder &b, Location l, Value x) { return mat.magnitude(b, l, h, x, i, c); };
              auto row = [&](OpBuilder &b, Location l, Value x) { return mat.magnitude(b, l, h, i, x, c); };
              Value cn = mat.norm(b, l, h, first, end, c, [&](Value x) { return std::pair(x, i); });
              Value rn = mat.norm(b, l, h, first, end, c, [&](Value x) { return std::pair(i, x); });
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
                                             return {mat.scale(b, l, v[0], i, x, g)};
                                           })[0];
                          t = s.loop(s.index(0), end, {t},
                                     [&](OpBuilder &b, Location l, Value x, ValueRange v) -> Carried {
                                       return {mat.scale(b, l, v[0], x, i, f)};
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

/// Loops over the entries (i, j) of matrix `mat`, row by row, carrying
/// `init`.
Carried kiln::aten::forEachEntry(OpBuilder &b, Location loc, const Matrix &mat, ValueRange init,
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
std::pair<Value, Value> kiln::aten::finiteOrZero(OpBuilder &b, Location loc, const Matrix &mat, Value h,
                                     const Limits &c) {
  Scalars s(b, loc);
  Value inf = s.number(c.zero.getType(), std::numeric_limits<double>::infinity());
  const int64_t parts = mat.pairs ? 2 : 1;
  Value finite = forEachEntry(b, loc, mat, {Arithmetic(b, loc).truth(true)},
                              [&](OpBuilder &b, Location l, Value i, Value j, ValueRange u) -> Carried {
                                Arithmetic a(b, l);
                                Value all = u[0];
                                for (int64_t p = 0; p < parts; ++p)
                                  all = a.both(all, a.lt(a.abs(mat.partAt(b, l, h, i, j, p)), inf));
                                return {all};
                              })[0];
  h = forEachEntry(b, loc, mat, {h}, [&](OpBuilder &b, Location l, Value i, Value j, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value t = u[0];
    for (int64_t p = 0; p < parts; ++p)
      t = mat.partPut(b, l, a.select(finite, mat.partAt(b, l, t, i, j, p), c.zero), t, i, j, p);
    return {t};
  })[0];
  return {finite, h};
}

/// dtrevc3's guard against overflow in a 1 x 1 step of the back
/// substitution, x_j = b / d: the factor (at most 1) by which the whole
/// vector is scaled first, so that neither x_j (dlaln2: |b| > bignum |d|
/// with |d| < 1) nor the update of the entries above it (|x_j| > 1 and the
/// column's 1-norm above the diagonal, `column`, > bignum / |x_j|) can
/// overflow. `bMag` and `dMag` are |b| and |d| (1-norms of complex ones).
Value kiln::aten::overflowScale(Arithmetic &a, Value bMag, Value dMag, Value column, Value bignum,
                    const Limits &c) {
  Value huge = a.both(a.lt(dMag, c.one),
                      a.both(a.gt(bMag, c.one), a.gt(bMag, a.mul(bignum, dMag))));
  Value first = a.select(huge, a.div(c.one, bMag), c.one);
  Value xMag = a.div(a.mul(bMag, first), a.select(a.eq(dMag, c.zero), c.one, dMag));
  Value spill = a.both(a.gt(xMag, c.one), a.gt(column, a.div(bignum, xMag)));
  return a.mul(first, a.select(spill, a.div(c.one, xMag), c.one));
}

/// dgebak ('B', 'R') on V^T: column i (each vector's entry i) times
/// scales[i] for i in [first, last], then the exchanges undone, the left
/// ones from first - 1 down, then the right ones from last + 1 up.
Value kiln::aten::undoBalancing(OpBuilder &b, Location loc, const Matrix &mat, Value vt,
                                Value scales, Value first, Value last) {
  Scalars s(b, loc);
  Value end = plusOne(b, loc, last);
  vt = forEachEntry(b, loc, mat, {vt}, [&](OpBuilder &b, Location l, Value r, Value i, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value inside = a.both(a.icmp(arith::CmpIPredicate::sge, i, first),
                          a.icmp(arith::CmpIPredicate::slt, i, end));
    Value one = Scalars(b, l).number(cast<RankedTensorType>(scales.getType()).getElementType(), 1.0);
    return {mat.scale(b, l, u[0], r, i, a.select(inside, Scalars::at(b, l, scales, {mat.m, i}), one))};
  })[0];
  return s.loop(s.index(0), s.index(mat.n), {vt}, [&](OpBuilder &b, Location l, Value ii, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value left = a.icmp(arith::CmpIPredicate::slt, ii, first);
    Value right = a.icmp(arith::CmpIPredicate::sge, ii, end);
    Value i = a.select(left, a.minus(a.minus(first, a.index(1)), ii), ii);
    Value outside = a.either(left, right);
    Value p = b.create<arith::IndexCastOp>(
        l, b.getIndexType(),
        b.create<arith::FPToSIOp>(l, b.getI64Type(), Scalars::at(b, l, scales, {mat.m, i})));
    p = a.select(outside, p, i);
    return {swapColumns(b, l, mat, u[0], i, p, a.index(mat.n))};
  })[0];
}

namespace {

/// dgehd2 on the active block [first, last] of matrix `mat`: reflector i
/// maps column i's entries from row i + 1 down to (beta, 0, ...) and is
/// applied from the right to rows [0, last] and from the left to columns
/// [i + 1, n) (v's tail is kept in the scratch row `v`, its 1 at i + 1; `w`
/// is a second scratch row); with `zt` (the identity), also from the left
/// to Z^T, which becomes Q^T (dorghr's Q, one vector per row). Returns h,
/// v, w and zt.
Carried hessenberg(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value v, Value w,
                   Value zt, Value first, Value last, const Limits &c) {
  Scalars s(b, loc);
  Value end = plusOne(b, loc, last);
  Value stop = Arithmetic(b, loc).largest(Arithmetic(b, loc).minus(last, s.index(1)), first);
  Carried init{h, v, w};
  if (zt)
    init.push_back(zt);
  return s.loop(first, stop, init, [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
    Scalars s(b, l);
    Value h = t[0], v = t[1];
    Value head = plusOne(b, l, i), below = plusOne(b, l, head);
    auto column = [&](OpBuilder &b, Location l, Value x) { return mat.at(b, l, h, x, i); };
    Value alpha = mat.at(b, l, h, head, i);
    Value tailNorm = scaledNorm(b, l, below, end, c, column);
    Householder reflector = householder(b, l, alpha, tailNorm, c);
    Value tau = reflector.tau, beta = reflector.beta, scale = reflector.scale;
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
    h = s.loop(s.index(0), end, {h}, [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
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
    auto vAt = [&](OpBuilder &b, Location l, Value r, Value) {
      Arithmetic a(b, l);
      Value inside = a.icmp(arith::CmpIPredicate::sle, r, last);
      return a.select(inside, Scalars::at(b, l, v, {r}), c.zero);
    };
    Carried left = applyReflector(b, l, h, t[2], mat.m, head, mat.n, head, mat.n, tau, vAt);
    if (t.size() < 4)
      return {left[0], v, left[1]};
    Carried z = applyReflector(b, l, t[3], left[1], mat.m, head, mat.n, s.index(0), mat.n, tau, vAt);
    return {left[0], v, z[1], z[0]};
  });
}

/// rows[k] -= sum over the given columns j of x_j T[k, j], k in [0, end):
/// the back substitution's update of the right-hand side above a block.
Value subtractColumns(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value rows, Value end,
                      llvm::ArrayRef<std::pair<Value, Value>> columns) {
  return Scalars(b, loc).loop(Scalars(b, loc).index(0), end, {rows},
                              [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
                                Arithmetic a(b, l);
                                Value x = Scalars::at(b, l, u[0], {k});
                                for (auto [xj, j] : columns)
                                  x = a.sub(x, a.mul(xj, mat.at(b, l, t, k, j)));
                                return {Scalars::put(b, l, x, u[0], {k})};
                              })[0];
}

/// Row `row` of `zt` (Z^T) becomes head zt[row] + the sum over r < `end`
/// of x[r] zt[r] (Z times the vector, whose rows below `end` other than
/// `row` are zero; those rows of zt are still Z's).
Value backTransform(OpBuilder &b, Location loc, const Matrix &mat, Value zt, Value x, Value row,
                    Value end, Value head) {
  Scalars s(b, loc);
  zt = s.loop(s.index(0), s.index(mat.n), {zt}, [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
    Value y = Arithmetic(b, l).mul(head, mat.at(b, l, u[0], row, col));
    return {mat.put(b, l, y, u[0], row, col)};
  })[0];
  return s.loop(s.index(0), end, {zt}, [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
    Value xr = Scalars::at(b, l, x, {r});
    return Scalars(b, l).loop(Scalars(b, l).index(0), Scalars(b, l).index(mat.n), u,
                              [&](OpBuilder &b, Location l, Value col, ValueRange w) -> Carried {
                                Arithmetic a(b, l);
                                Value y = a.add(mat.at(b, l, w[0], row, col),
                                                a.mul(xr, mat.at(b, l, w[0], r, col)));
                                return {mat.put(b, l, y, w[0], row, col)};
                              });
  })[0];
}

/// The entries [0, end) of the rows `xs` times `factor`, skipped when it is 1.
Carried scaleEntries(OpBuilder &b, Location loc, ValueRange xs, Value end, Value factor,
                     const Limits &c) {
  Arithmetic a(b, loc);
  auto scaled = b.create<scf::IfOp>(
      loc, a.ne(factor, c.one),
      [&](OpBuilder &b, Location l) {
        Carried out = Scalars(b, l).loop(Scalars(b, l).index(0), end, xs,
                                         [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
                                           Carried y;
                                           for (Value x : u)
                                             y.push_back(Scalars::put(
                                                 b, l, Arithmetic(b, l).mul(Scalars::at(b, l, x, {k}), factor), x, {k}));
                                           return y;
                                         });
        b.create<scf::YieldOp>(l, out);
      },
      [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, xs); });
  return Carried(scaled.getResults());
}

/// Whether T has a 2 x 2 block at rows (j - 1, j): j > 0 and T[j, j - 1] != 0.
Value blockEndsAt(OpBuilder &b, Location l, const Matrix &mat, Value t, Value j, const Limits &c) {
  Arithmetic a(b, l);
  Value above = a.largest(a.minus(j, a.index(1)), a.index(0));
  return a.both(a.icmp(arith::CmpIPredicate::sgt, j, a.index(0)),
                a.ne(mat.at(b, l, t, j, above), c.zero));
}

/// dtrevc3's real eigenvector of T for the value T[ki, ki], back-transformed
/// into row ki of `zt`: x[ki] = 1, x[k] = -T[k, ki] above, then back
/// substitution through T's 1 x 1 and 2 x 2 blocks above ki (a 1 x 1 pivot
/// below smin replaced by smin, as dlaln2 perturbs it). Returns zt and x.
Carried realVector(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value zt, Value x,
                   Value ki, Value smlnum, const Limits &c) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Value lam = mat.at(b, loc, t, ki, ki);
  Value smin = a.max(a.mul(c.ulp, a.abs(lam)), smlnum);
  Value bignum = a.div(a.sub(c.one, c.ulp), smlnum);
  x = s.loop(s.index(0), ki, {x}, [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
    return {Scalars::put(b, l, Arithmetic(b, l).neg(mat.at(b, l, t, k, ki)), u[0], {k})};
  })[0];
  x = Scalars::put(b, loc, c.one, x, {ki});
  Carried solved = whileLoop(
      b, loc, {x, a.minus(ki, a.index(1))},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Arithmetic a(b, l);
        return {a.icmp(arith::CmpIPredicate::sge, u[1], a.index(0)), Carried(u)};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Value j = u[1];
        auto step = b.create<scf::IfOp>(
            l, blockEndsAt(b, l, mat, t, j, c),
            [&](OpBuilder &b, Location l) {
              // (T's 2 x 2 block - lam) (x[j-1], x[j]) = rhs, by Cramer's rule.
              Arithmetic a(b, l);
              Value j1 = a.minus(j, a.index(1));
              Value a11 = a.sub(mat.at(b, l, t, j1, j1), lam), a12 = mat.at(b, l, t, j1, j);
              Value a21 = mat.at(b, l, t, j, j1), a22 = a.sub(mat.at(b, l, t, j, j), lam);
              Value b1 = Scalars::at(b, l, u[0], {j1}), b2 = Scalars::at(b, l, u[0], {j});
              Value det = a.sub(a.mul(a11, a22), a.mul(a12, a21));
              Value x1 = a.div(a.sub(a.mul(a22, b1), a.mul(a12, b2)), det);
              Value x2 = a.div(a.sub(a.mul(a11, b2), a.mul(a21, b1)), det);
              Value y = Scalars::put(b, l, x2, Scalars::put(b, l, x1, u[0], {j1}), {j});
              y = subtractColumns(b, l, mat, t, y, j1, {{x1, j1}, {x2, j}});
              b.create<scf::YieldOp>(l, ValueRange{y, a.minus(j, a.index(2))});
            },
            [&](OpBuilder &b, Location l) {
              Arithmetic a(b, l);
              Value d = a.sub(mat.at(b, l, t, j, j), lam);
              d = a.select(a.lt(a.abs(d), smin), smin, d);
              Value bj = Scalars::at(b, l, u[0], {j});
              Value factor = overflowScale(a, a.abs(bj), a.abs(d), columnAbove(b, l, mat, t, j, c),
                                           bignum, c);
              Value y = scaleEntries(b, l, {u[0]}, plusOne(b, l, ki), factor, c)[0];
              Value xj = a.div(a.mul(bj, factor), d);
              y = Scalars::put(b, l, xj, y, {j});
              y = subtractColumns(b, l, mat, t, y, j, {{xj, j}});
              b.create<scf::YieldOp>(l, ValueRange{y, a.minus(j, a.index(1))});
            });
        return Carried(step.getResults());
      });
  Value head = Scalars::at(b, loc, solved[0], {ki});
  return {backTransform(b, loc, mat, zt, solved[0], ki, ki, head), solved[0]};
}

/// dtrevc3's complex eigenvector of T for the pair in rows (ki - 1, ki),
/// wr + i w with w = sqrt(|T[ki-1, ki]|) sqrt(|T[ki, ki-1]|): the 2 x 2
/// block's own solve, then complex back substitution through the blocks
/// above (smin as for a real vector), the real parts into xr and the
/// imaginary ones into xi; back-transformed into rows ki - 1 (real part)
/// and ki (imaginary part) of `zt`. Returns zt, xr and xi.
Carried complexVector(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value zt, Value xr,
                      Value xi, Value ki, Value smlnum, const Limits &c) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Value k0 = a.minus(ki, a.index(1));
  Value upper = mat.at(b, loc, t, k0, ki), lower = mat.at(b, loc, t, ki, k0);
  Value w = a.mul(a.sqrt(a.abs(upper)), a.sqrt(a.abs(lower)));
  Complex lam{mat.at(b, loc, t, ki, ki), w};
  Value smin = a.max(a.mul(c.ulp, a.add(a.abs(lam.re), w)), smlnum);
  Value bignum = a.div(a.sub(c.one, c.ulp), smlnum);
  Value byUpper = a.ge(a.abs(upper), a.abs(lower));
  Value headRe = a.select(byUpper, c.one, a.neg(a.div(w, lower)));
  Value tailIm = a.select(byUpper, a.div(w, upper), c.one);
  Carried rhs = s.loop(s.index(0), k0, {xr, xi}, [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    return {Scalars::put(b, l, a.neg(a.mul(headRe, mat.at(b, l, t, k, k0))), u[0], {k}),
            Scalars::put(b, l, a.neg(a.mul(tailIm, mat.at(b, l, t, k, ki))), u[1], {k})};
  });
  xr = Scalars::put(b, loc, c.zero, Scalars::put(b, loc, headRe, rhs[0], {k0}), {ki});
  xi = Scalars::put(b, loc, tailIm, Scalars::put(b, loc, c.zero, rhs[1], {k0}), {ki});
  auto entry = [&](OpBuilder &b, Location l, ValueRange u, Value j) {
    return Complex{Scalars::at(b, l, u[0], {j}), Scalars::at(b, l, u[1], {j})};
  };
  auto put = [&](OpBuilder &b, Location l, Carried &u, Value j, Complex x) {
    u[0] = Scalars::put(b, l, x.re, u[0], {j});
    u[1] = Scalars::put(b, l, x.im, u[1], {j});
  };
  Carried solved = whileLoop(
      b, loc, {xr, xi, a.minus(ki, a.index(2))},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Arithmetic a(b, l);
        return {a.icmp(arith::CmpIPredicate::sge, u[2], a.index(0)), Carried(u)};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Value j = u[2];
        auto step = b.create<scf::IfOp>(
            l, blockEndsAt(b, l, mat, t, j, c),
            [&](OpBuilder &b, Location l) {
              // (T's 2 x 2 block - lam) (x[j-1], x[j]) = rhs, by Cramer's rule.
              Arithmetic a(b, l);
              Value j1 = a.minus(j, a.index(1));
              Complex a11 = minus(a, Complex{mat.at(b, l, t, j1, j1), c.zero}, lam);
              Complex a22 = minus(a, Complex{mat.at(b, l, t, j, j), c.zero}, lam);
              Value a12 = mat.at(b, l, t, j1, j), a21 = mat.at(b, l, t, j, j1);
              Complex b1 = entry(b, l, u, j1), b2 = entry(b, l, u, j);
              Complex det = minus(a, times(a, a11, a22), Complex{a.mul(a12, a21), c.zero});
              // A block with the pair's own values (a repeated pair) is
              // singular; as dlaln2 replaces a tiny pivot by smin, a zero
              // determinant becomes smin^2 (the right-hand side is then 0).
              Value floor = a.max(a.mul(smin, smin), c.safmin);
              Value singular = a.lt(a.add(a.abs(det.re), a.abs(det.im)), floor);
              det = {a.select(singular, floor, det.re), a.select(singular, c.zero, det.im)};
              Complex x1 = quotient(a, minus(a, times(a, a22, b1), scaled(a, b2, a12)), det);
              Complex x2 = quotient(a, minus(a, times(a, a11, b2), scaled(a, b1, a21)), det);
              Carried y{u[0], u[1]};
              put(b, l, y, j1, x1);
              put(b, l, y, j, x2);
              y[0] = subtractColumns(b, l, mat, t, y[0], j1, {{x1.re, j1}, {x2.re, j}});
              y[1] = subtractColumns(b, l, mat, t, y[1], j1, {{x1.im, j1}, {x2.im, j}});
              b.create<scf::YieldOp>(l, ValueRange{y[0], y[1], a.minus(j, a.index(2))});
            },
            [&](OpBuilder &b, Location l) {
              Arithmetic a(b, l);
              Complex d = minus(a, Complex{mat.at(b, l, t, j, j), c.zero}, lam);
              Value tiny = a.lt(a.add(a.abs(d.re), a.abs(d.im)), smin);
              d = {a.select(tiny, smin, d.re), a.select(tiny, c.zero, d.im)};
              Complex bj = entry(b, l, u, j);
              Value factor = overflowScale(a, a.add(a.abs(bj.re), a.abs(bj.im)),
                                           a.add(a.abs(d.re), a.abs(d.im)),
                                           columnAbove(b, l, mat, t, j, c), bignum, c);
              Carried y = scaleEntries(b, l, {u[0], u[1]}, plusOne(b, l, ki), factor, c);
              Complex xj = quotient(a, scaled(a, bj, factor), d);
              put(b, l, y, j, xj);
              y[0] = subtractColumns(b, l, mat, t, y[0], j, {{xj.re, j}});
              y[1] = subtractColumns(b, l, mat, t, y[1], j, {{xj.im, j}});
              b.create<scf::YieldOp>(l, ValueRange{y[0], y[1], a.minus(j, a.index(1))});
            });
        return Carried(step.getResults());
      });
  zt = backTransform(b, loc, mat, zt, solved[0], k0, k0, Scalars::at(b, loc, solved[0], {k0}));
  zt = backTransform(b, loc, mat, zt, solved[1], ki, k0, Scalars::at(b, loc, solved[1], {ki}));
  return {zt, solved[0], solved[1]};
}

/// dtrevc3 ('R', 'B'): every right eigenvector of the quasi-triangular T,
/// from the last, back-transformed in place of Z^T's rows (rows below the
/// one being formed are still Z's). Returns V^T (one vector per row, a
/// complex pair's real and imaginary parts in its two rows), xr and xi.
Carried rightVectors(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value zt, Value xr,
                     Value xi, const Limits &c) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Type element = c.zero.getType();
  Value smlnum = a.mul(c.safmin, a.div(s.number(element, double(mat.n)), c.ulp));
  Carried done = whileLoop(
      b, loc, {zt, xr, xi, s.index(mat.n - 1)},
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Arithmetic a(b, l);
        return {a.icmp(arith::CmpIPredicate::sge, u[3], a.index(0)), Carried(u)};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Value ki = u[3];
        auto step = b.create<scf::IfOp>(
            l, blockEndsAt(b, l, mat, t, ki, c),
            [&](OpBuilder &b, Location l) {
              Carried v = complexVector(b, l, mat, t, u[0], u[1], u[2], ki, smlnum, c);
              v.push_back(Arithmetic(b, l).minus(ki, Arithmetic(b, l).index(2)));
              b.create<scf::YieldOp>(l, v);
            },
            [&](OpBuilder &b, Location l) {
              Carried v = realVector(b, l, mat, t, u[0], u[1], ki, smlnum, c);
              v.insert(v.begin() + 2, u[2]);
              v.push_back(Arithmetic(b, l).minus(ki, Arithmetic(b, l).index(1)));
              b.create<scf::YieldOp>(l, v);
            });
        return Carried(step.getResults());
      });
  return {done[0], done[1], done[2]};
}

/// dgeev's normalisation of V^T: a real vector to norm 1; a complex pair
/// (rows j, j + 1 where the value's imaginary part is positive) to norm 1
/// together, then rotated (dlartg, as LAPACK before 3.10 signs it) so that
/// its entry of largest modulus is real.
Value normaliseVectors(OpBuilder &b, Location loc, const Matrix &mat, Value vt, Value im,
                       const Limits &c) {
  Scalars s(b, loc);
  Value n = s.index(mat.n);
  return s.loop(s.index(0), n, {vt}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value wi = Scalars::at(b, l, im, {mat.m, j});
    Value next = a.smallest(plusOne(b, l, j), a.index(mat.n - 1));
    auto row = [&](Value t, Value r) {
      return [&, t, r](OpBuilder &b, Location l, Value x) { return mat.at(b, l, t, r, x); };
    };
    auto scaleRow = [&](OpBuilder &b, Location l, Value t, Value r, Value f) {
      return Scalars(b, l).loop(Scalars(b, l).index(0), n, {t}, [&](OpBuilder &b, Location l, Value x, ValueRange w) -> Carried {
        return {mat.put(b, l, Arithmetic(b, l).mul(mat.at(b, l, w[0], r, x), f), w[0], r, x)};
      })[0];
    };
    auto branch = b.create<scf::IfOp>(
        l, a.gt(wi, c.zero),
        [&](OpBuilder &b, Location l) {
          Arithmetic a(b, l);
          Value t = u[0];
          Value norm = hypotenuse(b, l, scaledNorm(b, l, a.index(0), n, c, row(t, j)),
                                  scaledNorm(b, l, a.index(0), n, c, row(t, next)), c);
          Value f = a.div(c.one, norm);
          t = scaleRow(b, l, scaleRow(b, l, t, j, f), next, f);
          Value k = bestIndex(b, l, a.index(1), n, a.index(0),
                                       a.add(a.mul(mat.at(b, l, t, j, a.index(0)), mat.at(b, l, t, j, a.index(0))),
                                             a.mul(mat.at(b, l, t, next, a.index(0)), mat.at(b, l, t, next, a.index(0)))),
                                       arith::CmpFPredicate::OGT, [&](OpBuilder &b, Location l, Value x) {
                                         Arithmetic a(b, l);
                                         Value p = mat.at(b, l, t, j, x), q = mat.at(b, l, t, next, x);
                                         return a.add(a.mul(p, p), a.mul(q, q));
                                       })
                        .first;
          Value f0 = mat.at(b, l, t, j, k), g0 = mat.at(b, l, t, next, k);
          Value r = a.sqrt(a.add(a.mul(f0, f0), a.mul(g0, g0)));
          Value cs = a.div(f0, r), sn = a.div(g0, r);
          Value flip = a.both(a.gt(a.abs(f0), a.abs(g0)), a.lt(cs, c.zero));
          cs = a.select(flip, a.neg(cs), cs);
          sn = a.select(flip, a.neg(sn), sn);
          Value noG = a.eq(g0, c.zero), noF = a.eq(f0, c.zero);
          cs = a.select(noG, c.one, a.select(noF, c.zero, cs));
          sn = a.select(noG, c.zero, a.select(noF, c.one, sn));
          t = Scalars(b, l).loop(a.index(0), n, {t}, [&](OpBuilder &b, Location l, Value x, ValueRange w) -> Carried {
            Arithmetic a(b, l);
            Value p = mat.at(b, l, w[0], j, x), q = mat.at(b, l, w[0], next, x);
            Value y = mat.put(b, l, a.add(a.mul(cs, p), a.mul(sn, q)), w[0], j, x);
            return {mat.put(b, l, a.sub(a.mul(cs, q), a.mul(sn, p)), y, next, x)};
          })[0];
          t = mat.put(b, l, c.zero, t, next, k);
          b.create<scf::YieldOp>(l, t);
        },
        [&](OpBuilder &b, Location l) {
          Arithmetic a(b, l);
          Value real = a.eq(wi, c.zero);
          Value norm = scaledNorm(b, l, a.index(0), n, c, row(u[0], j));
          Value f = a.select(real, a.div(c.one, norm), c.one);
          b.create<scf::YieldOp>(l, scaleRow(b, l, u[0], j, f));
        });
    return {branch.getResult(0)};
  })[0];
}

/// The complex eigenvectors as columns of (re, im) from V^T's rows: a real
/// value's vector is its row; a pair's, rows j and j + 1 as re +- i im.
Carried vectorColumns(OpBuilder &b, Location loc, const Matrix &mat, Value vt, Value im, Value vre,
                      Value vim, const Limits &c) {
  return forEachEntry(b, loc, mat, {vre, vim}, [&](OpBuilder &b, Location l, Value j, Value r, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value wi = Scalars::at(b, l, im, {mat.m, j});
    Value first = a.gt(wi, c.zero), second = a.lt(wi, c.zero);
    Value prev = a.largest(a.minus(j, a.index(1)), a.index(0));
    Value next = a.smallest(plusOne(b, l, j), a.index(mat.n - 1));
    Value re = mat.at(b, l, vt, a.select(second, prev, j), r);
    Value imag = a.select(first, mat.at(b, l, vt, next, r),
                          a.select(second, a.neg(mat.at(b, l, vt, j, r)), c.zero));
    return {mat.put(b, l, re, u[0], r, j), mat.put(b, l, imag, u[1], r, j)};
  });
}

template <typename Op>
struct GeneralEigenLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  static constexpr bool kVectors = std::is_same_v<Op, EigOp>;

  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    if (type.getRank() != 3)
      return failure(); // complex pairs: ComplexEigen.cpp
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    auto rowsType = RankedTensorType::get({batch, n}, element);
    auto rowType = RankedTensorType::get({n}, element);
    // h, re, im, scales, two scratch rows; with vectors Z^T and the columns' parts.
    Carried init{s.fresh(type, adaptor.getSelf()), s.fresh(rowsType), s.fresh(rowsType),
                 s.fresh(rowsType), s.fresh(rowType), s.fresh(rowType)};
    if (kVectors)
      init.append({s.fresh(type), s.fresh(type), s.fresh(type)});
    Carried out = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange t) -> Carried {
          Scalars s(b, l);
          Limits c(b, l, element);
          Matrix mat{m, n};
          auto [finite, h] = finiteOrZero(b, l, mat, t[0], c);
          Carried isolated = isolateEigenvalues(b, l, mat, h, t[3], c);
          Value first = isolated[2], last = isolated[3];
          Carried balanced = balance(b, l, mat, isolated[0], isolated[1], first, last, c);
          // Every value starts as its diagonal entry (the isolated ones stay).
          Carried values = s.loop(
              s.index(0), s.index(n), {t[1], t[2]},
              [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                return {Scalars::put(b, l, mat.at(b, l, balanced[0], i, i), u[0], {m, i}),
                        Scalars::put(b, l, c.zero, u[1], {m, i})};
              });
          Value zt = kVectors ? identityColumns(b, l, t[6], m) : Value();
          Carried reduced = hessenberg(b, l, mat, balanced[0], t[4], t[5], zt, first, last, c);
          if (kVectors)
            zt = reduced[3];
          QrResult qr = francisQr(b, l, mat, reduced[0], values[0], values[1], zt, first, last, c);
          Arithmetic a(b, l);
          Value invalid = a.either(a.negate(finite), qr.failed);
          Value nan = s.number(element, std::numeric_limits<double>::quiet_NaN());
          Carried next{qr.h, Value(), Value(), balanced[1], reduced[1], reduced[2]};
          if (kVectors) {
            Carried vectors = rightVectors(b, l, mat, qr.h, qr.zt, reduced[1], reduced[2], c);
            Value vt = undoBalancing(b, l, mat, vectors[0], balanced[1], first, last);
            vt = normaliseVectors(b, l, mat, vt, qr.im, c);
            Carried columns = vectorColumns(b, l, mat, vt, qr.im, t[7], t[8], c);
            columns = forEachEntry(b, l, mat, columns, [&](OpBuilder &b, Location l, Value i, Value j, ValueRange u) -> Carried {
              Arithmetic a(b, l);
              return {mat.put(b, l, a.select(invalid, nan, mat.at(b, l, u[0], i, j)), u[0], i, j),
                      mat.put(b, l, a.select(invalid, nan, mat.at(b, l, u[1], i, j)), u[1], i, j)};
            });
            next[4] = vectors[1];
            next[5] = vectors[2];
            next.append({vt, columns[0], columns[1]});
          }
          Carried written = s.loop(
              s.index(0), s.index(n), {qr.re, qr.im},
              [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                Arithmetic a(b, l);
                Value re = a.select(invalid, nan, Scalars::at(b, l, u[0], {m, i}));
                Value im = a.select(invalid, nan, Scalars::at(b, l, u[1], {m, i}));
                return {Scalars::put(b, l, re, u[0], {m, i}), Scalars::put(b, l, im, u[1], {m, i})};
              });
          next[1] = written[0];
          next[2] = written[1];
          return next;
        });
    if (kVectors)
      rewriter.replaceOp(op, {out[1], out[2], out[7], out[8]});
    else
      rewriter.replaceOp(op, {out[1], out[2]});
    return success();
  }
};

} // namespace

void kiln::aten::populateGeneralEigenPatterns(RewritePatternSet &patterns) {
  patterns.add<GeneralEigenLowering<EigvalsOp>, GeneralEigenLowering<EigOp>>(patterns.getContext());
}
