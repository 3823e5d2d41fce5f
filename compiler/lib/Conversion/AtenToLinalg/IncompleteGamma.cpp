//===- IncompleteGamma.cpp - the regularized incomplete gamma functions ---===//
//
// This file implements igamma P(a, x) and igammac Q(a, x) = 1 - P(a, x) in
// f64 with Cephes' three kernels, chosen per element by Cephes' (and
// eager's) regions:
//  - the power series of P, sum over n of x^n / (a+1)...(a+n);
//  - the continued fraction of Q (Legendre's, by Cephes' recurrence), for
//    x > 1.1 past a;
//  - the series of Q for small x, 1 - x^a / Gamma(a+1) minus the tail of
//    the alternating series, with log Gamma(1+a) from its Taylor series in
//    the Riemann zeta values near a = 0 and 1.
// Each kernel is an scf.while that runs only for the elements its region
// holds, until a term no longer changes the sum (2^-53). Eager switches to
// Temme's uniform asymptotic expansion where a > 20 and x is near a; the
// series and the fraction converge there too, in O(sqrt(a)) terms, and
// agree with it to f64 rounding (tests/e2e/test_e2e_special_accuracy.py
// checks against mpmath). The prefactor x^a e^-x / Gamma(a) is
// exp(a log x - x - lgamma(a)), whose relative error grows as
// 2^-53 a log x (Cephes uses Lanczos' sum near x = a instead). A kernel
// that has not converged after kMaxTerms terms (a above about 5e7 with x
// within a few sqrt(a) of it) gives NaN rather than a partial sum.
//
//===----------------------------------------------------------------------===//
#include "FloatMath.h"
#include "SpecialConstants.h"
#include "SpecialFunctions.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::aten {
namespace {

using namespace special;

/// Cephes' BIG and 1/BIG: the continued fraction's rescaling.
constexpr double kBig = 4.503599627370496e15;
constexpr double kBigInverse = 2.22044604925031308085e-16;
/// Terms before a kernel gives up (NaN).
constexpr double kMaxTerms = 65536;

/// zeta(n) = sum over k >= 1 of k^-n, for n >= 2: 63 terms in long double
/// and the Euler-Maclaurin tail from 64 with four Bernoulli terms (the
/// next is below 1e-17).
double riemannZeta(int n) {
  long double sum = 0;
  for (int k = 1; k < 64; ++k)
    sum += std::pow(static_cast<long double>(k), -n);
  const long double N = 64, s = n;
  sum += std::pow(N, 1 - s) / (s - 1) + std::pow(N, -s) / 2 + s * std::pow(N, -s - 1) / 12 -
         s * (s + 1) * (s + 2) * std::pow(N, -s - 3) / 720 +
         s * (s + 1) * (s + 2) * (s + 3) * (s + 4) * std::pow(N, -s - 5) / 30240;
  return static_cast<double>(sum);
}

/// log Gamma(1 + x) = -gamma x + sum over n >= 2 of zeta(n) (-x)^n / n,
/// for |x| <= 1/2: Cephes' lgam1p_taylor, its 41 terms as one polynomial.
std::array<double, 42> logGammaOnePlusTaylor() {
  std::array<double, 42> c{};
  c[1] = -kEulerGamma;
  for (int n = 2; n <= 41; ++n)
    c[n] = (n % 2 ? -1.0 : 1.0) * riemannZeta(n) / n;
  return c;
}

/// log Gamma(1 + a), accurate near a = 0 and a = 1 (Cephes' lgam1p).
Value logGammaOnePlus(FloatMath &m, Value a) {
  static const std::array<double, 42> taylor = logGammaOnePlusTaylor();
  Value nearZero = m.polynomial(a, taylor);
  Value nearOne = m.add(m.log(a), m.polynomial(m.sub(a, m.c(1)), taylor));
  Value elsewhere = m.libm("lgamma", m.add(a, m.c(1)));
  return m.select(m.le(m.abs(a), m.c(0.5)), nearZero,
                  m.select(m.lt(m.abs(m.sub(a, m.c(1))), m.c(0.5)), nearOne, elsewhere));
}

/// x^a e^-x / Gamma(a).
Value prefactor(FloatMath &m, Value a, Value x) {
  return m.exp(m.sub(m.sub(m.mul(a, m.log(x)), x), m.libm("lgamma", a)));
}

/// A kernel's value and whether its sum settled within kMaxTerms.
struct Kernel {
  Value value, settled;
};

/// Whether a kernel's loop stopped because its sum settled (`unsettled`
/// is its own go-on test on the last carried values) rather than at
/// kMaxTerms; an element for which it never `ran` is settled.
Value settledUnless(FloatMath &m, Value ran, Value unsettled) {
  return m.either(m.negate(ran), m.negate(unsettled));
}

/// P(a, x) by its power series (Cephes' igam_series), for `active`
/// elements.
Kernel powerSeriesOfP(FloatMath &m, Value a, Value x, Value active) {
  Value factor = prefactor(m, a, x);
  Value run = m.both(active, m.ne(factor, m.c(0)));
  // Carried: the terms added, a + that count, the last term, the sum.
  Carried init{m.c(0), a, m.c(1), m.c(1)};
  Carried last = whileLoop(
      m.builder(), m.loc(), init,
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value go = n.both(n.both(run, n.lt(c[0], n.c(kMaxTerms))),
                          n.gt(c[2], n.mul(n.c(kMachEp), c[3])));
        return std::pair{go, Carried(c.begin(), c.end())};
      },
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value r = n.add(c[1], n.c(1));
        Value term = n.mul(c[2], n.div(x, r));
        return Carried{n.add(c[0], n.c(1)), r, term, n.add(c[3], term)};
      });
  // An element that never ran (a prefactor of 0: the value is 0) is settled.
  Value settled = settledUnless(m, run, m.gt(last[2], m.mul(m.c(kMachEp), last[3])));
  Value value = m.select(m.eq(factor, m.c(0)), m.c(0), m.div(m.mul(last[3], factor), a));
  return {value, settled};
}

/// Q(a, x) by Legendre's continued fraction (Cephes' igamc_continued_fraction),
/// for `active` elements.
Kernel continuedFractionOfQ(FloatMath &m, Value a, Value x, Value active) {
  Value factor = prefactor(m, a, x);
  Value run = m.both(active, m.ne(factor, m.c(0)));
  Value y = m.sub(m.c(1), a);
  Value z = m.add(m.add(x, y), m.c(1));
  Value pkm1 = m.add(x, m.c(1)), qkm1 = m.mul(z, x);
  // Carried: the step count c, y, z, p(k-2), p(k-1), q(k-2), q(k-1), the
  // fraction, and its last relative change.
  Carried init{m.c(0), y, z, m.c(1), pkm1, x, qkm1, m.div(pkm1, qkm1), m.c(1)};
  Carried last = whileLoop(
      m.builder(), m.loc(), init,
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value go = n.both(n.both(run, n.lt(c[0], n.c(kMaxTerms))), n.gt(c[8], n.c(kMachEp)));
        return std::pair{go, Carried(c.begin(), c.end())};
      },
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value step = n.add(c[0], n.c(1));
        Value yk = n.add(c[1], n.c(1)), zk = n.add(c[2], n.c(2));
        Value yc = n.mul(yk, step);
        Value pk = n.sub(n.mul(c[4], zk), n.mul(c[3], yc));
        Value qk = n.sub(n.mul(c[6], zk), n.mul(c[5], yc));
        Value defined = n.ne(qk, n.c(0));
        Value r = n.div(pk, qk);
        Value fraction = n.select(defined, r, c[7]);
        Value change = n.select(defined, n.abs(n.div(n.sub(c[7], r), r)), n.c(1));
        Value rescale = n.gt(n.abs(pk), n.c(kBig));
        auto scaled = [&](Value v) { return n.select(rescale, n.mul(v, n.c(kBigInverse)), v); };
        return Carried{step,          yk,         zk,       scaled(c[4]), scaled(pk),
                       scaled(c[6]), scaled(qk), fraction, change};
      });
  Value settled = settledUnless(m, run, m.gt(last[8], m.c(kMachEp)));
  Value value = m.select(m.eq(factor, m.c(0)), m.c(0), m.mul(last[7], factor));
  return {value, settled};
}

/// Q(a, x) for small x (Cephes' igamc_series): 1 - x^a / Gamma(a + 1)
/// less x^a / Gamma(a) times the sum over n >= 1 of (-x)^n / (n! (a + n)),
/// for `active` elements.
Kernel smallXSeriesOfQ(FloatMath &m, Value a, Value x, Value active) {
  // Carried: n, (-x)^n / n!, the last term, the sum.
  Carried init{m.c(1), m.c(1), m.c(1), m.c(0)};
  Carried last = whileLoop(
      m.builder(), m.loc(), init,
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value go = n.both(n.both(active, n.lt(c[0], n.c(kMaxTerms))),
                          n.gt(n.abs(c[2]), n.mul(n.c(kMachEp), n.abs(c[3]))));
        return std::pair{go, Carried(c.begin(), c.end())};
      },
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value fac = n.mul(c[1], n.div(n.neg(x), c[0]));
        Value term = n.div(fac, n.add(a, c[0]));
        return Carried{n.add(c[0], n.c(1)), fac, term, n.add(c[3], term)};
      });
  Value settled =
      settledUnless(m, active, m.gt(m.abs(last[2]), m.mul(m.c(kMachEp), m.abs(last[3]))));
  Value logX = m.log(x);
  Value head = m.neg(m.expm1(m.sub(m.mul(a, logX), logGammaOnePlus(m, a))));
  Value tail = m.mul(m.exp(m.sub(m.mul(a, logX), m.libm("lgamma", a))), last[3]);
  return {m.sub(head, tail), settled};
}

/// P(a, x) (`complement` false) or Q(a, x) for a, x > 0 finite, in the
/// regions eager's calc_igamma and calc_igammac choose: the power series
/// of P where `bySeriesOfP`, else the fraction past x = 1.1 and Q's small-x
/// series below; the other function is 1 minus it. Elements outside the
/// domain (`regular` false) run no kernel.
Value incompleteGamma(FloatMath &m, Value a, Value x, Value regular, Value bySeriesOfP,
                      bool complement) {
  Value byFraction = m.both(m.negate(bySeriesOfP), m.gt(x, m.c(1.1)));
  Value bySeriesOfQ = m.both(m.negate(bySeriesOfP), m.negate(byFraction));
  Kernel p = powerSeriesOfP(m, a, x, m.both(regular, bySeriesOfP));
  Kernel fraction = continuedFractionOfQ(m, a, x, m.both(regular, byFraction));
  Kernel small = smallXSeriesOfQ(m, a, x, m.both(regular, bySeriesOfQ));
  Value q = m.select(byFraction, fraction.value, small.value);
  Value one = m.c(1);
  Value result = complement ? m.select(bySeriesOfP, m.sub(one, p.value), q)
                            : m.select(bySeriesOfP, p.value, m.sub(one, q));
  Value settled = m.select(bySeriesOfP, p.settled,
                           m.select(byFraction, fraction.settled, small.settled));
  return m.where(m.negate(settled), kNaN, result);
}

/// The domain's edges, in eager's order: NaN below 0; a = 0; x = 0; a
/// infinite; x infinite. The fields are P's or Q's values there.
struct Edges {
  double zeroAPositiveX, zeroX, infiniteA, infiniteX;
};

Value withEdges(FloatMath &m, Value a, Value x, Value regularResult, Edges e) {
  Value zero = m.c(0), inf = m.c(std::numeric_limits<double>::infinity());
  Value infiniteA = m.eq(m.abs(a), inf), infiniteX = m.eq(m.abs(x), inf);
  Value r = m.where(m.either(m.isNaN(a), m.isNaN(x)), kNaN, regularResult);
  r = m.where(infiniteX, e.infiniteX, r);
  r = m.where(infiniteA, e.infiniteA, r);
  r = m.where(m.both(infiniteA, infiniteX), kNaN, r);
  r = m.where(m.eq(x, zero), e.zeroX, r);
  r = m.where(m.eq(a, zero), kNaN, r);
  r = m.where(m.both(m.eq(a, zero), m.gt(x, zero)), e.zeroAPositiveX, r);
  return m.where(m.either(m.lt(x, zero), m.lt(a, zero)), kNaN, r);
}

/// Where the kernels may run: a, x > 0 and finite.
Value regularDomain(FloatMath &m, Value a, Value x) {
  Value inf = m.c(std::numeric_limits<double>::infinity());
  Value positive = m.both(m.gt(a, m.c(0)), m.gt(x, m.c(0)));
  return m.both(positive, m.both(m.lt(a, inf), m.lt(x, inf)));
}

/// igamma(a, x) = P(a, x): the power series unless x > 1 and x > a.
Value igamma(FloatMath &m, ValueRange v, ArrayRef<double>) {
  Value a = v[0], x = v[1];
  Value bySeriesOfP = m.negate(m.both(m.gt(x, m.c(1)), m.gt(x, a)));
  Value p = incompleteGamma(m, a, x, regularDomain(m, a, x), bySeriesOfP, false);
  return withEdges(m, a, x, p, {1, 0, 0, 1});
}

/// igammac(a, x) = Q(a, x): 1 - P's series where x > 1.1 and x < a, where
/// x <= 0.5 and a > -0.4 / log x, or where 0.5 < x <= 1.1 and 1.1 x < a.
Value igammac(FloatMath &m, ValueRange v, ArrayRef<double>) {
  Value a = v[0], x = v[1];
  Value large = m.gt(x, m.c(1.1)), small = m.le(x, m.c(0.5));
  Value bySeriesOfP = m.select(
      large, m.lt(x, a),
      m.select(small, m.lt(m.div(m.c(-0.4), m.log(x)), a), m.lt(m.mul(x, m.c(1.1)), a)));
  Value q = incompleteGamma(m, a, x, regularDomain(m, a, x), bySeriesOfP, true);
  return withEdges(m, a, x, q, {0, 1, 1, 0});
}

} // namespace

Value igammaBody(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  return inF64(b, l, a, s, igamma);
}
Value igammacBody(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  return inF64(b, l, a, s, igammac);
}

} // namespace kiln::aten
