//===- SpecialFunctions.cpp - scalar bodies of the special functions ------===//
//
// This file implements the special functions of aten.pointwise in f64:
// series and recurrences whose coefficients are computed here from their
// definitions (Bernoulli numbers, factorials, the Bessel functions'
// asymptotic terms), branch-free where the step count is fixed, and
// Newton's method for the inverses. tests/e2e/test_e2e_special_accuracy.py
// checks them against mpmath (relative error below 1e-12).
//
//===----------------------------------------------------------------------===//
#include "SpecialConstants.h"
#include "SpecialFunctions.h"
#include "FloatMath.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::aten {
namespace {

using namespace special;


// --- Gamma family ----------------------------------------------------------

/// B_2k / 2k for k = 1..7: the asymptotic series of digamma in 1/u^2.
constexpr double kDigammaSeries[] = {1.0 / 12,   -1.0 / 120,       1.0 / 252, -1.0 / 240,
                                     1.0 / 132, -691.0 / 32760, 1.0 / 12};
/// B_2k for k = 1..7: trigamma's series in 1/u^2 (after 1/u + 1/2u^2).
constexpr double kTrigammaSeries[] = {1.0 / 6,  -1.0 / 30,      1.0 / 42, -1.0 / 30,
                                      5.0 / 66, -691.0 / 2730, 7.0 / 6};

/// Shifts u up to at least 10 by psi_n(u) = psi_n(u + 1) - (-1)^n n!/u^(n+1)
/// (ten steps, unrolled and branch-free); `step` gives the term 1/u or
/// 1/u^2 added to the running sum.
Value shiftPastTen(FloatMath &m, Value &u, Value (*step)(FloatMath &, Value)) {
  Value sum = m.c(0), one = m.c(1), ten = m.c(10);
  for (int i = 0; i < 10; ++i) {
    Value below = m.lt(u, ten);
    sum = m.select(below, m.add(sum, step(m, u)), sum);
    u = m.select(below, m.add(u, one), u);
  }
  return sum;
}

/// psi(u) for u >= 0: the shift, then log u - 1/2u - sum B_2k / (2k u^2k)
/// (the next term is 4.4e-17 at u = 10).
Value digammaOfNonNegative(FloatMath &m, Value u) {
  Value shifted = shiftPastTen(m, u, [](FloatMath &n, Value v) { return n.neg(n.div(n.c(1), v)); });
  Value z = m.div(m.c(1), m.mul(u, u));
  Value series = m.mul(z, m.polynomial(z, kDigammaSeries));
  return m.add(shifted, m.sub(m.sub(m.log(u), m.div(m.c(0.5), u)), series));
}

/// x - round(x): the argument of pi x's periodic functions, exact, so that
/// tan(pi x) and sin(pi x)^2 keep their digits near the integers.
Value fractionFromNearest(FloatMath &m, Value x) { return m.sub(x, m.nearest(x)); }

/// digamma as eager: psi(x) = psi(1 - x) - pi / tan(pi x) below 0, NaN at
/// the negative integers (and -inf), -inf at +0 and +inf at -0.
Value digamma(FloatMath &m, Value x) {
  Value zero = m.c(0);
  Value negative = m.lt(x, zero);
  Value reflection = m.div(m.c(kPi), m.tan(m.mul(m.c(kPi), fractionFromNearest(m, x))));
  Value psi = digammaOfNonNegative(m, m.select(negative, m.sub(m.c(1), x), x));
  psi = m.select(negative, m.sub(psi, reflection), psi);
  psi = m.where(m.both(negative, m.eq(x, m.trunc(x))), kNaN, psi);
  return m.select(m.eq(x, zero), m.copySign(m.c(kInf), m.neg(x)), psi);
}

/// psi_1(x): below 1/2, pi^2 / sin^2(pi x) - psi_1(1 - x); else the shift
/// and 1/u + 1/2u^2 + sum B_2k / u^(2k+1). +inf at 0 and at the negative
/// integers, its poles (eager gives +inf at 0 but a large finite number at
/// the negative integers, from the rounding of its sin(pi x)).
Value trigamma(FloatMath &m, Value x) {
  Value one = m.c(1);
  Value reflected = m.lt(x, m.c(0.5));
  Value u = m.select(reflected, m.sub(one, x), x);
  Value shifted = shiftPastTen(m, u, [](FloatMath &n, Value v) { return n.div(n.c(1), n.mul(v, v)); });
  Value z = m.div(one, u), z2 = m.mul(z, z);
  Value series = m.add(m.add(z, m.mul(m.c(0.5), z2)),
                       m.mul(m.mul(z2, z), m.polynomial(z2, kTrigammaSeries)));
  Value psi1 = m.add(shifted, series);
  Value s = m.sin(m.mul(m.c(kPi), fractionFromNearest(m, x)));
  Value reflection = m.div(m.c(kPi * kPi), m.mul(s, s));
  return m.select(reflected, m.sub(reflection, psi1), psi1);
}

// --- Hurwitz's zeta --------------------------------------------------------

/// The direct sum stops after this many terms (q below about -2^16); the
/// result there is NaN, where eager's loop runs -q times.
constexpr double kZetaMaxTerms = 65536;

/// (2k)! / B_2k for k = 1..12: the Euler-Maclaurin tail's divisors.
std::array<double, 12> eulerMaclaurinDivisors() {
  constexpr double bernoulli[12][2] = {{1, 6},          {-1, 30},     {1, 42},
                                       {-1, 30},        {5, 66},      {-691, 2730},
                                       {7, 6},          {-3617, 510}, {43867, 798},
                                       {-174611, 330},  {854513, 138}, {-236364091, 2730}};
  std::array<double, 12> divisors;
  double factorial = 1;
  for (int k = 1; k <= 12; ++k) {
    factorial *= (2 * k - 1) * (2 * k);
    divisors[k - 1] = factorial * bernoulli[k - 1][1] / bernoulli[k - 1][0];
  }
  return divisors;
}

/// zeta(x, q) = sum over k >= 0 of (q + k)^-x, as Cephes computes it (and
/// eager with it): the terms directly while fewer than 9 or q + k <= 9, until
/// one no longer changes the sum; then the Euler-Maclaurin tail with 12
/// Bernoulli terms, until one no longer does. The direct sum is an
/// scf.while (its length depends on q); x = 1 gives inf, x < 1 NaN, a
/// non-positive integer q inf, and a negative q with a fractional x NaN.
Value zeta(FloatMath &m, Value x, Value q) {
  OpBuilder &b = m.builder();
  Location l = m.loc();
  Value one = m.c(1), zero = m.c(0);
  Value minusX = m.neg(x);
  Value qIsPole = m.both(m.le(q, zero), m.eq(q, m.floor(q)));
  // Only inputs with a finite answer loop: a pole's q + k never passes 9
  // when q is -1e300.
  Value sums = m.both(m.gt(x, one), m.negate(qIsPole));
  // Carried: the terms added, q + that count, the last term, the sum, and
  // whether the last term no longer changed it.
  Carried init{zero, q, zero, m.pow(q, minusX), m.truth(false)};
  Carried direct = whileLoop(
      b, l, init,
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value more = n.either(n.lt(c[0], n.c(9)), n.le(c[1], n.c(9)));
        Value go = n.both(n.both(sums, more),
                          n.both(n.negate(c[4]), n.lt(c[0], n.c(kZetaMaxTerms))));
        return std::pair{go, Carried(c.begin(), c.end())};
      },
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value a = n.add(c[1], n.c(1));
        Value term = n.pow(a, minusX);
        Value sum = n.add(c[3], term);
        Value bound = n.mul(n.c(kMachEp), sum);
        Value settled = n.both(n.lt(n.neg(bound), term), n.lt(term, bound));
        return Carried{n.add(c[0], n.c(1)), a, term, sum, settled};
      });
  Value w = direct[1], term = direct[2];
  Value s = m.sub(m.add(direct[3], m.div(m.mul(term, w), m.sub(x, one))),
                  m.mul(m.c(0.5), term));
  Value rising = one, done = m.truth(false);
  static const std::array<double, 12> divisors = eulerMaclaurinDivisors();
  for (int i = 0; i < 12; ++i) {
    rising = m.mul(rising, m.add(x, m.c(2 * i)));
    term = m.div(term, w);
    Value t = m.div(m.mul(rising, term), m.c(divisors[i]));
    Value next = m.add(s, t);
    Value settled = m.lt(m.abs(m.div(t, next)), m.c(kMachEp));
    s = m.select(done, s, next);
    done = m.either(done, settled);
    rising = m.mul(rising, m.add(x, m.c(2 * i + 1)));
    term = m.div(term, w);
  }
  Value result = m.select(direct[4], direct[3], s);
  Value cutShort = m.both(m.le(direct[1], m.c(9)), m.ge(direct[0], m.c(kZetaMaxTerms)));
  result = m.where(cutShort, kNaN, result);
  result = m.where(m.both(m.le(q, zero), m.ne(x, m.floor(x))), kNaN, result);
  result = m.where(qIsPole, kInf, result);
  result = m.where(m.lt(x, one), kNaN, result);
  return m.where(m.eq(x, one), kInf, result);
}

/// polygamma(n; x): digamma, trigamma, else (-1)^(n+1) n! zeta(n + 1, x)
/// (n! overflows to inf past 170, as eager's exp(lgamma(n + 1)); the
/// verifier keeps n an integer in [0, 1e6]).
Value polygamma(FloatMath &m, ValueRange a, ArrayRef<double> s) {
  auto n = static_cast<int64_t>(s[0]);
  if (n == 0)
    return digamma(m, a[0]);
  if (n == 1)
    return trigamma(m, a[0]);
  double factorial = 1;
  for (int64_t k = 2; k <= std::min<int64_t>(n, 171); ++k)
    factorial *= static_cast<double>(k);
  double sign = n % 2 ? 1.0 : -1.0;
  return m.mul(m.c(sign * factorial), zeta(m, m.c(static_cast<double>(n + 1)), a[0]));
}

// --- Error functions -------------------------------------------------------

/// Past this, erfcx takes its asymptotic series (below it exp(y^2) < e^676
/// and erfc(y) > 1e-296 are normal numbers).
constexpr double kErfcxSeriesFrom = 26;

/// erfcx(y) = exp(y^2) erfc(y): so for y <= 26 (relative error below 1e-13
/// there, from y^2's rounding), else 1/(y sqrt(pi)) times
/// sum (-1)^k (2k-1)!! / (2y^2)^k over ten terms (the next is below 1e-22).
Value erfcx(FloatMath &m, Value y) {
  Value scaled = m.mul(m.exp(m.mul(y, y)), m.libm("erfc", y));
  std::array<double, 10> series;
  series[0] = 1;
  for (int k = 1; k < 10; ++k)
    series[k] = -series[k - 1] * (2 * k - 1);
  Value z = m.div(m.c(0.5), m.mul(y, y));
  Value asymptotic = m.div(m.polynomial(z, series), m.mul(y, m.c(std::sqrt(kPi))));
  return m.select(m.gt(y, m.c(kErfcxSeriesFrom)), asymptotic, scaled);
}

/// x >= 0 with erf(x) = a, given a in [0, 1) and c = 1 - a, each as exactly
/// as the caller has it: Winitzki's approximation (relative error below
/// 2e-3), then four Newton steps. Up to a = 1/2 on erf(x) - a; past it on
/// log(erfc(x) / c), which keeps the digits that 1 - erfc loses and
/// converges in the tail, where erf's steepness makes Newton's method on
/// erf itself overshoot. A step with an underflowed slope (c below 1e-308)
/// keeps x.
Value inverseErf(FloatMath &m, Value a, Value c) {
  constexpr double kWinitzki = 0.147;
  Value w = m.log(m.mul(c, m.add(m.c(1), a)));
  Value t = m.add(m.c(2 / (kPi * kWinitzki)), m.mul(m.c(0.5), w));
  Value x = m.sqrt(m.sub(m.sqrt(m.sub(m.mul(t, t), m.div(w, m.c(kWinitzki)))), t));
  Value slope = m.c(2 / std::sqrt(kPi));
  Value tail = m.gt(a, m.c(0.5));
  for (int step = 0; step < 4; ++step) {
    Value density = m.mul(slope, m.exp(m.neg(m.mul(x, x))));
    Value complement = m.libm("erfc", x);
    Value inTail = m.add(x, m.div(m.mul(m.log(m.div(complement, c)), complement), density));
    Value central = m.sub(x, m.div(m.sub(m.erf(x), a), density));
    Value next = m.select(tail, inTail, central);
    x = m.select(m.both(m.gt(density, m.c(0)), m.gt(complement, m.c(0))), next, x);
  }
  return x;
}

/// erfinv as eager: NaN past +-1, +-inf at +-1, odd (-0 gives -0).
Value erfinv(FloatMath &m, ValueRange a, ArrayRef<double>) {
  Value y = a[0];
  Value magnitude = m.abs(y);
  Value x = inverseErf(m, magnitude, m.sub(m.c(1), magnitude));
  x = m.where(m.eq(magnitude, m.c(1)), kInf, x);
  x = m.where(m.gt(magnitude, m.c(1)), kNaN, x);
  return m.copySign(x, y);
}

/// The standard normal quantile: -sqrt 2 erfcinv(2p) below 1/2 and
/// sqrt 2 erfcinv(2 - 2p) above (both complements exact); -inf at 0, +inf
/// at 1, NaN outside [0, 1]. A subnormal p (below 2.2e-308) loses digits
/// (1e-4 relative at 5e-324): the Newton steps then work with subnormal
/// erfc values, where eager's Cephes ndtri keeps them.
Value ndtri(FloatMath &m, ValueRange a, ArrayRef<double>) {
  Value p = a[0], one = m.c(1), two = m.c(2);
  Value lower = m.lt(p, m.c(0.5));
  Value c = m.select(lower, m.mul(two, p), m.sub(two, m.mul(two, p)));
  Value x = m.mul(m.c(std::sqrt(2.0)), inverseErf(m, m.sub(one, c), c));
  x = m.select(lower, m.neg(x), x);
  x = m.where(m.eq(p, m.c(0)), -kInf, x);
  x = m.where(m.eq(p, one), kInf, x);
  return m.where(m.either(m.lt(p, m.c(0)), m.gt(p, one)), kNaN, x);
}

// --- frexp -----------------------------------------------------------------

/// frexp's parts of x in f64 (an f32 widens exactly, so its parts round
/// back exactly): x = m 2^e with |m| in [0.5, 1), from x's bits (a
/// subnormal scaled by 2^54 first); 0, +-inf and NaN give m = x and e = 0,
/// as glibc's frexp (and eager with it).
std::pair<Value, Value> frexpParts(FloatMath &m, Value x) {
  OpBuilder &b = m.builder();
  Location l = m.loc();
  Type i64 = b.getI64Type();
  auto integer = [&](int64_t v) { return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)); };
  Value magnitude = m.abs(x);
  Value subnormal = m.both(m.lt(magnitude, m.c(std::numeric_limits<double>::min())),
                           m.gt(magnitude, m.c(0)));
  Value scaled = m.select(subnormal, m.mul(x, m.c(0x1p54)), x);
  Value bits = b.create<arith::BitcastOp>(l, i64, scaled);
  Value biased = b.create<arith::AndIOp>(l, b.create<arith::ShRUIOp>(l, bits, integer(52)),
                                         integer(0x7ff));
  Value exponent = b.create<arith::SIToFPOp>(
      l, b.getF64Type(), b.create<arith::SubIOp>(l, biased, integer(1022)));
  exponent = m.select(subnormal, m.sub(exponent, m.c(54)), exponent);
  Value fraction = b.create<arith::OrIOp>(
      l, b.create<arith::AndIOp>(l, bits, integer(~(int64_t{0x7ff} << 52))),
      integer(int64_t{1022} << 52));
  Value mantissa = b.create<arith::BitcastOp>(l, b.getF64Type(), fraction);
  Value finiteNonZero = m.both(m.lt(magnitude, m.c(kInf)), m.gt(magnitude, m.c(0)));
  return {m.select(finiteNonZero, mantissa, x), m.select(finiteNonZero, exponent, m.c(0))};
}

} // namespace

// The bodies: each runs its function in f64 (inF64); zeta reads both
// operands.
KILN_F64_BODY(lgammaBody, m.libm("lgamma", x[0]))
KILN_F64_BODY(digammaBody, digamma(m, x[0]))
KILN_F64_BODY(zetaBody, zeta(m, x[0], x[1]))
KILN_F64_BODY(erfcBody, m.libm("erfc", x[0]))
KILN_F64_BODY(erfcxBody, erfcx(m, x[0]))
KILN_F64_BODY(frexpMantissaBody, frexpParts(m, x[0]).first)
KILN_F64_BODY(frexpExponentBody, frexpParts(m, x[0]).second)

Value polygammaBody(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  return inF64(b, l, a, s, polygamma);
}
Value erfinvBody(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  return inF64(b, l, a, s, erfinv);
}
Value ndtriBody(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  return inF64(b, l, a, s, ndtri);
}

} // namespace kiln::aten
