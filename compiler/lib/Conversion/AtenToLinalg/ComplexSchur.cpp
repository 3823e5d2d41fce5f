//===- ComplexSchur.cpp - zlahqr's single-shift QR sweeps in scalar loops -===//
//
// This file implements complexQr (ComplexEigen.h): LAPACK's zlahqr on the
// active block of a complex upper Hessenberg matrix (pairs), in one
// scf.while over (H, i, lo, its, KDEFL[, Z^T]) while i has not passed the
// block's top and the sweeps since the last deflation are within 30
// max(10, order):
//
// - first the block's subdiagonal is made real (a diagonal unitary
//   similarity, zlahqr's loop 20);
// - each step finds the bottom-most negligible subdiagonal entry H[k,
//   k-1], k in (lo, i] (Ahues and Tisseur's criterion), whose k (else lo)
//   becomes the unreduced part's top; a 1 x 1 part is an eigenvalue (its
//   diagonal entry, where it stays);
// - anything larger takes one single-shift sweep: Wilkinson's shift (the
//   eigenvalue of the trailing 2 x 2 block nearer its last entry), or an
//   exceptional one after every 10th sweep without a deflation; the start
//   m where two consecutive subdiagonal entries are small (else the top);
//   the bulge chased down with 2-row reflectors (zlarfg's), applied to the
//   active part, or for the Schur form to whole rows and columns, and to
//   Z; then a start below the top and the last subdiagonal entry are
//   rescaled to stay real.
//
//===----------------------------------------------------------------------===//
#include "ComplexEigen.h"
#include "ComplexFactorisations.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln::aten {

Complex complexSqrt(OpBuilder &b, Location l, Complex z, const Limits &c) {
  Arithmetic a(b, l);
  Value r = hypotenuse(b, l, z.re, z.im, c);
  Value w = a.sqrt(a.mul(a.add(r, a.abs(z.re)), c.half));
  Value across = a.div(z.im, a.mul(c.two, a.select(a.eq(w, c.zero), c.one, w)));
  Value right = a.ge(z.re, c.zero);
  Value zero = a.eq(r, c.zero);
  return {a.select(zero, c.zero, a.select(right, w, a.abs(across))),
          a.select(zero, c.zero, a.select(right, across, a.copySign(w, z.im)))};
}

Value modulusOf(OpBuilder &b, Location l, Complex z, const Limits &c) {
  return hypotenuse(b, l, z.re, z.im, c);
}

namespace {

/// The state of zlahqr's loop: the matrix, the bottom of the unreduced
/// part (i), its top as last found (lo), the sweeps since the last
/// deflation (its; KDEFL counts the same, for the exceptional shifts), and
/// Z^T (for the Schur form only).
struct QrState {
  Value h, i, lo, its, kdefl, zt;

  Carried values() const {
    Carried v{h, i, lo, its, kdefl};
    if (zt)
      v.push_back(zt);
    return v;
  }
  static QrState from(ValueRange v) {
    return {v[0], v[1], v[2], v[3], v[4], v.size() > 5 ? v[5] : Value()};
  }
};

/// Row `line` of matrix `mat` of `t` over columns [from, to) times f, or
/// with `column` column `line` over rows [from, to).
Value scaleLine(OpBuilder &b, Location l, const Matrix &mat, Value t, Value line, Value from,
                Value to, Complex f, bool column) {
  return Scalars(b, l).loop(from, to, {t}, [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value i = column ? x : line, j = column ? line : x;
    return {withEntry(b, l, mat, times(a, f, entryOf(b, l, mat, u[0], i, j)), u[0], i, j)};
  })[0];
}

Value scaleRow(OpBuilder &b, Location l, const Matrix &mat, Value t, Value row, Value from,
               Value to, Complex f) {
  return scaleLine(b, l, mat, t, row, from, to, f, /*column=*/false);
}

Value scaleColumn(OpBuilder &b, Location l, const Matrix &mat, Value t, Value col, Value from,
                  Value to, Complex f) {
  return scaleLine(b, l, mat, t, col, from, to, f, /*column=*/true);
}

/// f where `use`, else 1.
Complex orOne(Arithmetic &a, Value use, Complex f, const Limits &c) {
  return {a.select(use, f.re, c.one), a.select(use, f.im, c.zero)};
}

/// zlahqr's loop 40: the bottom-most k in (lo, i] whose subdiagonal entry
/// H[k, k - 1] is negligible, else lo.
Value deflationPoint(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value i, Value lo,
                     Value first, Value last, Value smlnum, const Limits &c) {
  Scalars s(b, loc);
  return s.loop(plusOne(b, loc, lo), plusOne(b, loc, i), {lo},
                [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    auto at = [&](Value r, Value col) { return entryOf(b, l, mat, h, r, col); };
    Value k1 = a.minus(k, a.index(1)), k2 = a.minus(k, a.index(2)), below = plusOne(b, l, k);
    Complex sub = at(k, k1), up = at(k1, k), d0 = at(k1, k1), d1 = at(k, k);
    Value tst = a.add(absSum(a, d0), absSum(a, d1));
    Value left = a.abs(at(k1, a.largest(k2, a.index(0))).re);
    Value down = a.abs(at(a.smallest(below, a.index(mat.n - 1)), k).re);
    Value extra = a.add(a.select(a.icmp(arith::CmpIPredicate::sge, k2, first), left, c.zero),
                        a.select(a.icmp(arith::CmpIPredicate::sle, below, last), down, c.zero));
    tst = a.select(a.eq(tst, c.zero), a.add(tst, extra), tst);
    Value tiny = a.le(absSum(a, sub), smlnum);
    Value ab = a.max(absSum(a, sub), absSum(a, up)), ba = a.min(absSum(a, sub), absSum(a, up));
    Complex gap = minus(a, d0, d1);
    Value aa = a.max(absSum(a, d1), absSum(a, gap)), bb = a.min(absSum(a, d1), absSum(a, gap));
    Value sum = a.add(aa, ab);
    Value ahues = a.both(a.le(a.abs(sub.re), a.mul(c.ulp, tst)),
                         a.le(a.mul(ba, a.div(ab, sum)),
                              a.max(smlnum, a.mul(c.ulp, a.mul(bb, a.div(aa, sum))))));
    return {a.select(a.either(tiny, ahues), k, u[0])};
  })[0];
}

/// The shift of the sweep on [lo, i] after `kdefl` sweeps without a
/// deflation: exceptional ones (3/4 |H[i, i-1]| + H[i, i] at every 20th,
/// else 3/4 |H[lo+1, lo]| + H[lo, lo] at every 10th), else Wilkinson's.
Complex shiftOf(OpBuilder &b, Location l, const Matrix &mat, Value h, Value i, Value lo,
                Value kdefl, const Limits &c) {
  Arithmetic a(b, l);
  Value dat1 = Scalars(b, l).number(c.zero.getType(), 0.75);
  auto at = [&](Value r, Value col) { return entryOf(b, l, mat, h, r, col); };
  Value i1 = a.minus(i, a.index(1));
  Complex hii = at(i, i), hll = at(lo, lo);
  Complex bottom{a.add(a.mul(dat1, a.abs(at(i, i1).re)), hii.re), hii.im};
  Complex top{a.add(a.mul(dat1, a.abs(at(plusOne(b, l, lo), lo).re)), hll.re), hll.im};
  // Wilkinson's: t - u^2 / (x + y), x = (H[i-1, i-1] - t) / 2, y = +-
  // sqrt(x^2 + u^2) signed to lie with x, all scaled by max(|u|, |x|).
  Complex u = times(a, complexSqrt(b, l, at(i1, i), c), complexSqrt(b, l, at(i, i1), c));
  Value su = absSum(a, u);
  Complex x = scaled(a, minus(a, at(i1, i1), hii), c.half);
  Value sx = absSum(a, x);
  Value any = a.ne(su, c.zero);
  Value sc = a.select(any, a.max(su, sx), c.one);
  Complex xs{a.div(x.re, sc), a.div(x.im, sc)}, us{a.div(u.re, sc), a.div(u.im, sc)};
  Complex y = scaled(a, complexSqrt(b, l, plus(a, times(a, xs, xs), times(a, us, us)), c), sc);
  Value sxSafe = a.select(a.gt(sx, c.zero), sx, c.one);
  Value along = a.add(a.mul(a.div(x.re, sxSafe), y.re), a.mul(a.div(x.im, sxSafe), y.im));
  Value flip = a.both(a.gt(sx, c.zero), a.lt(along, c.zero));
  y = {a.select(flip, a.neg(y.re), y.re), a.select(flip, a.neg(y.im), y.im)};
  Complex wilkinson = minus(a, hii, times(a, u, quotient(a, u, plus(a, x, y))));
  wilkinson = {a.select(any, wilkinson.re, hii.re), a.select(any, wilkinson.im, hii.im)};
  Value atBottom = a.icmp(arith::CmpIPredicate::eq, a.remainder(kdefl, 2 * kExceptionalShiftEvery),
                          a.index(0));
  Value atTop = a.icmp(arith::CmpIPredicate::eq, a.remainder(kdefl, kExceptionalShiftEvery), a.index(0));
  auto pick = [&](Value which, Complex x, Complex y) {
    return Complex{a.select(which, x.re, y.re), a.select(which, x.im, y.im)};
  };
  return pick(atBottom, bottom, pick(atTop, top, wilkinson));
}

/// The sweep's first column at row m, (H[m, m] - t, H[m+1, m]) scaled by
/// its 1-norm, with H[m, m] and H[m+1, m+1].
struct StartColumn {
  Complex v1;
  Value v2;
  Complex h11, h22;
};

StartColumn startColumn(OpBuilder &b, Location l, const Matrix &mat, Value h, Value m, Complex t) {
  Arithmetic a(b, l);
  Value m1 = plusOne(b, l, m);
  Complex h11 = entryOf(b, l, mat, h, m, m), h22 = entryOf(b, l, mat, h, m1, m1);
  Complex h11s = minus(a, h11, t);
  Value h21 = entryOf(b, l, mat, h, m1, m).re;
  Value norm = a.add(absSum(a, h11s), a.abs(h21));
  return {{a.div(h11s.re, norm), a.div(h11s.im, norm)}, a.div(h21, norm), h11, h22};
}

/// zlahqr's loop 60: the bottom-most m in (lo, i) where starting the
/// sweep would make H[m, m-1] negligible, else lo.
Value sweepStart(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value i, Value lo,
                 Complex t, const Limits &c) {
  Scalars s(b, loc);
  return s.loop(plusOne(b, loc, lo), i, {lo}, [&](OpBuilder &b, Location l, Value m, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    StartColumn v = startColumn(b, l, mat, h, m, t);
    Value h10 = entryOf(b, l, mat, h, m, a.minus(m, a.index(1))).re;
    Value small = a.le(a.mul(a.abs(h10), a.abs(v.v2)),
                       a.mul(c.ulp, a.mul(absSum(a, v.v1), a.add(absSum(a, v.h11), absSum(a, v.h22)))));
    return {a.select(small, m, u[0])};
  })[0];
}

/// One step of the chase at row k: G = I - t1 (1, v2) (1, v2)^H, zlarfg's
/// for (alpha, x), applied as G^H to rows k and k+1 over columns [k, i2],
/// as G to columns k and k+1 over rows [i1, min(k+2, i)], and to Z's
/// columns k and k+1 (Z^T's rows).
struct ChaseStep {
  Value h, zt;
  Complex tau, head;
};

ChaseStep chaseStep(OpBuilder &b, Location l, const Matrix &mat, Value h, Value zt, Value k,
                    Value i, Value i1, Value i2, Complex alpha, Complex x, const Limits &c) {
  Scalars s(b, l);
  Arithmetic a(b, l);
  ComplexHouseholder g = complexHouseholder(b, l, alpha, modulusOf(b, l, x, c), c);
  Complex t1 = g.tau, v2 = times(a, x, g.scale);
  Value t2 = times(a, t1, v2).re;
  Value k1 = plusOne(b, l, k);
  // Rows k, k+1 (or Z^T's) as p, q: p -= sum, q -= sum w, sum = f p + t2 q.
  auto pairOfRows = [&](Value t, Value from, Value to, Complex f, Complex w, bool columns) {
    return Scalars(b, l).loop(from, to, {t}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
      Arithmetic a(b, l);
      auto at = [&](Value r) {
        return columns ? entryOf(b, l, mat, u[0], j, r) : entryOf(b, l, mat, u[0], r, j);
      };
      auto put = [&](Complex v, Value t, Value r) {
        return columns ? withEntry(b, l, mat, v, t, j, r) : withEntry(b, l, mat, v, t, r, j);
      };
      Complex p = at(k), q = at(k1);
      Complex sum = plus(a, times(a, f, p), scaled(a, q, t2));
      return {put(minus(a, q, times(a, sum, w)), put(minus(a, p, sum), u[0], k), k1)};
    })[0];
  };
  h = pairOfRows(h, k, plusOne(b, l, i2), conjugate(a, t1), v2, /*columns=*/false);
  h = pairOfRows(h, i1, plusOne(b, l, a.smallest(a.plus(k, 2), i)), t1, conjugate(a, v2),
                 /*columns=*/true);
  if (zt)
    zt = pairOfRows(zt, s.index(0), s.index(mat.n), t1, conjugate(a, v2), /*columns=*/false);
  return {h, zt, t1, g.head};
}

/// One single-shift sweep on [lo, i] (zlahqr's loops 60 to 120 and the
/// last subdiagonal entry made real). Returns h and zt.
std::pair<Value, Value> sweep(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value zt,
                              Value i, Value lo, Value kdefl, const Limits &c) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  const bool schur = static_cast<bool>(zt);
  Value i1 = schur ? s.index(0) : lo, i2 = schur ? s.index(mat.n - 1) : i;
  Complex t = shiftOf(b, loc, mat, h, i, lo, kdefl, c);
  Value m = sweepStart(b, loc, mat, h, i, lo, t, c);
  StartColumn v = startColumn(b, loc, mat, h, m, t);
  ChaseStep first = chaseStep(b, loc, mat, h, zt, m, i, i1, i2, v.v1, Complex{v.v2, c.zero}, c);
  // Started below the top: D H D^H with D = diag(1, ..., temp, 1, temp,
  // ...) from row m on (row and column m+1 left out; temp = (1 - t1) /
  // |1 - t1|) keeps the subdiagonal real: H[m+1, m] times conj(temp),
  // H[m+2, m+1] times temp.
  Carried state{first.h};
  if (schur)
    state.push_back(first.zt);
  auto rescaled = b.create<scf::IfOp>(
      loc, a.icmp(arith::CmpIPredicate::sgt, m, lo),
      [&](OpBuilder &b, Location l) {
        Arithmetic a(b, l);
        Complex one_t = minus(a, Complex{c.one, c.zero}, first.tau);
        Value r = modulusOf(b, l, one_t, c);
        Complex temp{a.div(one_t.re, r), a.div(one_t.im, r)};
        Value m1 = plusOne(b, l, m), m2 = a.plus(m, 2);
        Value t = withEntry(b, l, mat, times(a, conjugate(a, temp), entryOf(b, l, mat, state[0], m1, m)),
                            state[0], m1, m);
        Value below = a.icmp(arith::CmpIPredicate::sle, m2, i);
        Value m2c = a.smallest(m2, a.index(mat.n - 1)), m1c = a.smallest(m1, a.index(mat.n - 1));
        t = withEntry(b, l, mat,
                      times(a, orOne(a, below, temp, c), entryOf(b, l, mat, t, m2c, m1c)), t, m2c, m1c);
        Carried init{t};
        if (schur)
          init.push_back(state[1]);
        Carried out = Scalars(b, l).loop(m, plusOne(b, l, i), init,
                                         [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
          Arithmetic a(b, l);
          Value skip = a.icmp(arith::CmpIPredicate::eq, j, m1);
          Complex f = orOne(a, a.negate(skip), temp, c);
          Value t = scaleRow(b, l, mat, u[0], j, plusOne(b, l, j), plusOne(b, l, i2), f);
          t = scaleColumn(b, l, mat, t, j, i1, j, conjugate(a, f));
          if (!schur)
            return {t};
          return {t, scaleRow(b, l, mat, u[1], j, a.index(0), a.index(mat.n), conjugate(a, f))};
        });
        b.create<scf::YieldOp>(l, out);
      },
      [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, state); });
  Carried chase{rescaled.getResult(0)};
  if (schur)
    chase.push_back(rescaled.getResult(1));
  chase = s.loop(plusOne(b, loc, m), i, chase, [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value k0 = a.minus(k, a.index(1)), k1 = plusOne(b, l, k);
    Complex alpha = entryOf(b, l, mat, u[0], k, k0), x = entryOf(b, l, mat, u[0], k1, k0);
    ChaseStep st = chaseStep(b, l, mat, u[0], schur ? u[1] : Value(), k, i, i1, i2, alpha, x, c);
    Value t = withEntry(b, l, mat, st.head, st.h, k, k0);
    t = withEntry(b, l, mat, Complex{c.zero, c.zero}, t, k1, k0);
    if (!schur)
      return {t};
    return {t, st.zt};
  });
  // H[i, i-1] made real: D^H H D with D's entry i temp = H[i, i-1] / |.|.
  Value i0 = a.minus(i, a.index(1));
  Complex last = entryOf(b, loc, mat, chase[0], i, i0);
  Value nonReal = a.ne(last.im, c.zero);
  Value r = modulusOf(b, loc, last, c);
  Value safe = a.select(nonReal, r, c.one);
  Complex temp = orOne(a, nonReal, Complex{a.div(last.re, safe), a.div(last.im, safe)}, c);
  Value out = withEntry(b, loc, mat, Complex{a.select(nonReal, r, last.re), a.select(nonReal, c.zero, last.im)},
                        chase[0], i, i0);
  out = scaleRow(b, loc, mat, out, i, plusOne(b, loc, i), plusOne(b, loc, i2), conjugate(a, temp));
  out = scaleColumn(b, loc, mat, out, i, i1, i, temp);
  Value z = schur ? scaleRow(b, loc, mat, chase[1], i, s.index(0), s.index(mat.n), temp) : Value();
  return {out, z};
}

} // namespace

ComplexQrResult complexQr(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value zt,
                          Value first, Value last, const Limits &c) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  const bool schur = static_cast<bool>(zt);
  Type element = c.zero.getType();
  // The subdiagonal made real: row i times sc = conj(H[i, i-1]) / |.|,
  // column i times conj(sc), and Z's column i.
  Value jlo = schur ? s.index(0) : first, jhi = schur ? s.index(mat.n - 1) : last;
  Carried realSub{h};
  if (schur)
    realSub.push_back(zt);
  realSub = s.loop(plusOne(b, loc, first), plusOne(b, loc, last), realSub,
                   [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value i0 = a.minus(i, a.index(1));
    Complex sub = entryOf(b, l, mat, u[0], i, i0);
    Value nonReal = a.ne(sub.im, c.zero);
    Value norm1 = a.select(nonReal, absSum(a, sub), c.one);
    Complex sc = conjugate(a, Complex{a.div(sub.re, norm1), a.div(sub.im, norm1)});
    Value r = a.select(nonReal, modulusOf(b, l, sc, c), c.one);
    sc = orOne(a, nonReal, Complex{a.div(sc.re, r), a.div(sc.im, r)}, c);
    Complex real{a.select(nonReal, modulusOf(b, l, sub, c), sub.re), a.select(nonReal, c.zero, sub.im)};
    Value t = withEntry(b, l, mat, real, u[0], i, i0);
    t = scaleRow(b, l, mat, t, i, i, plusOne(b, l, jhi), sc);
    t = scaleColumn(b, l, mat, t, i, jlo, plusOne(b, l, a.smallest(jhi, plusOne(b, l, i))),
                    conjugate(a, sc));
    if (!schur)
      return {t};
    return {t, scaleRow(b, l, mat, u[1], i, a.index(0), a.index(mat.n), conjugate(a, sc))};
  });
  Value order = plusOne(b, loc, a.minus(last, first));
  Value orderF = b.create<arith::SIToFPOp>(loc, element,
                                           b.create<arith::IndexCastOp>(loc, b.getI64Type(), order));
  Value smlnum = a.mul(c.safmin, a.div(orderF, c.ulp));
  Value itmax = b.create<arith::MulIOp>(loc, a.largest(order, a.index(10)), a.index(30));
  QrState init{realSub[0], last, first, s.index(0), s.index(0), schur ? realSub[1] : Value()};
  Carried out = whileLoop(
      b, loc, init.values(),
      [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
        Arithmetic a(b, l);
        QrState st = QrState::from(u);
        Value go = a.both(a.icmp(arith::CmpIPredicate::sge, st.i, first),
                          a.icmp(arith::CmpIPredicate::sle, st.its, itmax));
        return {go, Carried(u)};
      },
      [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Arithmetic a(b, l);
        QrState st = QrState::from(u);
        Value lo = deflationPoint(b, l, mat, st.h, st.i, st.lo, first, last, smlnum, c);
        Value prev = a.largest(a.minus(lo, a.index(1)), a.index(0));
        Complex old = entryOf(b, l, mat, st.h, lo, prev);
        Value cut = a.icmp(arith::CmpIPredicate::sgt, lo, first);
        Value hh = withEntry(b, l, mat, Complex{a.select(cut, c.zero, old.re), a.select(cut, c.zero, old.im)},
                             st.h, lo, prev);
        auto next = b.create<scf::IfOp>(
            l, a.icmp(arith::CmpIPredicate::sge, lo, st.i),
            [&](OpBuilder &b, Location l) {
              Arithmetic a(b, l);
              QrState done = st;
              done.h = hh;
              done.i = a.minus(lo, a.index(1));
              done.lo = first;
              done.its = a.index(0);
              done.kdefl = a.index(0);
              b.create<scf::YieldOp>(l, done.values());
            },
            [&](OpBuilder &b, Location l) {
              Arithmetic a(b, l);
              QrState swept = st;
              swept.kdefl = a.plus(st.kdefl, 1);
              auto [hs, zs] = sweep(b, l, mat, hh, st.zt, st.i, lo, swept.kdefl, c);
              swept.h = hs;
              swept.zt = zs;
              swept.lo = lo;
              swept.its = a.plus(st.its, 1);
              b.create<scf::YieldOp>(l, swept.values());
            });
        return Carried(next.getResults());
      });
  QrState st = QrState::from(out);
  return {st.h, st.zt, a.icmp(arith::CmpIPredicate::sge, st.i, first)};
}

} // namespace kiln::aten
