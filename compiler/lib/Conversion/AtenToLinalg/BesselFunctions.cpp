//===- BesselFunctions.cpp - torch.special's Bessel functions -------------===//
//
// This file implements the aten.pointwise bodies of the Bessel functions,
// each in f64 (an f32 operand widens and its result rounds once): the
// modified ones of the first kind I_0, I_1 (and their exp(-|x|)-scaled
// forms i0e, i1e), of the second kind K_0, K_1 (and their exp(x)-scaled
// forms), the ordinary ones J_0, J_1, Y_0, Y_1 (libm's, called by name:
// glibc's and picolibc's), the spherical j_0 and Airy's Ai. The series' and
// quadrature's coefficients are computed here from their definitions;
// tests/e2e/test_e2e_special_accuracy.py checks them against mpmath.
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


// --- Modified Bessel functions of the first kind ---------------------------

/// Past this |x|, I_nu takes its asymptotic series.
constexpr double kBesselSeriesFrom = 20;

/// I_nu(|x|) for nu = 0 or 1, scaled by exp(-|x|) when `scaled`, with x's
/// sign for nu = 1. Up to |x| = 20, the power series
/// (|x|/2)^nu sum (x^2/4)^k / (k! (k + nu)!) over 41 terms (all positive, so
/// no digits cancel; the next term is below 1e-23 of the sum); past it,
/// e^|x| / sqrt(2 pi |x|) sum_k (-1)^k prod_j (4 nu^2 - (2j - 1)^2) /
/// (k! (8|x|)^k) over 31 terms (the next below 3e-18). Unscaled, exp(|x|)
/// overflows from |x| = 709.8, as eager's. I_1 is odd, and +0 at -0 as
/// eager's (which negates only below 0).
Value modifiedBessel(FloatMath &m, Value x, int nu, bool scaled) {
  Value a = m.abs(x);
  std::array<double, 41> power;
  power[0] = 1;
  for (int k = 1; k < 41; ++k)
    power[k] = power[k - 1] / (static_cast<double>(k) * (k + nu));
  Value series = m.polynomial(m.mul(m.c(0.25), m.mul(a, a)), power);
  if (nu)
    series = m.mul(m.mul(m.c(0.5), a), series);
  std::array<double, 31> asymptotic;
  asymptotic[0] = 1;
  for (int k = 1; k < 31; ++k)
    asymptotic[k] = asymptotic[k - 1] * ((2.0 * k - 1) * (2.0 * k - 1) - 4.0 * nu * nu) / (8.0 * k);
  Value large = m.div(m.polynomial(m.div(m.c(1), a), asymptotic),
                      m.sqrt(m.mul(m.c(2 * kPi), a)));
  Value far = m.gt(a, m.c(kBesselSeriesFrom));
  Value r = scaled ? m.select(far, large, m.mul(m.exp(m.neg(a)), series))
                   : m.select(far, m.mul(m.exp(a), large), series);
  return nu ? m.select(m.lt(x, m.c(0)), m.neg(r), r) : r;
}

// --- Modified Bessel functions of the second kind --------------------------

/// Up to this x, K_nu takes its power series; past kKQuadratureTo, its
/// asymptotic series; between them, a quadrature.
constexpr double kKSeriesTo = 1.5;
constexpr double kKQuadratureTo = 30;
/// The quadrature's step and number of nodes (t = 0, 0.1, ..., 4).
constexpr double kKStep = 0.1;
constexpr int kKNodes = 41;

/// K_nu(x) for nu = 0 or 1 and 0 < x <= 1.5 (DLMF 10.31.1), from I_nu's
/// series and harmonic numbers H_k (psi(k + 1) = H_k - gamma), y = x^2/4:
///   K_0 = -(log(x/2) + gamma) I_0(x) + sum_k H_k y^k / k!^2,
///   K_1 = 1/x + log(x/2) I_1(x)
///         - x/4 sum_k (psi(k + 1) + psi(k + 2)) y^k / (k! (k + 1)!),
/// 20 terms each (the next is below 1e-40 at x = 1.5); at most a digit
/// cancels.
Value secondKindSeries(FloatMath &m, Value x, int nu) {
  std::array<double, 20> coefficients;
  double harmonic = 0, factorials = 1;
  for (int k = 0; k < 20; ++k) {
    if (k > 0) {
      factorials *= static_cast<double>(k) * (k + nu);
      harmonic += 1.0 / k;
    }
    double psiSum = nu == 0 ? harmonic : 2 * (harmonic - kEulerGamma) + 1.0 / (k + 1);
    coefficients[k] = psiSum / factorials;
  }
  Value y = m.mul(m.c(0.25), m.mul(x, x));
  Value logHalf = m.log(m.mul(m.c(0.5), x));
  Value sum = m.polynomial(y, coefficients);
  if (nu == 0)
    return m.add(m.neg(m.mul(m.add(logHalf, m.c(kEulerGamma)), modifiedBessel(m, x, 0, false))),
                 sum);
  return m.sub(m.add(m.div(m.c(1), x), m.mul(logHalf, modifiedBessel(m, x, 1, false))),
               m.mul(m.mul(m.c(0.25), x), sum));
}

/// exp(x) K_nu(x) = integral over t >= 0 of exp(-x (cosh t - 1)) cosh(nu t)
/// (nu in [0, 1]),
/// by the trapezoidal rule with step 0.1 over t in [0, 4]: the integrand
/// is analytic in a strip and decays double-exponentially, so the rule
/// converges geometrically (relative error below 1e-15 for x in (1.5, 30];
/// at t = 4 the integrand is below e^-39).
Value secondKindQuadrature(FloatMath &m, Value x, double nu) {
  Value sum = m.c(0);
  for (int k = 0; k < kKNodes; ++k) {
    double t = k * kKStep;
    double weight = (k == 0 ? 0.5 : 1.0) * std::cosh(nu * t) * kKStep;
    sum = m.add(sum, m.mul(m.c(weight), m.exp(m.mul(x, m.c(1 - std::cosh(t))))));
  }
  return sum;
}

/// exp(x) K_nu(x) ~ sqrt(pi / 2x) sum_k prod_j (4 nu^2 - (2j - 1)^2) /
/// (k! (8x)^k), 25 terms (the smallest omitted one is below 1e-20 for
/// x > 30).
Value secondKindAsymptotic(FloatMath &m, Value x, double nu) {
  std::array<double, 25> terms;
  terms[0] = 1;
  for (int k = 1; k < 25; ++k)
    terms[k] = terms[k - 1] * (4.0 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
  return m.mul(m.sqrt(m.div(m.c(kPi / 2), x)), m.polynomial(m.div(m.c(1), x), terms));
}

/// K_nu(x), scaled by exp(x) when `scaled`, as eager's: inf at 0, NaN below
/// it; unscaled, it underflows to 0 past x = 745.
Value modifiedBesselSecondKind(FloatMath &m, Value x, int nu, bool scaled) {
  Value series = secondKindSeries(m, x, nu);
  Value quadrature = secondKindQuadrature(m, x, nu);
  Value asymptotic = secondKindAsymptotic(m, x, nu);
  Value scaledFar = m.select(m.le(x, m.c(kKQuadratureTo)), quadrature, asymptotic);
  Value near = m.le(x, m.c(kKSeriesTo));
  Value r = scaled ? m.select(near, m.mul(m.exp(x), series), scaledFar)
                   : m.select(near, series, m.mul(m.exp(m.neg(x)), scaledFar));
  r = m.where(m.lt(x, m.c(0)), kNaN, r);
  return m.where(m.eq(x, m.c(0)), kInf, r);
}

// --- Airy function ---------------------------------------------------------

/// Below this x, Ai takes its asymptotic series; up to kAiSeriesTo, its
/// Maclaurin series.
constexpr double kAiAsymptoticBelow = -8;
constexpr double kAiSeriesTo = 2;

/// Ai(x), with zeta = 2/3 |x|^(3/2):
///  - x in [-8, 2]: Ai(0) f(x) + Ai'(0) g(x), f and g's Maclaurin series in
///    x^3 over 30 terms (DLMF 9.4.1-3; at x = -8 the terms reach 1e5 of the
///    value, so its absolute error is 3e-11 there, 1e-16 near 0);
///  - x > 2: sqrt(x/3)/pi K_1/3(zeta), K's quadrature or asymptotic series;
///  - x < -8: (sin(zeta + pi/4) P - cos(zeta + pi/4) Q) / (sqrt(pi) |x|^1/4)
///    with P, Q the asymptotic series in 1/zeta (DLMF 9.7.9; 10 terms each,
///    the next below 1e-13 at x = -8).
/// 0 at +-inf (the limit; |x|^-1/4 bounds the oscillation), underflow past
/// x = 105.
Value airyAi(FloatMath &m, Value x) {
  std::array<double, 30> f, g;
  f[0] = g[0] = 1;
  for (int k = 1; k < 30; ++k) {
    f[k] = f[k - 1] / ((3.0 * k - 1) * (3.0 * k));
    g[k] = g[k - 1] / ((3.0 * k) * (3.0 * k + 1));
  }
  const double ai0 = 1 / (std::cbrt(9.0) * std::tgamma(2.0 / 3));
  const double aiPrime0 = -1 / (std::cbrt(3.0) * std::tgamma(1.0 / 3));
  Value cube = m.mul(x, m.mul(x, x));
  Value series = m.add(m.mul(m.c(ai0), m.polynomial(cube, f)),
                       m.mul(m.c(aiPrime0), m.mul(x, m.polynomial(cube, g))));

  Value a = m.abs(x);
  Value root = m.sqrt(a);
  Value zeta = m.mul(m.c(2.0 / 3), m.mul(a, root));
  Value quadrature = secondKindQuadrature(m, zeta, 1.0 / 3);
  Value asymptotic = secondKindAsymptotic(m, zeta, 1.0 / 3);
  Value scaledK = m.select(m.le(zeta, m.c(kKQuadratureTo)), quadrature, asymptotic);
  Value decaying = m.mul(m.mul(m.div(m.sqrt(m.div(a, m.c(3))), m.c(kPi)), scaledK),
                         m.exp(m.neg(zeta)));

  // u_k = (6k - 5)(6k - 3)(6k - 1) / ((2k - 1) 216 k) u_(k-1); P and Q take
  // the even and odd ones with alternating signs, in w = 1/zeta^2.
  std::array<double, 20> u;
  u[0] = 1;
  for (int k = 1; k < 20; ++k)
    u[k] = u[k - 1] * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216 * k);
  std::array<double, 10> even, odd;
  for (int k = 0; k < 10; ++k) {
    even[k] = (k % 2 ? -1 : 1) * u[2 * k];
    odd[k] = (k % 2 ? -1 : 1) * u[2 * k + 1];
  }
  Value inverse = m.div(m.c(1), zeta);
  Value w = m.mul(inverse, inverse);
  Value p = m.polynomial(w, even);
  Value q = m.mul(inverse, m.polynomial(w, odd));
  Value theta = m.add(zeta, m.c(kPi / 4));
  Value oscillating = m.div(m.sub(m.mul(m.sin(theta), p), m.mul(m.cos(theta), q)),
                            m.mul(m.c(std::sqrt(kPi)), m.sqrt(root)));

  Value r = m.select(m.le(x, m.c(kAiSeriesTo)), series, decaying);
  r = m.select(m.lt(x, m.c(kAiAsymptoticBelow)), oscillating, r);
  return m.where(m.eq(a, m.c(kInf)), 0, r);
}

// --- Spherical Bessel function ---------------------------------------------

/// j_0(x) = sin(x) / x, as eager's: 0 at +-inf, and below |x| = 1/2 the
/// Taylor series sum (-1)^k x^2k / (2k + 1)! over 9 terms (the next is
/// below 1e-22).
Value sphericalBesselJ0(FloatMath &m, Value x) {
  std::array<double, 9> taylor;
  taylor[0] = 1;
  for (int k = 1; k < 9; ++k)
    taylor[k] = -taylor[k - 1] / ((2.0 * k) * (2.0 * k + 1));
  Value a = m.abs(x);
  Value series = m.polynomial(m.mul(x, x), taylor);
  Value ratio = m.div(m.sin(x), x);
  Value r = m.select(m.lt(a, m.c(0.5)), series, ratio);
  return m.where(m.eq(a, m.c(kInf)), 0, r);
}

} // namespace

// The bodies: each runs its function in f64 (inF64).
KILN_F64_BODY(i0Body, modifiedBessel(m, x[0], 0, false))
KILN_F64_BODY(i0eBody, modifiedBessel(m, x[0], 0, true))
KILN_F64_BODY(i1Body, modifiedBessel(m, x[0], 1, false))
KILN_F64_BODY(i1eBody, modifiedBessel(m, x[0], 1, true))
KILN_F64_BODY(k0Body, modifiedBesselSecondKind(m, x[0], 0, false))
KILN_F64_BODY(k0eBody, modifiedBesselSecondKind(m, x[0], 0, true))
KILN_F64_BODY(k1Body, modifiedBesselSecondKind(m, x[0], 1, false))
KILN_F64_BODY(k1eBody, modifiedBesselSecondKind(m, x[0], 1, true))
KILN_F64_BODY(j0Body, m.libm("j0", x[0]))
KILN_F64_BODY(j1Body, m.libm("j1", x[0]))
KILN_F64_BODY(y0Body, m.libm("y0", x[0]))
KILN_F64_BODY(y1Body, m.libm("y1", x[0]))
KILN_F64_BODY(sphericalJ0Body, sphericalBesselJ0(m, x[0]))
KILN_F64_BODY(airyAiBody, airyAi(m, x[0]))

} // namespace kiln::aten
