//===- ComplexEigen.cpp - eig and eigvals of complex matrices as zgeev ----===//
//
// This file implements the lowering of aten.eigvals and aten.eig on
// complex matrices, (N, n, n, 2) pairs of their parts, to scf loops over
// each matrix of the batch, as LAPACK's zgeev computes them:
//
// - zgebal balances the matrix with dgebal's steps (GeneralEigen.cpp): an
//   entry is zero when both its parts are, and norms and magnitudes take
//   both parts.
// - zgehd2 reduces the active block to upper Hessenberg form with complex
//   reflectors (zlarfg's, whose beta is real, so the subdiagonal comes out
//   real; the last one, of a single entry, only makes it real), applied
//   from the right, then as H^H from the left; for vectors they are also
//   accumulated into Z^T (zunghr's Q, one vector per row).
// - zlahqr (ComplexSchur.cpp) runs single-shift QR sweeps: values only, or
//   the Schur form T = Z^H A Z with Z updated. The values are the
//   diagonal's entries, each where it deflated, so up to order 75 (where
//   LAPACK's zhseqr runs zlahqr too) they come in eager's order.
// - For vectors, ztrevc3 solves (T - lambda I) x = 0 by back substitution
//   from each value's position up (x's entry there 1, a pivot under smin =
//   max(ulp |lambda|_1, smlnum) replaced by smin, the vector scaled down
//   where a step could overflow, as the real dtrevc3's loops do), and
//   back-transforms x by Z in place of Z^T's own row (which is why it
//   runs from the last value up), scaled to a largest |re| + |im| of 1;
//   zgebak undoes the balancing; zgeev scales each vector to norm 1 and
//   turns it so that its entry of largest modulus is real.
//
// A matrix with a NaN or an infinity (eager raises) or a block that does
// not deflate within the limit (zlahqr's info > 0) has NaN values and
// vectors; LAPACK's zhseqr would retry such a block with zlaqr0's
// multishift sweeps, so eager may have values where Kiln has NaN. Left
// out, as in the real lowering: zlarfg's rescaling of a reflector whose
// beta is under safmin, zgeev's scaling of a matrix whose largest entry
// is outside [sqrt(safmin) / ulp, its inverse], and zgebal's measure of a
// row's largest entry (the modulus of the one of largest |re| + |im|;
// here the largest modulus), which only guards its scaling against
// overflow: matrices that extreme round otherwise.
//
//===----------------------------------------------------------------------===//
#include "ComplexEigen.h"
#include "ComplexFactorisations.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// zgehd2 on the active block [first, last] of matrix `mat`: reflector i
/// maps column i's entries from row i + 1 down to (beta, 0, ...) and is
/// applied from the right to rows [0, last] and as H^H from the left to
/// columns [i + 1, n) (v's tail is kept in the scratch pair row `v`, its 1
/// at i + 1; `w` is a second scratch pair row); with `zt` (the identity),
/// Z^T becomes Q^T. Returns h, v, w and zt.
Carried complexHessenberg(OpBuilder &b, Location loc, const Matrix &mat, Value h, Value v,
                          Value w, Value zt, Value first, Value last, const Limits &c) {
  Scalars s(b, loc);
  Value end = plusOne(b, loc, last);
  Carried init{h, v, w};
  if (zt)
    init.push_back(zt);
  return s.loop(first, last, init, [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
    Scalars s(b, l);
    Arithmetic a(b, l);
    Value h = t[0], v = t[1];
    Value head = plusOne(b, l, i), below = plusOne(b, l, head);
    Complex alpha = entryOf(b, l, mat, h, head, i);
    Value tailNorm = mat.norm(b, l, h, below, end, c, [&](Value x) { return std::pair(x, i); });
    ComplexHouseholder g = complexHouseholder(b, l, alpha, tailNorm, c);
    v = putPair(b, l, Complex{c.one, c.zero}, v, {head});
    Carried moved = s.loop(below, end, {v, h}, [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
      Arithmetic a(b, l);
      Complex x = times(a, entryOf(b, l, mat, u[1], r, i), g.scale);
      return {putPair(b, l, x, u[0], {r}), withEntry(b, l, mat, Complex{c.zero, c.zero}, u[1], r, i)};
    });
    v = moved[0];
    h = withEntry(b, l, mat, g.head, moved[1], head, i);
    // From the right: row r -= tau (row r . v) v^H over columns [i + 1, last].
    h = s.loop(s.index(0), end, {h}, [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
      Scalars s(b, l);
      Carried dot = s.loop(head, end, {c.zero, c.zero}, [&](OpBuilder &b, Location l, Value x, ValueRange d) -> Carried {
        Arithmetic a(b, l);
        Complex sum = plus(a, Complex{d[0], d[1]},
                           times(a, entryOf(b, l, mat, u[0], r, x), pairAt(b, l, v, {x})));
        return {sum.re, sum.im};
      });
      Arithmetic a(b, l);
      Complex f = times(a, g.tau, Complex{dot[0], dot[1]});
      return s.loop(head, end, {u[0]}, [&](OpBuilder &b, Location l, Value x, ValueRange z) -> Carried {
        Arithmetic a(b, l);
        Complex y = minus(a, entryOf(b, l, mat, z[0], r, x),
                          times(a, f, conjugate(a, pairAt(b, l, v, {x}))));
        return {withEntry(b, l, mat, y, z[0], r, x)};
      });
    })[0];
    // From the left, over rows [i + 1, last] (v is 0 below the block).
    auto vAt = [&](OpBuilder &b, Location l, Value r, Value) {
      Arithmetic a(b, l);
      Value inside = a.icmp(arith::CmpIPredicate::sle, r, last);
      Complex x = pairAt(b, l, v, {r});
      return Complex{a.select(inside, x.re, c.zero), a.select(inside, x.im, c.zero)};
    };
    Carried left = applyComplexReflector(b, l, h, t[2], mat.m, head, mat.n, head, mat.n,
                                         conjugate(a, g.tau), vAt);
    if (t.size() < 4)
      return {left[0], v, left[1]};
    // Z = Z H: Z^T = H^T Z^T, H^T = I - tau conj(v) conj(v)^H.
    Carried z = applyComplexReflector(
        b, l, t[3], left[1], mat.m, head, mat.n, s.index(0), mat.n, g.tau,
        [&](OpBuilder &b, Location l, Value r, Value current) {
          Arithmetic a(b, l);
          return conjugate(a, vAt(b, l, r, current));
        });
    return {left[0], v, z[1], z[0]};
  });
}

/// Entries [0, end) of the pair row `x` times the real `factor` (masked,
/// not branched on: an scf.if here made bufferization's buffer-type
/// queries exponential in the loops around it).
Value scalePairRow(OpBuilder &b, Location loc, Value x, Value end, Value factor) {
  return Scalars(b, loc).loop(Scalars(b, loc).index(0), end, {x},
                              [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
                                Arithmetic a(b, l);
                                return {putPair(b, l, scaled(a, pairAt(b, l, u[0], {k}), factor), u[0], {k})};
                              })[0];
}

/// ztrevc3's eigenvector of T for the value T[ki, ki], back-transformed
/// into row ki of `zt` and scaled to a largest |re| + |im| of 1. Returns
/// zt and x.
Carried complexVector(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value zt, Value x,
                      Value ki, Value smlnum, const Limits &c) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Complex lam = entryOf(b, loc, mat, t, ki, ki);
  Value smin = a.max(a.mul(c.ulp, absSum(a, lam)), smlnum);
  Value bignum = a.div(a.sub(c.one, c.ulp), smlnum);
  x = s.loop(s.index(0), ki, {x}, [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Complex above = entryOf(b, l, mat, t, k, ki);
    return {putPair(b, l, Complex{a.neg(above.re), a.neg(above.im)}, u[0], {k})};
  })[0];
  x = putPair(b, loc, Complex{c.one, c.zero}, x, {ki});
  Value end = plusOne(b, loc, ki);
  x = s.loop(s.index(0), ki, {x}, [&](OpBuilder &b, Location l, Value step, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value j = a.minus(a.minus(ki, a.index(1)), step);
    Complex d = minus(a, entryOf(b, l, mat, t, j, j), lam);
    Value tiny = a.lt(absSum(a, d), smin);
    d = {a.select(tiny, smin, d.re), a.select(tiny, c.zero, d.im)};
    Complex bj = pairAt(b, l, u[0], {j});
    Value factor = overflowScale(a, absSum(a, bj), absSum(a, d), columnAbove(b, l, mat, t, j, c),
                                 bignum, c);
    Value y = scalePairRow(b, l, u[0], end, factor);
    Complex xj = quotient(a, scaled(a, bj, factor), d);
    y = putPair(b, l, xj, y, {j});
    return {Scalars(b, l).loop(Scalars(b, l).index(0), j, {y},
                               [&](OpBuilder &b, Location l, Value k, ValueRange w) -> Carried {
                                 Arithmetic a(b, l);
                                 Complex xk = minus(a, pairAt(b, l, w[0], {k}),
                                                    times(a, xj, entryOf(b, l, mat, t, k, j)));
                                 return {putPair(b, l, xk, w[0], {k})};
                               })[0]};
  })[0];
  // Row ki of Z^T becomes x[ki] zt[ki] + the sum over r < ki of x[r] zt[r].
  Complex head = pairAt(b, loc, x, {ki});
  zt = s.loop(s.index(0), s.index(mat.n), {zt}, [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    return {withEntry(b, l, mat, times(a, head, entryOf(b, l, mat, u[0], ki, col)), u[0], ki, col)};
  })[0];
  zt = s.loop(s.index(0), ki, {zt}, [&](OpBuilder &b, Location l, Value r, ValueRange u) -> Carried {
    Complex xr = pairAt(b, l, x, {r});
    return Scalars(b, l).loop(Scalars(b, l).index(0), Scalars(b, l).index(mat.n), u,
                              [&](OpBuilder &b, Location l, Value col, ValueRange w) -> Carried {
                                Arithmetic a(b, l);
                                Complex y = plus(a, entryOf(b, l, mat, w[0], ki, col),
                                                 times(a, xr, entryOf(b, l, mat, w[0], r, col)));
                                return {withEntry(b, l, mat, y, w[0], ki, col)};
                              });
  })[0];
  Value largest = s.loop(s.index(0), s.index(mat.n), {c.zero},
                         [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
                           Arithmetic a(b, l);
                           return {a.max(u[0], absSum(a, entryOf(b, l, mat, zt, ki, col)))};
                         })[0];
  Value remax = a.div(c.one, largest);
  zt = s.loop(s.index(0), s.index(mat.n), {zt}, [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
    return {mat.scale(b, l, u[0], ki, col, remax)};
  })[0];
  return {zt, x};
}

/// ztrevc3 ('R', 'B'): every right eigenvector of the triangular T, from
/// the last, in place of Z^T's rows (rows above the one being formed are
/// still Z's). Returns V^T (one vector per row) and x.
Carried rightVectors(OpBuilder &b, Location loc, const Matrix &mat, Value t, Value zt, Value x,
                     const Limits &c) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Value smlnum = a.mul(c.safmin, a.div(s.number(c.zero.getType(), double(mat.n)), c.ulp));
  return s.loop(s.index(0), s.index(mat.n), {zt, x},
                [&](OpBuilder &b, Location l, Value step, ValueRange u) -> Carried {
                  Arithmetic a(b, l);
                  Value ki = a.minus(a.index(mat.n - 1), step);
                  return complexVector(b, l, mat, t, u[0], u[1], ki, smlnum, c);
                });
}

/// zgeev's normalisation of V^T's rows: each to norm 1, then times
/// conj(v_k) / |v_k| for its first entry k of largest modulus, which is
/// then real.
Value normaliseVectors(OpBuilder &b, Location loc, const Matrix &mat, Value vt, const Limits &c) {
  Scalars s(b, loc);
  Value n = s.index(mat.n);
  return s.loop(s.index(0), n, {vt}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
    Scalars s(b, l);
    Arithmetic a(b, l);
    Value norm = mat.norm(b, l, u[0], s.index(0), n, c, [&](Value x) { return std::pair(j, x); });
    Value inverse = a.div(c.one, norm);
    Value t = s.loop(s.index(0), n, {u[0]}, [&](OpBuilder &b, Location l, Value x, ValueRange w) -> Carried {
      return {mat.scale(b, l, w[0], j, x, inverse)};
    })[0];
    auto square = [&](OpBuilder &b, Location l, Value x) {
      Arithmetic a(b, l);
      Complex v = entryOf(b, l, mat, t, j, x);
      return a.add(a.mul(v.re, v.re), a.mul(v.im, v.im));
    };
    auto [k, largest] = bestIndex(b, l, a.index(1), n, a.index(0), square(b, l, a.index(0)),
                                  arith::CmpFPredicate::OGT, square);
    Complex vk = entryOf(b, l, mat, t, j, k);
    Value r = a.sqrt(largest);
    Complex turn{a.div(vk.re, r), a.div(a.neg(vk.im), r)};
    t = s.loop(s.index(0), n, {t}, [&](OpBuilder &b, Location l, Value x, ValueRange w) -> Carried {
      Arithmetic a(b, l);
      return {withEntry(b, l, mat, times(a, turn, entryOf(b, l, mat, w[0], j, x)), w[0], j, x)};
    })[0];
    Complex turned = entryOf(b, l, mat, t, j, k);
    return {withEntry(b, l, mat, Complex{turned.re, c.zero}, t, j, k)};
  })[0];
}

template <typename Op>
struct ComplexEigenLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  static constexpr bool kVectors = std::is_same_v<Op, EigOp>;

  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    if (type.getRank() != 4)
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    auto rowsType = RankedTensorType::get({batch, n}, element);
    auto partsType = RankedTensorType::get({batch, n, n}, element);
    auto matrixType = RankedTensorType::get({1, n, n, 2}, element);
    auto scalesType = RankedTensorType::get({1, n}, element);
    auto pairRowType = RankedTensorType::get({n, 2}, element);
    Value self = adaptor.getSelf();
    // The loop carries the results alone (re, im; with vectors the
    // columns' parts): each matrix works in tensors of its own, allocated
    // in the loop (a copy of it, scales, scratch rows, Z^T). Carried by
    // it, they made bufferization's buffer-type queries exponential.
    Carried init{s.fresh(rowsType), s.fresh(rowsType)};
    if (kVectors)
      init.append({s.fresh(partsType), s.fresh(partsType)});
    Carried out = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange t) -> Carried {
          Scalars s(b, l);
          Limits c(b, l, element);
          Matrix own{s.index(0), n, /*pairs=*/true};
          Value copy = forEachEntry(b, l, own, {s.fresh(matrixType)},
                                    [&](OpBuilder &b, Location l, Value i, Value j, ValueRange u) -> Carried {
            return {withEntry(b, l, own, pairAt(b, l, self, {m, i, j}), u[0], i, j)};
          })[0];
          auto [finite, h] = finiteOrZero(b, l, own, copy, c);
          Carried isolated = isolateEigenvalues(b, l, own, h, s.fresh(scalesType), c);
          Value first = isolated[2], last = isolated[3];
          Carried balanced = balance(b, l, own, isolated[0], isolated[1], first, last, c);
          Value zt = kVectors ? complexIdentityColumns(b, l, s.fresh(matrixType), own.m) : Value();
          Carried reduced = complexHessenberg(b, l, own, balanced[0], s.fresh(pairRowType),
                                              s.fresh(pairRowType), zt, first, last, c);
          ComplexQrResult qr = complexQr(b, l, own, reduced[0], kVectors ? reduced[3] : Value(),
                                         first, last, c);
          Arithmetic a(b, l);
          Value invalid = a.either(a.negate(finite), qr.failed);
          Value nan = s.number(element, std::numeric_limits<double>::quiet_NaN());
          Carried next = s.loop(s.index(0), s.index(n), {t[0], t[1]},
                                [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
            Arithmetic a(b, l);
            Complex d = entryOf(b, l, own, qr.h, i, i);
            return {Scalars::put(b, l, a.select(invalid, nan, d.re), u[0], {m, i}),
                    Scalars::put(b, l, a.select(invalid, nan, d.im), u[1], {m, i})};
          });
          if (kVectors) {
            Value vt = rightVectors(b, l, own, qr.h, qr.zt, reduced[1], c)[0];
            vt = undoBalancing(b, l, own, vt, balanced[1], first, last);
            vt = normaliseVectors(b, l, own, vt, c);
            Carried columns = forEachEntry(b, l, own, {t[2], t[3]},
                                           [&](OpBuilder &b, Location l, Value j, Value r, ValueRange u) -> Carried {
              Arithmetic a(b, l);
              Complex v = entryOf(b, l, own, vt, j, r);
              return {Scalars::put(b, l, a.select(invalid, nan, v.re), u[0], {m, r, j}),
                      Scalars::put(b, l, a.select(invalid, nan, v.im), u[1], {m, r, j})};
            });
            next.append({columns[0], columns[1]});
          }
          return next;
        });
    if (kVectors)
      rewriter.replaceOp(op, {out[0], out[1], out[2], out[3]});
    else
      rewriter.replaceOp(op, {out[0], out[1]});
    return success();
  }
};

} // namespace

void kiln::aten::populateComplexEigenPatterns(RewritePatternSet &patterns) {
  patterns.add<ComplexEigenLowering<EigvalsOp>, ComplexEigenLowering<EigOp>>(patterns.getContext());
}
