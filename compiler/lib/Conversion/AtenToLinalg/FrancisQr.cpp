//===- FrancisQr.cpp - dlahqr's double-shift QR sweeps in scalar loops ---===//
//
// This file implements francisQr (GeneralEigen.h): LAPACK's dlahqr on the
// active block of an upper Hessenberg matrix, in one scf.while over the
// state (H, values, Z^T, i, lo, sweeps, KDEFL, failed) until i passes the
// block's top:
//
// - past 30 max(10, order) sweeps since the last deflation (order: the
//   active block's, LAPACK's NH) it gives up (the
//   matrix's values are then NaN, where eager raises);
// - else the bottom-most negligible subdiagonal entry at or below lo
//   (Ahues and Kressner's criterion) becomes the unreduced part's top;
// - a 1 x 1 part is an eigenvalue; a 2 x 2 part is standardised as dlanv2
//   does (a real pair triangular, a complex pair with an equal diagonal and
//   off-diagonal entries of opposite signs), its values the diagonal and
//   +- sqrt(|b|) sqrt(|c|), and, for the Schur form, its rotation applied
//   to the rest of the two rows and columns and to Z;
// - anything larger takes one Francis double-shift sweep: shifts from the
//   trailing 2 x 2 block (or exceptional ones every 10th sweep), the start
//   where two consecutive subdiagonal entries are small, then the bulge
//   chased down with 3-row reflectors (2 at the bottom), applied to the
//   active part, or for the Schur form to whole rows and columns, and to Z.
//
//===----------------------------------------------------------------------===//
#include "GeneralEigen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln::aten {

namespace {

/// The state of dlahqr's loop: the matrix, the values, the bottom of the
/// unreduced part (i), its top as last found (lo), the sweeps since the
/// last deflation, dlahqr's KDEFL, whether it gave up, and Z^T (for the
/// Schur form only).
struct QrState {
  Value h, re, im, i, lo, sweeps, kdefl, failed, zt;

  Carried values() const {
    Carried v{h, re, im, i, lo, sweeps, kdefl, failed};
    if (zt)
      v.push_back(zt);
    return v;
  }
  static QrState from(ValueRange v) {
    return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v.size() > 8 ? v[8] : Value()};
  }
};

/// dlanv2 on [[p, q], [r, t]]: the standardised block (a, b, c, d) and the
/// rotation (cs, sn) that makes it, [a b; c d] = [cs -sn; sn cs]^T [p q;
/// r t] [cs -sn; sn cs]: triangular (c = 0) for real values, the real pair
/// in dlanv2's order; for a complex pair a = d and b c < 0.
struct Standardised {
  Value a, b, c, d, cs, sn;
};

Standardised standardisePair(OpBuilder &b, Location l, Value p, Value q, Value r, Value t,
                             const Limits &c) {
  Arithmetic a(b, l);
  Scalars s(b, l);
  Type element = c.zero.getType();
  auto sign = [&](Value x) { return a.copySign(c.one, x); };
  Value diff = a.sub(p, t), hd = a.mul(c.half, diff);
  Value bcmax = a.max(a.abs(q), a.abs(r));
  Value bcmis = a.mul(a.min(a.abs(q), a.abs(r)), a.mul(sign(q), sign(r)));
  Value scale = a.max(a.abs(hd), bcmax);
  Value z = a.add(a.mul(a.div(hd, scale), hd), a.mul(a.div(bcmax, scale), bcmis));
  // Real and distinct: (t + zz, q - r, 0, t - (bcmax / zz) bcmis), rotated
  // by (zz, r) / |(zz, r)|.
  Value zz = a.add(hd, a.copySign(a.mul(a.sqrt(scale), a.sqrt(z)), hd));
  Value realTau = hypotenuse(b, l, r, zz, c);
  Standardised distinct{a.add(t, zz), a.sub(q, r), c.zero,
                        a.sub(t, a.mul(a.div(bcmax, zz), bcmis)), a.div(zz, realTau),
                        a.div(r, realTau)};
  // Otherwise the rotation that makes the diagonal equal...
  Value sigma = a.add(q, r);
  Value tau = hypotenuse(b, l, sigma, diff, c);
  Value cs = a.sqrt(a.mul(c.half, a.add(c.one, a.div(a.abs(sigma), tau))));
  Value sn = a.mul(a.neg(a.div(hd, a.mul(tau, cs))), sign(sigma));
  Value aa = a.add(a.mul(p, cs), a.mul(q, sn)), bb = a.add(a.mul(a.neg(p), sn), a.mul(q, cs));
  Value cc = a.add(a.mul(r, cs), a.mul(t, sn)), dd = a.add(a.mul(a.neg(r), sn), a.mul(t, cs));
  Value q2 = a.add(a.mul(bb, cs), a.mul(dd, sn));
  Value r2 = a.add(a.mul(a.neg(aa), sn), a.mul(cc, cs));
  Value mean = a.mul(c.half, a.add(a.add(a.mul(aa, cs), a.mul(cc, sn)),
                                   a.add(a.mul(a.neg(bb), sn), a.mul(dd, cs))));
  // ... then, if b' and c' have one sign, the real pair made triangular
  // by a second rotation (cs1, sn1), combined with the first.
  Value split = a.both(a.both(a.ne(r2, c.zero), a.ne(q2, c.zero)), a.eq(sign(q2), sign(r2)));
  Value sab = a.sqrt(a.abs(q2)), sac = a.sqrt(a.abs(r2));
  Value pp = a.copySign(a.mul(sab, sac), r2);
  Value tau1 = a.div(c.one, a.sqrt(a.abs(a.add(q2, r2))));
  Value cs1 = a.mul(sab, tau1), sn1 = a.mul(sac, tau1);
  Standardised pair{mean, q2, r2, mean, cs, sn};
  Standardised splitPair{a.add(mean, pp), a.sub(q2, r2), c.zero, a.sub(mean, pp),
                         a.sub(a.mul(cs, cs1), a.mul(sn, sn1)), a.add(a.mul(cs, sn1), a.mul(sn, cs1))};
  // b' = 0 with c' != 0: exchanged, (mean, -c', 0, mean), (-sn, cs).
  Value exchange = a.both(a.ne(r2, c.zero), a.eq(q2, c.zero));
  Standardised exchanged{mean, a.neg(r2), c.zero, mean, a.neg(sn), cs};
  auto choose = [&](Value cond, const Standardised &x, const Standardised &y) {
    return Standardised{a.select(cond, x.a, y.a),   a.select(cond, x.b, y.b),
                        a.select(cond, x.c, y.c),   a.select(cond, x.d, y.d),
                        a.select(cond, x.cs, y.cs), a.select(cond, x.sn, y.sn)};
  };
  Standardised rotated = choose(split, splitPair, choose(exchange, exchanged, pair));
  Value isDistinct = a.ge(z, s.number(element, 4.0 * (element.isF32()
                                                           ? std::numeric_limits<float>::epsilon()
                                                           : std::numeric_limits<double>::epsilon())));
  Standardised general = choose(isDistinct, distinct, rotated);
  // dlanv2's first cases, the last chosen first: already standard (p = t,
  // q and r of opposite signs), q = 0 (exchanged), r = 0 (triangular).
  Standardised same{p, q, r, t, c.one, c.zero};
  Value standard = a.both(a.eq(diff, c.zero), a.ne(sign(q), sign(r)));
  Standardised result = choose(standard, same, general);
  result = choose(a.eq(q, c.zero), Standardised{t, a.neg(r), c.zero, p, c.zero, c.one}, result);
  return choose(a.eq(r, c.zero), same, result);
}

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

/// The double-shift sweep's reflector (1, v2, v3) with tau t1 applied to
/// rows k, k + 1 (and k + 2 when `three`) over columns [k, end], then to
/// those columns over rows [top, min(k + 3, i)], and to those rows of `zt`.
std::pair<Value, Value> applySmallReflector(OpBuilder &b, Location loc, const Matrix &mat, Value h,
                                            Value zt, Value k, Value i, Value top, Value end,
                                            Value t1, Value v2, Value v3, bool three) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Value k1 = plusOne(b, loc, k), k2 = plusOne(b, loc, k1);
  Value t2 = a.mul(t1, v2), t3 = a.mul(t1, v3);
  // Rows k, k + 1 (, k + 2) of t over columns [from, to) (or, `byColumn`,
  // those columns over rows [from, to)): each line x -= (v . x) tau v.
  auto apply = [&](Value t, Value from, Value to, bool byColumn) {
    auto entry = [byColumn](Value line, Value j) {
      return byColumn ? std::make_pair(j, line) : std::make_pair(line, j);
    };
    return Scalars(b, loc).loop(from, to, {t}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
      Arithmetic a(b, l);
      Value t = u[0];
      auto at = [&](Value line) {
        auto [r, col] = entry(line, j);
        return mat.at(b, l, t, r, col);
      };
      auto put = [&](Value v, Value line) {
        auto [r, col] = entry(line, j);
        t = mat.put(b, l, v, t, r, col);
      };
      Value x0 = at(k), x1 = at(k1);
      Value sum = a.add(x0, a.mul(v2, x1));
      Value x2;
      if (three) {
        x2 = at(k2);
        sum = a.add(sum, a.mul(v3, x2));
      }
      put(a.sub(x0, a.mul(sum, t1)), k);
      put(a.sub(x1, a.mul(sum, t2)), k1);
      if (three)
        put(a.sub(x2, a.mul(sum, t3)), k2);
      return {t};
    })[0];
  };
  h = apply(h, k, plusOne(b, loc, end), /*byColumn=*/false);
  h = apply(h, top, plusOne(b, loc, a.smallest(a.plus(k, 3), i)), /*byColumn=*/true);
  if (zt)
    zt = apply(zt, s.index(0), s.index(mat.n), /*byColumn=*/false);
  return {h, zt};
}
/// One Francis double-shift sweep on rows and columns [lo, i] (dlahqr's
/// loop body after the deflation test, lo < i - 1): the shifts (the
/// trailing 2 x 2 block's eigenvalues, or an exceptional shift every
/// kExceptionalShiftEvery-th sweep), the start m where two consecutive
/// subdiagonal entries are small enough, then the bulge chased from m down
/// to i, its reflectors applied to the active part (rows and columns [lo,
/// i]) or, with `zt`, to whole rows and columns and to Z. `kdefl` is the
/// count with this sweep. Returns H and Z^T.
std::pair<Value, Value> francisSweep(OpBuilder &b, Location loc, const Matrix &mat, Value h,
                                     Value zt, Value i, Value lo, Value kdefl, const Limits &c) {
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
  Value top = zt ? s.index(0) : lo;
  Value end = zt ? s.index(mat.n - 1) : i;
  Carried init{h};
  if (zt)
    init.push_back(zt);
  Carried out = s.loop(m, i, init, [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
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
    Value z = u.size() > 1 ? u[1] : Value();
    auto branch = [&](bool rows3) {
      return [&, rows3](OpBuilder &b, Location l) {
        auto [hh, zz] = applySmallReflector(b, l, mat, t, z, k, i, top, end, t1, v2, v3, rows3);
        Carried y{hh};
        if (zz)
          y.push_back(zz);
        b.create<scf::YieldOp>(l, y);
      };
    };
    auto applied = b.create<scf::IfOp>(l, three, branch(true), branch(false));
    return Carried(applied.getResults());
  });
  return {out[0], zt ? out[1] : Value()};
}

} // namespace

std::array<Value, 4> reflector3(OpBuilder &b, Location l, Value alpha, Value x1, Value x2,
                                const Limits &c) {
  Arithmetic a(b, l);
  Householder h = householder(b, l, alpha, hypotenuse(b, l, x1, x2, c), c);
  return {h.tau, h.beta, a.mul(x1, h.scale), a.mul(x2, h.scale)};
}

/// (x, y) <- (cs x + sn y, cs y - sn x) for x = t[p(j)], y = t[q(j)], j in
/// [from, to) (LAPACK's drot).
static Value rotate(OpBuilder &b, Location loc, Value t, Value from, Value to, Value cs, Value sn,
                    function_ref<std::pair<SmallVector<Value>, SmallVector<Value>>(Value)> at) {
  return Scalars(b, loc).loop(from, to, {t}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    auto [p, q] = at(j);
    Value x = Scalars::at(b, l, u[0], p), y = Scalars::at(b, l, u[0], q);
    Value t = Scalars::put(b, l, a.add(a.mul(cs, x), a.mul(sn, y)), u[0], p);
    return {Scalars::put(b, l, a.sub(a.mul(cs, y), a.mul(sn, x)), t, q)};
  })[0];
}

QrResult francisQr(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value re, Value im,
                   Value zt, Value first, Value last, const Limits &c) {
  Arithmetic a(b, loc);
  Type element = c.zero.getType();
  const bool schur = static_cast<bool>(zt);
  Value order = a.plus(a.minus(last, first), a.index(1));
  Value orderF = b.create<arith::SIToFPOp>(
      loc, element, b.create<arith::IndexCastOp>(loc, b.getI64Type(), order));
  Value smlnum = a.mul(c.safmin, a.div(orderF, c.ulp));
  Value limit = b.create<arith::MulIOp>(loc, a.index(30), a.largest(a.index(10), order));
  QrState init{h, re, im, last, first, a.index(0), a.index(0), a.truth(false), zt};
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
                    Standardised block = standardisePair(b, l, mat.at(b, l, hh, i1, i1), mat.at(b, l, hh, i1, i),
                                                         mat.at(b, l, hh, i, i1), mat.at(b, l, hh, i, i), c);
                    Value im1 = a.select(a.eq(block.c, c.zero), c.zero,
                                         a.mul(a.sqrt(a.abs(block.b)), a.sqrt(a.abs(block.c))));
                    // A pair writes i - 1 then i; a single value writes i only.
                    Value reAbove = a.select(single, Scalars::at(b, l, st.re, {mat.m, i1}), block.a);
                    Value imAbove = a.select(single, Scalars::at(b, l, st.im, {mat.m, i1}), im1);
                    done.re = Scalars::put(b, l, reAbove, st.re, {mat.m, i1});
                    done.im = Scalars::put(b, l, imAbove, st.im, {mat.m, i1});
                    done.re = Scalars::put(b, l, a.select(single, mat.at(b, l, hh, i, i), block.d), done.re,
                                           {mat.m, i});
                    done.im = Scalars::put(b, l, a.select(single, c.zero, a.neg(im1)), done.im, {mat.m, i});
                    if (schur) {
                      // The standardised block, and its rotation applied to
                      // the rest of rows i - 1, i, columns i - 1, i, and Z
                      // (an identity rotation for a single value).
                      Value cs = a.select(single, c.one, block.cs), sn = a.select(single, c.zero, block.sn);
                      Value t = done.h;
                      t = mat.put(b, l, a.select(single, mat.at(b, l, t, i1, i1), block.a), t, i1, i1);
                      t = mat.put(b, l, a.select(single, mat.at(b, l, t, i1, i), block.b), t, i1, i);
                      t = mat.put(b, l, a.select(single, mat.at(b, l, t, i, i1), block.c), t, i, i1);
                      t = mat.put(b, l, a.select(single, mat.at(b, l, t, i, i), block.d), t, i, i);
                      Value m = mat.m;
                      t = rotate(b, l, t, plusOne(b, l, i), a.index(mat.n), cs, sn, [&](Value j) {
                        return std::make_pair(SmallVector<Value>{m, i1, j}, SmallVector<Value>{m, i, j});
                      });
                      t = rotate(b, l, t, a.index(0), a.minus(i, a.index(1)), cs, sn, [&](Value j) {
                        return std::make_pair(SmallVector<Value>{m, j, i1}, SmallVector<Value>{m, j, i});
                      });
                      done.h = t;
                      done.zt = rotate(b, l, st.zt, a.index(0), a.index(mat.n), cs, sn, [&](Value j) {
                        return std::make_pair(SmallVector<Value>{m, i1, j}, SmallVector<Value>{m, i, j});
                      });
                    }
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
                    auto [hs, zs] = francisSweep(b, l, mat, hh, st.zt, st.i, lo, swept.kdefl, c);
                    swept.h = hs;
                    swept.zt = zs;
                    swept.lo = lo;
                    swept.sweeps = a.plus(st.sweeps, 1);
                    b.create<scf::YieldOp>(l, swept.values());
                  });
              b.create<scf::YieldOp>(l, next.getResults());
            });
        return Carried(step.getResults());
      });
  QrState st = QrState::from(out);
  return {st.h, st.re, st.im, st.zt, st.failed};
}

} // namespace kiln::aten
