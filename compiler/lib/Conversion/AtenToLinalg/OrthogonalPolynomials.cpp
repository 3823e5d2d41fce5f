//===- OrthogonalPolynomials.cpp - torch.special's polynomial families ----===//
//
// This file implements the aten.pointwise bodies of torch.special's
// orthogonal polynomials p_n(x): Chebyshev's T, U, V, W and their shifted
// forms on [0, 1], Hermite's H (physicists') and He (probabilists'),
// Laguerre's L and Legendre's P. They follow eager's kernels case by case:
// n is the float operand truncated to int64 (NaN and infinities count as
// negative), n < 0 gives 0, the ends of the interval and the small degrees
// have closed values, Chebyshev's families take their trigonometric form
// past a few degrees inside the interval, and the rest is the three-term
// recurrence in the operands' own type (so it overflows, and turns NaN,
// where eager's does), stopping at a NaN as eager's loop does.
//
//===----------------------------------------------------------------------===//
#include "FloatMath.h"
#include "SpecialConstants.h"
#include "SpecialFunctions.h"

#include <cstdint>
#include <limits>

using namespace mlir;

namespace kiln::aten {
namespace {

using namespace special;

constexpr int64_t kMinInt64 = std::numeric_limits<int64_t>::min();
/// The most recurrence steps one element takes. Legendre's and Laguerre's
/// recurrences stay finite, so eager's loop runs all n steps; past this
/// many Kiln gives NaN instead of running for minutes.
constexpr int64_t kMaxSteps = int64_t{1} << 22;

/// The degree n (i64) and its arithmetic, beside the float operations.
class Degree {
public:
  /// n as eager reads it from the float operand: truncated toward zero,
  /// and NaN, +-inf and magnitudes from 2^63 up as INT64_MIN (what x86's
  /// conversion gives), so that they count as negative.
  Degree(FloatMath &m, Value nFloat) : m(m), b(m.builder()), l(m.loc()) {
    Value inRange = m.lt(m.abs(nFloat), m.c(0x1p63));
    Value safe = m.select(inRange, nFloat, m.c(0));
    Value truncated = b.create<arith::FPToSIOp>(l, b.getI64Type(), safe);
    n = m.select(inRange, truncated, integer(kMinInt64));
  }

  Value integer(int64_t v) { return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)); }
  Value plus(Value i, int64_t v) { return b.create<arith::AddIOp>(l, i, integer(v)); }
  Value twice(Value i) { return b.create<arith::AddIOp>(l, i, i); }
  Value compare(arith::CmpIPredicate p, int64_t v) {
    return b.create<arith::CmpIOp>(l, p, n, integer(v));
  }
  Value negative() { return compare(arith::CmpIPredicate::slt, 0); }
  Value is(int64_t v) { return compare(arith::CmpIPredicate::eq, v); }
  Value above(int64_t v) { return compare(arith::CmpIPredicate::sgt, v); }
  Value even() {
    Value low = b.create<arith::AndIOp>(l, n, integer(1));
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, low, integer(0));
  }
  /// The integer `i` as a float of the operands' type (C++'s conversion).
  Value toFloat(Value i) { return b.create<arith::SIToFPOp>(l, m.floatType(), i); }
  /// +-v: v where n is even, else -v.
  Value alternating(Value v) { return m.select(even(), v, m.neg(v)); }

  Value n;

private:
  FloatMath &m;
  OpBuilder &b;
  Location l;
};

using Step = function_ref<Value(FloatMath &, Value k, Value p, Value q)>;

/// The recurrence's last value: from (p, q) = (p0, q0), for k = first,
/// first + stride, ... while k <= last (and q is not NaN when `stopAtNaN`),
/// (p, q) <- (q, step(k, p, q)), k passed as a float. Elements where
/// `needed` is false take no step; one that would take more than kMaxSteps
/// gives NaN.
Value recurrence(FloatMath &m, Degree &d, Value needed, int64_t first, Value last,
                 int64_t stride, bool stopAtNaN, Value p0, Value q0, Step step) {
  OpBuilder &b = m.builder();
  Location l = m.loc();
  Value cap = d.integer(first + stride * (kMaxSteps - 1));
  Value cutShort = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sgt, last, cap);
  Value bound = b.create<arith::MinSIOp>(l, last, cap);
  Type type = m.floatType();
  Carried done = whileLoop(
      b, l, ValueRange{d.integer(first), p0, q0},
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl, type);
        Value go = n.both(needed, nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sle, c[0],
                                                           bound));
        if (stopAtNaN)
          go = n.both(go, n.negate(n.isNaN(c[2])));
        return std::pair{go, Carried(c.begin(), c.end())};
      },
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl, type);
        Value k = nb.create<arith::SIToFPOp>(nl, type, c[0]);
        Value next = step(n, k, c[1], c[2]);
        Value kNext = nb.create<arith::AddIOp>(
            nl, c[0], nb.create<arith::ConstantOp>(nl, nb.getI64IntegerAttr(stride)));
        return Carried{kNext, c[2], next};
      });
  return m.where(m.both(needed, cutShort), kNaN, done[2]);
}

enum class Chebyshev { T, U, V, W };

/// Chebyshev's polynomial of `kind` at y, as eager's: +-1 first (the shifted
/// forms' x = 1 and x = 0), then for n above `trigonometricFrom` inside
/// (-1, 1) the trigonometric form, then n = 0, 1 and the recurrence
/// r = 2y q - p. `shifted` keeps eager's one difference in W's
/// trigonometric form: where cos(acos(y) / 2) rounds to 1, the shifted form
/// gives +-1 and the plain one 2n + 1 (y > 0).
Value chebyshev(FloatMath &m, Value y, Value nFloat, Chebyshev kind, int64_t trigonometricFrom,
                bool shifted) {
  Degree d(m, nFloat);
  Value one = m.c(1), zero = m.c(0);
  Value n = d.toFloat(d.n);
  Value nPlusOne = d.toFloat(d.plus(d.n, 1));
  Value twoNPlusOne = d.toFloat(d.plus(d.twice(d.n), 1));
  Value positive = m.gt(y, zero);
  Value twoY = m.add(y, y);
  Value theta = m.acos(y);
  Value first, atEnd, trigonometric;
  switch (kind) {
  case Chebyshev::T:
    first = y;
    atEnd = m.select(positive, one, d.alternating(one));
    trigonometric = m.cos(m.mul(n, theta));
    break;
  case Chebyshev::U: {
    first = twoY;
    atEnd = m.select(positive, nPlusOne, d.alternating(nPlusOne));
    Value sine = m.sin(theta);
    trigonometric = m.select(m.ne(sine, zero), m.div(m.sin(m.mul(nPlusOne, theta)), sine),
                             m.div(m.mul(nPlusOne, m.cos(m.mul(nPlusOne, theta))), y));
    break;
  }
  case Chebyshev::V: {
    first = m.sub(twoY, one);
    atEnd = m.select(positive, one, d.alternating(twoNPlusOne));
    Value half = m.mul(theta, m.c(0.5));
    Value ratio = m.div(m.cos(m.mul(m.add(n, m.c(0.5)), theta)), m.cos(half));
    trigonometric = m.select(m.ne(m.sin(half), one), ratio, d.alternating(twoNPlusOne));
    break;
  }
  case Chebyshev::W: {
    first = m.add(twoY, one);
    atEnd = m.select(positive, twoNPlusOne, d.alternating(one));
    Value half = m.mul(theta, m.c(0.5));
    Value ratio = m.div(m.sin(m.mul(m.add(n, m.c(0.5)), theta)), m.sin(half));
    Value degenerate =
        shifted ? d.alternating(one) : m.select(positive, twoNPlusOne, d.alternating(one));
    trigonometric = m.select(m.ne(m.cos(half), one), ratio, degenerate);
    break;
  }
  }
  Value atEnds = m.eq(m.abs(y), one);
  Value inside = m.both(d.above(trigonometricFrom), m.lt(m.abs(y), one));
  Value small = m.either(d.is(0), d.is(1));
  Value needed = m.negate(m.either(m.either(d.negative(), atEnds), m.either(inside, small)));
  Value r = recurrence(m, d, needed, 2, d.n, 1, /*stopAtNaN=*/true, one, first,
                       [&](FloatMath &s, Value, Value p, Value q) {
                         return s.sub(s.mul(twoY, q), p);
                       });
  r = m.select(d.is(1), first, r);
  r = m.select(d.is(0), one, r);
  r = m.select(inside, trigonometric, r);
  r = m.select(atEnds, atEnd, r);
  return m.select(d.negative(), zero, r);
}

/// The largest degree eager's Hermite kernels compute in f32 and in f64;
/// above it they give NaN.
int64_t hermiteLimit(Type type) { return type.isF64() ? 512 : 128; }

/// Hermite's H_n (physicists', `probabilists` false) or He_n: r = 2x q - 2k p
/// or x q - k p from (1, 2x) or (1, x), with no stop at NaN (eager's bound
/// on n keeps the loop short).
Value hermite(FloatMath &m, Value x, Value nFloat, bool probabilists) {
  Degree d(m, nFloat);
  Value zero = m.c(0), one = m.c(1);
  Value first = probabilists ? x : m.add(x, x);
  Value tooHigh = d.above(hermiteLimit(m.floatType()));
  Value needed = m.negate(m.either(m.either(d.negative(), tooHigh), m.either(d.is(0), d.is(1))));
  // H: k = 2, 4, ..., 2n - 2 with r = (x + x) q - k p; He: k = 1, ..., n - 1.
  Value last = probabilists ? d.plus(d.n, -1) : d.plus(d.twice(d.n), -2);
  Value r = recurrence(m, d, needed, probabilists ? 1 : 2, last, probabilists ? 1 : 2,
                       /*stopAtNaN=*/false, one, first,
                       [&](FloatMath &s, Value k, Value p, Value q) {
                         Value scale = probabilists ? x : s.add(x, x);
                         return s.sub(s.mul(scale, q), s.mul(k, p));
                       });
  r = m.where(tooHigh, kNaN, r);
  r = m.select(d.is(1), first, r);
  r = m.select(d.is(0), one, r);
  return m.select(d.negative(), zero, r);
}

/// Laguerre's L_n: 1 at x = 0, else r = ((2k + 1 - x) q - k p) / (k + 1) from
/// (1, 1 - x).
Value laguerre(FloatMath &m, Value x, Value nFloat) {
  Degree d(m, nFloat);
  Value zero = m.c(0), one = m.c(1);
  Value first = m.sub(one, x);
  Value atZero = m.eq(m.abs(x), zero);
  Value needed =
      m.negate(m.either(m.either(d.negative(), atZero), m.either(d.is(0), d.is(1))));
  Value r = recurrence(m, d, needed, 1, d.plus(d.n, -1), 1, /*stopAtNaN=*/true, one, first,
                       [&](FloatMath &s, Value k, Value p, Value q) {
                         Value a = s.add(s.add(k, k), first);
                         return s.div(s.sub(s.mul(a, q), s.mul(k, p)), s.add(k, s.c(1)));
                       });
  r = m.select(d.is(1), first, r);
  r = m.select(d.is(0), one, r);
  r = m.select(atZero, one, r);
  return m.select(d.negative(), zero, r);
}

/// Legendre's P_n: +-1 at x = +-1, else r = ((2k + 1) x q - k p) / (k + 1)
/// from (1, x).
Value legendre(FloatMath &m, Value x, Value nFloat) {
  Degree d(m, nFloat);
  Value zero = m.c(0), one = m.c(1);
  Value atEnds = m.eq(m.abs(x), one);
  Value needed =
      m.negate(m.either(m.either(d.negative(), atEnds), m.either(d.is(0), d.is(1))));
  Value r = recurrence(m, d, needed, 1, d.plus(d.n, -1), 1, /*stopAtNaN=*/true, one, x,
                       [&](FloatMath &s, Value k, Value p, Value q) {
                         Value a = s.mul(s.add(s.add(k, k), s.c(1)), x);
                         return s.div(s.sub(s.mul(a, q), s.mul(k, p)), s.add(k, s.c(1)));
                       });
  r = m.select(d.is(1), x, r);
  r = m.select(d.is(0), one, r);
  r = m.select(atEnds, m.select(m.gt(x, zero), one, d.alternating(one)), r);
  return m.select(d.negative(), zero, r);
}

/// y = 2x - 1, as eager computes it (x + x - 1).
Value shiftedArgument(FloatMath &m, Value x) { return m.sub(m.add(x, x), m.c(1)); }

} // namespace

// The bodies compute in the operands' type (f32 or f64; Pointwise.cpp
// widens f16 and bf16 to f32), as eager's kernels do: a[0] is x, a[1] n.
#define KILN_POLYNOMIAL_BODY(NAME, EXPRESSION)                                 \
  Value NAME(OpBuilder &b, Location l, ValueRange a, ArrayRef<double>) {      \
    FloatMath m(b, l, a[0].getType());                                         \
    Value x = a[0], n = a[1];                                                  \
    return EXPRESSION;                                                         \
  }
KILN_POLYNOMIAL_BODY(chebyshevTBody, chebyshev(m, x, n, Chebyshev::T, 6, false))
KILN_POLYNOMIAL_BODY(chebyshevUBody, chebyshev(m, x, n, Chebyshev::U, 8, false))
KILN_POLYNOMIAL_BODY(chebyshevVBody, chebyshev(m, x, n, Chebyshev::V, 8, false))
KILN_POLYNOMIAL_BODY(chebyshevWBody, chebyshev(m, x, n, Chebyshev::W, 8, false))
KILN_POLYNOMIAL_BODY(shiftedChebyshevTBody,
                     chebyshev(m, shiftedArgument(m, x), n, Chebyshev::T, 6, true))
KILN_POLYNOMIAL_BODY(shiftedChebyshevUBody,
                     chebyshev(m, shiftedArgument(m, x), n, Chebyshev::U, 6, true))
KILN_POLYNOMIAL_BODY(shiftedChebyshevVBody,
                     chebyshev(m, shiftedArgument(m, x), n, Chebyshev::V, 6, true))
KILN_POLYNOMIAL_BODY(shiftedChebyshevWBody,
                     chebyshev(m, shiftedArgument(m, x), n, Chebyshev::W, 4, true))
KILN_POLYNOMIAL_BODY(hermiteHBody, hermite(m, x, n, /*probabilists=*/false))
KILN_POLYNOMIAL_BODY(hermiteHeBody, hermite(m, x, n, /*probabilists=*/true))
KILN_POLYNOMIAL_BODY(laguerreLBody, laguerre(m, x, n))
KILN_POLYNOMIAL_BODY(legendrePBody, legendre(m, x, n))
#undef KILN_POLYNOMIAL_BODY

} // namespace kiln::aten
