//===- SymmetricEigen.cpp - eigvalsh and eigh by tridiagonal QL -----------===//
//
// This file implements the lowering of aten.eigvalsh and aten.eigh to
// scf.for loops over each matrix of the batch, as LAPACK's dsyev computes
// them (EISPACK's tred2 and tql2):
//
// - The matrix is made symmetric from its lower triangle and divided by its
//   largest |entry| (no square overflows; the values are scaled back).
// - dsytd2 reduces it to a tridiagonal T = Q^T A Q: reflector H_k (k < n -
//   2) maps row k's entries past the diagonal, (alpha, x), to (beta, 0,
//   ...) as dlarfg does (MatrixLoops' householder: beta = -sign(alpha)
//   dlapy2(alpha, dnrm2(x)); none when x is 0), and the trailing matrix
//   becomes H A22 H: p = tau A22 v, w = p - (tau / 2) (p . v) v, A22 -= v
//   w^T + w v^T, row by row. v (its 1 at k + 1) stays in row k.
// - eigh forms Q = H_0 ... H_{n-3} backwards from the identity (dorgtr),
//   each reflector applied row by row, and keeps its transpose: the QL
//   rotations below act on Q's columns, which are then rows.
// - tql2: for each l, QL steps with Wilkinson's shift until e[l] is
//   negligible (the first m >= l with |e[m]| <= eps (|d[m]| + |d[m+1]|)
//   is l), at most kMaxQlSteps of them; a step chases the bulge from m
//   down to l with plane rotations, which eigh also applies to its
//   vectors.
// - The eigenvalues (T's diagonal) are sorted ascending by a selection sort
//   that moves each vector with its value, and V is transposed back.
//
// Vectors live in rows, so the rotations and reflectors walk contiguous
// memory. The work is about n^3 multiply-adds for the values (the rank-2
// update writes the whole trailing square), (8/3) n^3 more for the
// vectors, against Jacobi's several sweeps of 4 n^3 each. An eigenvalue
// that takes more than kMaxQlSteps steps makes the matrix's values NaN
// (LAPACK's info > 0, where eager raises). A vector's sign,
// and the basis of a repeated eigenvalue's space, are the algorithm's
// choice (LAPACK's dsyevd differs); PyTorch leaves both unspecified.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "MatrixLoops.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// The most QL steps for one eigenvalue (EISPACK's tql2 gives up after 30;
/// two or three is the rule).
constexpr int64_t kMaxQlSteps = 40;

/// Matrix m of `a` (N, n, n) made symmetric from its lower triangle.
Value symmetricFromLower(OpBuilder &b, Location l, Value a, Value m, int64_t n) {
  return forEachPair(b, l, n, {a},
                     [&](OpBuilder &b, Location l, Value p, Value q, ValueRange u) -> Carried {
                       return {Scalars::put(b, l, Scalars::at(b, l, u[0], {m, q, p}), u[0],
                                            {m, p, q})};
                     })[0];
}

/// dlarfg for (alpha, row k of `a` from column k + 2), alpha = a[m, k, k + 1].
Householder reflectorFor(OpBuilder &b, Location l, Value a, Value m, Value k, int64_t n) {
  Scalars s(b, l);
  Limits c(b, l, cast<RankedTensorType>(a.getType()).getElementType());
  Value next = plusOne(b, l, k), from = plusOne(b, l, next);
  Value tailNorm = scaledNorm(b, l, from, s.index(n), c, [&](OpBuilder &b, Location l, Value j) {
    return Scalars::at(b, l, a, {m, k, j});
  });
  return householder(b, l, Scalars::at(b, l, a, {m, k, next}), tailNorm, c);
}

/// dsytd2 (lower) on matrix m of `a` (N, n, n, symmetric, both triangles
/// kept): the tridiagonal's diagonal into row m of `d`, its off-diagonal
/// into row m of `e` (e[n - 1] = 0), each reflector's tau into `taus` and
/// its v (from column k + 1, its 1 there) into row k of `a`. `p` is a
/// scratch row. Returns a, d, e, taus and p.
Carried tridiagonalise(OpBuilder &b, Location loc, Value a, Value d, Value e, Value taus, Value p,
                       Value m, int64_t n) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(a.getType()).getElementType();
  Value zero = s.number(element, 0.0), half = s.number(element, 0.5);
  Value end = s.index(n);
  Carried reduced = s.loop(
      s.index(0), s.index(std::max<int64_t>(n - 2, 0)), {a, e, taus, p},
      [&](OpBuilder &b, Location l, Value k, ValueRange c) -> Carried {
        Scalars s(b, l);
        Value a = c[0], p = c[3];
        Value next = plusOne(b, l, k), from = plusOne(b, l, next);
        Householder h = reflectorFor(b, l, a, m, k, n);
        // v = (1, x * scale) in row k from column k + 1.
        a = s.loop(from, end, {a}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
          Value x = b.create<arith::MulFOp>(l, Scalars::at(b, l, u[0], {m, k, j}), h.scale);
          return {Scalars::put(b, l, x, u[0], {m, k, j})};
        })[0];
        a = Scalars::put(b, l, s.number(element, 1.0), a, {m, k, next});
        // p = tau A22 v, over rows i > k.
        auto rowTimesV = [&](OpBuilder &b, Location l, Value i, Value t) {
          return contiguousDot(b, l, t, {m, i}, t, {m, k}, next, end, zero);
        };
        p = s.loop(next, end, {p}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
          Value x = b.create<arith::MulFOp>(l, h.tau, rowTimesV(b, l, i, a));
          return {Scalars::put(b, l, x, u[0], {i})};
        })[0];
        // w = p - (tau / 2) (p . v) v.
        Value pv = contiguousDot(b, l, p, {}, a, {m, k}, next, end, zero);
        Value factor = b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, half, h.tau), pv);
        p = s.loop(next, end, {p}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
          Value x = b.create<arith::SubFOp>(
              l, Scalars::at(b, l, u[0], {i}),
              b.create<arith::MulFOp>(l, factor, Scalars::at(b, l, a, {m, k, i})));
          return {Scalars::put(b, l, x, u[0], {i})};
        })[0];
        // A22 -= v w^T + w v^T, row by row (row k, v, is not written: it
        // is read through the loop's value).
        a = s.loop(next, end, {a}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
          Value vi = Scalars::at(b, l, u[0], {m, k, i});
          Value wi = Scalars::at(b, l, p, {i});
          return Scalars(b, l).loop(
              next, end, u, [&](OpBuilder &b, Location l, Value j, ValueRange t) -> Carried {
                Value update = b.create<arith::AddFOp>(
                    l, b.create<arith::MulFOp>(l, vi, Scalars::at(b, l, p, {j})),
                    b.create<arith::MulFOp>(l, wi, Scalars::at(b, l, t[0], {m, k, j})));
                Value x = b.create<arith::SubFOp>(l, Scalars::at(b, l, t[0], {m, i, j}), update);
                return {Scalars::put(b, l, x, t[0], {m, i, j})};
              });
        })[0];
        return {a, Scalars::put(b, l, h.beta, c[1], {m, k}), Scalars::put(b, l, h.tau, c[2], {m, k}),
                p};
      });
  a = reduced[0];
  e = reduced[1];
  // The last off-diagonal entry, which no reflector touches, and e[n - 1].
  if (n >= 2)
    e = Scalars::put(b, loc, Scalars::at(b, loc, a, {m, s.index(n - 2), s.index(n - 1)}), e,
                     {m, s.index(n - 2)});
  e = Scalars::put(b, loc, zero, e, {m, s.index(n - 1)});
  d = s.loop(s.index(0), end, {d}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
    return {Scalars::put(b, l, Scalars::at(b, l, a, {m, i, i}), u[0], {m, i})};
  })[0];
  return {a, d, e, reduced[2], reduced[3]};
}

/// dorgtr: Q = H_0 ... H_{n-3} from the reflectors in `a` and `taus`,
/// formed backwards in matrix m of `q` (the identity on entry) with `w` a
/// scratch row; returns q and w.
Carried formQ(OpBuilder &b, Location loc, Value a, Value taus, Value q, Value w, Value m,
              int64_t n) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(std::max<int64_t>(n - 2, 0)), {q, w},
                [&](OpBuilder &b, Location l, Value step, ValueRange c) -> Carried {
                  Scalars s(b, l);
                  Value k = b.create<arith::SubIOp>(l, s.index(n - 3), step);
                  Value head = plusOne(b, l, k);
                  return applyReflector(b, l, c[0], c[1], m, head, n, head, n,
                                        Scalars::at(b, l, taus, {m, k}),
                                        [&](OpBuilder &b, Location l, Value i, Value) {
                                          return Scalars::at(b, l, a, {m, k, i});
                                        });
                });
}

/// Matrix m of `q` transposed into matrix m of `t`.
Value transposeInto(OpBuilder &b, Location loc, Value q, Value t, Value m, int64_t n) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(n), {t}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
    return Scalars(b, l).loop(
        Scalars(b, l).index(0), Scalars(b, l).index(n), u,
        [&](OpBuilder &b, Location l, Value j, ValueRange x) -> Carried {
          return {Scalars::put(b, l, Scalars::at(b, l, q, {m, i, j}), x[0], {m, j, i})};
        });
  })[0];
}

/// The state a QL step carries: the diagonal, the off-diagonal and (when
/// computed) the vectors, one per row.
struct Tridiagonal {
  Value d, e, vectors;

  Carried values() const {
    Carried v{d, e};
    if (vectors)
      v.push_back(vectors);
    return v;
  }
  static Tridiagonal from(ValueRange v, bool withVectors) {
    return {v[0], v[1], withVectors ? v[2] : Value()};
  }
};

/// The first m in [l, n - 1) whose off-diagonal |e[m]| is at most eps
/// (|d[m]| + |d[m + 1]|), or n - 1 when none is.
Value negligibleFrom(OpBuilder &b, Location l, const Tridiagonal &t, Value m, Value first, int64_t n,
                     Value eps) {
  Scalars s(b, l);
  Value none = b.create<arith::ConstantOp>(l, b.getBoolAttr(false));
  Carried found = s.loop(
      first, s.index(n - 1), {s.index(n - 1), none},
      [&](OpBuilder &b, Location l, Value j, ValueRange c) -> Carried {
        Value dj = b.create<math::AbsFOp>(l, Scalars::at(b, l, t.d, {m, j}));
        Value dNext = b.create<math::AbsFOp>(l, Scalars::at(b, l, t.d, {m, plusOne(b, l, j)}));
        Value ej = b.create<math::AbsFOp>(l, Scalars::at(b, l, t.e, {m, j}));
        Value small = b.create<arith::CmpFOp>(
            l, arith::CmpFPredicate::OLE, ej,
            b.create<arith::MulFOp>(l, eps, b.create<arith::AddFOp>(l, dj, dNext)));
        Value take = b.create<arith::AndIOp>(
            l, small,
            b.create<arith::XOrIOp>(l, c[1], b.create<arith::ConstantOp>(l, b.getBoolAttr(true))));
        return {b.create<arith::SelectOp>(l, take, j, c[0]), b.create<arith::OrIOp>(l, c[1], small)};
      });
  return found[0];
}

/// One implicit QL step with Wilkinson's shift on rows l..mEnd of the
/// tridiagonal of matrix m (tql2's inner loop): g = d[m] - d[l] + e[l] /
/// (g0 + sign(r, g0)) with g0 = (d[l + 1] - d[l]) / (2 e[l]), then plane
/// rotations from mEnd - 1 down to l; a rotation of radius 0 (underflow)
/// deflates there and ends the step, as tql2's does.
Tridiagonal qlStep(OpBuilder &b, Location loc, Tridiagonal t, Value m, Value l0, Value mEnd) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(t.d.getType()).getElementType();
  Value zero = s.number(element, 0.0), one = s.number(element, 1.0), two = s.number(element, 2.0);
  auto at = [&](OpBuilder &b, Location l, Value v, Value i) { return Scalars::at(b, l, v, {m, i}); };
  // Radii as dlapy2 computes them (hypotenuse), so that no square
  // underflows: a block of entries 1e-20 of the largest (f32) would
  // otherwise give rotations of a subnormal or zero radius.
  Limits limits(b, loc, element);
  auto radius = [&](OpBuilder &b, Location l, Value x, Value y) {
    return hypotenuse(b, l, x, y, limits);
  };
  Value dl = at(b, loc, t.d, l0), el = at(b, loc, t.e, l0);
  Value g0 = b.create<arith::DivFOp>(
      loc, b.create<arith::SubFOp>(loc, at(b, loc, t.d, plusOne(b, loc, l0)), dl),
      b.create<arith::MulFOp>(loc, two, el));
  Value r0 = radius(b, loc, g0, one);
  Value shifted = b.create<arith::AddFOp>(
      loc, b.create<arith::SubFOp>(loc, at(b, loc, t.d, mEnd), dl),
      b.create<arith::DivFOp>(loc, el, b.create<arith::AddFOp>(loc, g0, b.create<math::CopySignOp>(loc, r0, g0))));
  bool withVectors = static_cast<bool>(t.vectors);
  Value notYet = b.create<arith::ConstantOp>(loc, b.getBoolAttr(false));
  // Carried: the tridiagonal, then s, c, p, g and whether it deflated.
  Carried init = t.values();
  init.append({one, one, zero, shifted, notYet});
  Value count = b.create<arith::SubIOp>(loc, mEnd, l0);
  Carried out = s.loop(s.index(0), count, init, [&](OpBuilder &b, Location l, Value step, ValueRange c) -> Carried {
    size_t base = c.size() - 5;
    auto skipped = b.create<scf::IfOp>(
        l, c.back(), [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, c); },
        [&](OpBuilder &b, Location l) {
          Tridiagonal u = Tridiagonal::from(c.take_front(base), withVectors);
          Value sn = c[base], cs = c[base + 1], p = c[base + 2], g = c[base + 3];
          Value i = b.create<arith::SubIOp>(l, b.create<arith::SubIOp>(l, mEnd, step),
                                            Scalars(b, l).index(1));
          Value next = plusOne(b, l, i);
          Value ei = at(b, l, u.e, i);
          Value f = b.create<arith::MulFOp>(l, sn, ei), bb = b.create<arith::MulFOp>(l, cs, ei);
          Value r = radius(b, l, f, g);
          u.e = Scalars::put(b, l, r, u.e, {m, next});
          Value underflow = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, r, zero);
          auto rotated = b.create<scf::IfOp>(
              l, underflow,
              [&](OpBuilder &b, Location l) {
                // Deflate: d[i + 1] -= p, e[m] = 0, and end the step.
                Tridiagonal w = u;
                w.d = Scalars::put(b, l, b.create<arith::SubFOp>(l, at(b, l, w.d, next), p), w.d, {m, next});
                w.e = Scalars::put(b, l, zero, w.e, {m, mEnd});
                Carried y = w.values();
                y.append({sn, cs, p, g, b.create<arith::ConstantOp>(l, b.getBoolAttr(true))});
                b.create<scf::YieldOp>(l, y);
              },
              [&](OpBuilder &b, Location l) {
                Tridiagonal w = u;
                Value s2 = b.create<arith::DivFOp>(l, f, r), c2 = b.create<arith::DivFOp>(l, g, r);
                Value g2 = b.create<arith::SubFOp>(l, at(b, l, w.d, next), p);
                Value r2 = b.create<arith::AddFOp>(
                    l, b.create<arith::MulFOp>(l, b.create<arith::SubFOp>(l, at(b, l, w.d, i), g2), s2),
                    b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, two, c2), bb));
                Value p2 = b.create<arith::MulFOp>(l, s2, r2);
                w.d = Scalars::put(b, l, b.create<arith::AddFOp>(l, g2, p2), w.d, {m, next});
                Value g3 = b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, c2, r2), bb);
                // Vectors i and i + 1: (x, y) <- (c x - s y, s x + c y).
                if (w.vectors)
                  w.vectors = rotateRows(b, l, w.vectors, m, i, next, c2, s2);
                Carried y = w.values();
                y.append({s2, c2, p2, g3, b.create<arith::ConstantOp>(l, b.getBoolAttr(false))});
                b.create<scf::YieldOp>(l, y);
              });
          b.create<scf::YieldOp>(l, rotated.getResults());
        });
    return Carried(skipped.getResults());
  });
  size_t base = out.size() - 5;
  Tridiagonal u = Tridiagonal::from(ValueRange(out).take_front(base), withVectors);
  Value p = out[base + 2], g = out[base + 3], deflated = out[base + 4];
  // Unless it deflated: d[l] -= p, e[l] = g, e[m] = 0.
  auto finished = b.create<scf::IfOp>(
      loc, deflated, [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, u.values()); },
      [&](OpBuilder &b, Location l) {
        Tridiagonal w = u;
        w.d = Scalars::put(b, l, b.create<arith::SubFOp>(l, at(b, l, w.d, l0), p), w.d, {m, l0});
        w.e = Scalars::put(b, l, g, w.e, {m, l0});
        w.e = Scalars::put(b, l, zero, w.e, {m, mEnd});
        b.create<scf::YieldOp>(l, w.values());
      });
  return Tridiagonal::from(finished.getResults(), withVectors);
}

/// tql2 on the tridiagonal of matrix m: its eigenvalues left in d (not
/// sorted), the vectors rotated with them; and whether some eigenvalue took
/// more than kMaxQlSteps steps (LAPACK's info > 0, where eager raises).
std::pair<Tridiagonal, Value> diagonalise(OpBuilder &b, Location loc, Tridiagonal t, Value m,
                                          int64_t n) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(t.d.getType()).getElementType();
  Value eps = epsilonOf(b, loc, element);
  bool withVectors = static_cast<bool>(t.vectors);
  Carried init = t.values();
  init.push_back(b.create<arith::ConstantOp>(loc, b.getBoolAttr(false)));
  Carried out = s.loop(s.index(0), s.index(n), init, [&](OpBuilder &b, Location l, Value l0, ValueRange c) -> Carried {
    Scalars s(b, l);
    Carried state(c.drop_back());
    state.push_back(b.create<arith::ConstantOp>(l, b.getBoolAttr(false)));
    Carried steps = s.loop(s.index(0), s.index(kMaxQlSteps), state, [&](OpBuilder &b, Location l, Value, ValueRange u) -> Carried {
      auto branch = b.create<scf::IfOp>(
          l, u.back(), [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, u); },
          [&](OpBuilder &b, Location l) {
            Tridiagonal cur = Tridiagonal::from(u.drop_back(), withVectors);
            Value mEnd = negligibleFrom(b, l, cur, m, l0, n, eps);
            Value done = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, mEnd, l0);
            auto step = b.create<scf::IfOp>(
                l, done,
                [&](OpBuilder &b, Location l) {
                  Carried y = cur.values();
                  y.push_back(done);
                  b.create<scf::YieldOp>(l, y);
                },
                [&](OpBuilder &b, Location l) {
                  Carried y = qlStep(b, l, cur, m, l0, mEnd).values();
                  y.push_back(done);
                  b.create<scf::YieldOp>(l, y);
                });
            b.create<scf::YieldOp>(l, step.getResults());
          });
      return Carried(branch.getResults());
    });
    steps.pop_back();
    // Converged when e[l] is negligible now (the last step may have made it).
    Tridiagonal after = Tridiagonal::from(steps, withVectors);
    Value unconverged = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne,
                                                negligibleFrom(b, l, after, m, l0, n, eps), l0);
    steps.push_back(b.create<arith::OrIOp>(l, c.back(), unconverged));
    return steps;
  });
  Value failed = out.pop_back_val();
  return {Tridiagonal::from(out, withVectors), failed};
}

template <typename Op>
struct SymmetricEigenLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  static constexpr bool kVectors = std::is_same_v<Op, EighOp>;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    auto rowsType = RankedTensorType::get({batch, n}, element);
    // a, d, e, taus, a scratch row; with vectors, Q and its transpose.
    Carried init{s.fresh(type, adaptor.getSelf()), s.fresh(rowsType), s.fresh(rowsType),
                 s.fresh(rowsType), s.fresh(RankedTensorType::get({n}, element))};
    if (kVectors) {
      init.push_back(s.fresh(type));
      init.push_back(s.fresh(type));
    }
    Carried out = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Scalars s(b, l);
          auto [unit, divisor] = scaledToUnitMax(b, l, symmetricFromLower(b, l, c[0], m, n), m, n, n);
          Carried tri = tridiagonalise(b, l, unit, c[1], c[2], c[3], c[4], m, n);
          Tridiagonal t{tri[1], tri[2], Value()};
          Value scratch = tri[4], q;
          if (kVectors) {
            Carried formed =
                formQ(b, l, tri[0], tri[3], identityColumns(b, l, c[5], m), scratch, m, n);
            q = formed[0];
            scratch = formed[1];
            t.vectors = transposeInto(b, l, q, c[6], m, n);
          }
          auto [diagonal, failed] = diagonalise(b, l, t, m, n);
          t = diagonal;
          // Scaled back; all NaN when QL did not converge (eager raises).
          Value nan = s.number(element, std::numeric_limits<double>::quiet_NaN());
          Value d = s.loop(s.index(0), s.index(n), {t.d},
                           [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                             Value x = b.create<arith::MulFOp>(l, Scalars::at(b, l, u[0], {m, i}), divisor);
                             x = b.create<arith::SelectOp>(l, failed, nan, x);
                             return {Scalars::put(b, l, x, u[0], {m, i})};
                           })[0];
          Carried vectors;
          if (kVectors)
            vectors.push_back(t.vectors);
          Carried sorted = sortWithVectors(b, l, d, vectors, m, n, /*ascending=*/true);
          Carried next{tri[0], sorted[0], t.e, tri[3], scratch};
          if (kVectors)
            next.append({q, sorted[1]});
          return next;
        });
    if (kVectors)
      rewriter.replaceOp(op, {out[1], transposedBatch(b, loc, out[6])});
    else
      rewriter.replaceOp(op, out[1]);
    return success();
  }
};

} // namespace

void kiln::aten::populateSymmetricEigenPatterns(RewritePatternSet &patterns) {
  patterns.add<SymmetricEigenLowering<EigvalshOp>, SymmetricEigenLowering<EighOp>>(
      patterns.getContext());
}
