//===- ComplexMath.cpp - complex products and elementary functions --------===//
//
// This file implements the complex ops that mix a value's parts: matrix
// products (mm, bmm, addmm), products over dims (prod), and the elementary
// functions (exp, log, sqrt, the trigonometric and hyperbolic functions and
// their inverses, sigmoid, reciprocal, pow) on (real, imaginary) pairs.
//
// The elementary functions are computed from their real parts' functions
// by the textbook identities, in double precision for complex64 as for
// complex128 (the complex64 results are their f32 roundings):
//   exp(a+bi) = e^a (cos b + i sin b)      log z = log|z| + i atan2(b, a)
//     (past a = 709, e^(a - 709) e^709: e^a alone overflows first)
//   sin z = sin a cosh b + i cos a sinh b   cos z = cos a cosh b - i sin a sinh b
//   sinh z = sinh a cos b + i cosh a sin b  cosh z = cosh a cos b + i sinh a sin b
//     (past |x| = 709, cosh x and |sinh x| as e^(|x| - 709) e^709 / 2, and
//     past 1418 as e^(|x| - 1418) e^709 e^709 / 2, the small cosine or
//     sine times the constants first, as C scales)
//   tanh z = (sinh a cosh a + i sin b cos b) / (sinh^2 a + cos^2 b), sign a
//            beyond |a| > 20
//   atanh z = log1p(4a / ((1-a)^2 + b^2)) / 4 + i atan2(2b, 1 - a^2 - b^2) / 2
//   sqrt: the principal root, t = sqrt((|z| + |a|) / 2)
//   asinh z = log(z + sqrt(z^2 + 1)) (odd: evaluated for a >= 0)
//   acosh z = log(z + sqrt(z + 1) sqrt(z - 1))
//   asin z = -i asinh(iz), acos z = pi/2 - asin z, atan z = -i atanh(iz),
//   tan z = -i tanh(iz)
//   pow(x, y) = exp(y log x); for x = 0 what glibc's cpow gives eager;
//     x^2, x^3, x^0.5, x^-0.5, x^-1, x^-2 by products and roots, as eager
// |z| scales by max(|a|, |b|) as hypot does; a zero part's sign picks the
// side of a branch cut as C's signbit; below |z| = 1e-4 asinh (and asin
// through it) is its series z - z^3/6 + 3 z^5/40, where the log of 1 + tiny
// would lose the result's relative precision. Known gap against libm
// (PyTorch's reference): acos near 1 loses digits (pi/2 - asin, as eager's
// vectorized acos also computes it). Where a part is zero, exp,
// sin, cos, sinh and cosh keep the other part's result exact and give the
// zero the sign C gives it (exp(800 + 0i) is (inf, 0), not (inf, NaN));
// with both parts infinite or NaN they may differ from C's special cases.
//
// prod multiplies halves of a dim pairwise until one entry is left: the
// products of c10::complex, in a different order than eager's loop.
// logcumsumexp is one aten.logcumsumexp of the pairs, which the linalg
// lowering runs as eager's loop of complex log-add-exp steps (Scans.cpp).
//
//===----------------------------------------------------------------------===//
#include "ComplexPairs.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// True where `x` has its sign bit set (-0.0 included, as C's signbit).
Value signBit(PartMath &m, Value x) {
  Value zero = m.number(0.0);
  Value negativeZero = m.test("logical_and", {m.test("eq", {x, zero}),
                                              m.test("lt", {m.div(m.number(1.0), x), zero})});
  return m.test("logical_or", {m.test("lt", {x, zero}), negativeZero});
}

Parts cmul(PartMath &m, Parts x, Parts y) {
  return {m.sub(m.mul(x.re, y.re), m.mul(x.im, y.im)),
          m.add(m.mul(x.re, y.im), m.mul(x.im, y.re))};
}
Parts cadd(PartMath &m, Parts x, Parts y) { return {m.add(x.re, y.re), m.add(x.im, y.im)}; }
Parts csub(PartMath &m, Parts x, Parts y) { return {m.sub(x.re, y.re), m.sub(x.im, y.im)}; }
/// i z and -i z.
Parts timesI(PartMath &m, Parts z) { return {m.neg(z.im), z.re}; }
Parts timesMinusI(PartMath &m, Parts z) { return {z.im, m.neg(z.re)}; }

/// `x` where `y` is zero (either sign), else `otherwise`: a part that C's
/// functions keep exact when the other part is 0 (an overflowing factor
/// times sin 0 would be NaN).
Value whereZero(PartMath &m, Value y, Value x, Value otherwise) {
  return m.where(m.test("eq", {y, m.number(0.0)}), x, otherwise);
}

/// `x`, negated where `flip` holds: a zero part's sign as C gives it.
Value negatedWhere(PartMath &m, Value flip, Value x) { return m.where(flip, m.neg(x), x); }

/// Where e^x overflows double and e^x times a cosine or sine may not:
/// past it the functions take e^(x - kShift) and multiply in the constant
/// e^kShift last (one rounding more, so only there).
constexpr double kShift = 709.0;

Parts cexp(PartMath &m, Parts z) {
  Value far = m.test("gt", {z.re, m.number(kShift)});
  Value e = m.exp(m.sub(z.re, m.where(far, m.number(kShift), m.number(0.0))));
  Value factor = m.where(far, m.number(std::exp(kShift)), m.number(1.0));
  Value re = m.mul(m.mul(e, m.fn("cos", z.im)), factor);
  Value im = m.mul(m.mul(e, m.fn("sin", z.im)), factor);
  return {re, whereZero(m, z.im, z.im, im)};
}

Parts clog(PartMath &m, Parts z) {
  return {m.fn("log", modulus(m, z)), m.fn("atan2", {z.im, z.re})};
}

Parts csqrt(PartMath &m, Parts z) {
  Value absA = m.fn("abs", z.re);
  Value t = m.fn("sqrt", m.scale(m.add(modulus(m, z), absA), 0.5));
  Value isZero = m.test("eq", {t, m.number(0.0)});
  Value safeT = m.where(isZero, m.number(1.0), t);
  Value other = m.div(z.im, m.scale(safeT, 2.0)); // b / 2t
  Value nonNegative = m.test("ge", {z.re, m.number(0.0)});
  Value negativeIm = signBit(m, z.im); // sqrt(a - 0i) is conj(sqrt(a + 0i))
  Value re = m.where(nonNegative, t, m.fn("abs", other));
  Value im = m.where(nonNegative, other, m.where(negativeIm, m.neg(t), t));
  // sqrt(0 + bi) with t = 0 only for b = 0: (0, b).
  return {m.where(isZero, m.number(0.0), re), m.where(isZero, z.im, im)};
}

/// 1 / z by c10's quotient.
Parts creciprocal(NodeImporter &n, PartMath &m, RankedTensorType pairs, Parts z) {
  Value q = complexQuotient(n, pairs, complexConstant(n, pairs.getElementType(), {1.0, 0.0}),
                            pack(n, z.re, z.im));
  return {realPart(n, q), imagPart(n, q)};
}

/// cosh x and sinh x for products with a cosine or sine c of the other
/// part: (cosh x) c is times(cosh, c) = ((c scale) scale2) cosh. As C
/// scales: past |x| = kShift, where cosh x overflows and (cosh x) c may
/// not, cosh is e^(|x| - kShift), sinh that with x's sign, and `scale` the
/// constant e^kShift / 2; past 2 kShift, where e^(|x| - kShift) overflows
/// too, cosh is e^(|x| - 2 kShift) and `scale2` e^kShift. Elsewhere both
/// scales are 1 (exact products).
struct Hyperbolic {
  Value cosh, sinh, scale, scale2;

  Value times(PartMath &m, Value h, Value c) const {
    return m.mul(m.mul(m.mul(c, scale), scale2), h);
  }
};

Hyperbolic hyperbolic(PartMath &m, Value x) {
  Value magnitude = m.fn("abs", x);
  Value far = m.test("gt", {magnitude, m.number(kShift)});
  Value farther = m.test("gt", {magnitude, m.number(2 * kShift)});
  Value shift = m.where(farther, m.number(2 * kShift), m.number(kShift));
  Value shifted = m.exp(m.sub(magnitude, shift));
  return {m.where(far, shifted, m.fn("cosh", x)),
          m.where(far, negatedWhere(m, signBit(m, x), shifted), m.fn("sinh", x)),
          m.where(far, m.number(std::exp(kShift) / 2), m.number(1.0)),
          m.where(farther, m.number(std::exp(kShift)), m.number(1.0))};
}

// With a zero part, C's functions (and eager) keep the other part's
// result exact, and give the zero's sign as the product's would be: a
// cosh or sinh that overflows times sin 0 is 0 there, not NaN.
Parts csinh(PartMath &m, Parts z) {
  Hyperbolic h = hyperbolic(m, z.re);
  Value im = h.times(m, h.cosh, m.fn("sin", z.im));
  return {h.times(m, h.sinh, m.fn("cos", z.im)), whereZero(m, z.im, z.im, im)};
}
Parts ccosh(PartMath &m, Parts z) {
  Hyperbolic h = hyperbolic(m, z.re);
  Value im = h.times(m, h.sinh, m.fn("sin", z.im));
  Value zeroIm = negatedWhere(m, signBit(m, z.re), z.im); // sinh a times +-0
  return {h.times(m, h.cosh, m.fn("cos", z.im)), whereZero(m, z.im, zeroIm, im)};
}
Parts csin(PartMath &m, Parts z) {
  Hyperbolic h = hyperbolic(m, z.im);
  Value re = h.times(m, h.cosh, m.fn("sin", z.re));
  Value cosA = m.fn("cos", z.re);
  Value im = h.times(m, h.sinh, cosA);
  Value zeroIm = negatedWhere(m, m.test("lt", {cosA, m.number(0.0)}), z.im);
  return {whereZero(m, z.re, z.re, re), whereZero(m, z.im, zeroIm, im)};
}
Parts ccos(PartMath &m, Parts z) {
  Hyperbolic h = hyperbolic(m, z.im);
  Value sinA = m.fn("sin", z.re);
  Value im = m.neg(h.times(m, h.sinh, sinA));
  Value zeroIm = negatedWhere(m, m.test("gt", {sinA, m.number(0.0)}), z.im);
  // -(a sinh b) for a = +-0: -a where b's sign bit is clear.
  Value zeroRe = negatedWhere(m, m.test("logical_not", {signBit(m, z.im)}), z.re);
  return {h.times(m, h.cosh, m.fn("cos", z.re)),
          whereZero(m, z.re, zeroRe, whereZero(m, z.im, zeroIm, im))};
}

Parts ctanh(PartMath &m, Parts z) {
  // (sinh a cosh a + i sin b cos b) / (sinh^2 a + cos^2 b), as glibc: no
  // cancellation in the denominator near a pole (a ~ 0, b ~ pi/2).
  Value sh = m.fn("sinh", z.re), ch = m.fn("cosh", z.re);
  Value sn = m.fn("sin", z.im), cs = m.fn("cos", z.im);
  Value d = m.add(m.mul(sh, sh), m.mul(cs, cs));
  Value re = m.div(m.mul(sh, ch), d), im = m.div(m.mul(sn, cs), d);
  // Far from the imaginary axis sinh a overflows: tanh is sign a to
  // rounding there, the imaginary part 4 sin b cos b e^(-2|a|).
  Value absA = m.fn("abs", z.re);
  Value far = m.test("gt", {absA, m.number(20.0)});
  Value farIm = m.scale(m.mul(m.mul(sn, cs), m.exp(m.neg(m.scale(absA, 2.0)))), 4.0);
  return {m.where(far, m.fn("sign", z.re), re), m.where(far, farIm, im)};
}

Parts casinh(PartMath &m, Parts z) {
  // Odd: for a sign bit set (-0 included), -asinh(-z), which avoids the
  // cancellation in z + root and keeps the cut's side.
  Value s = m.where(signBit(m, z.re), m.number(-1.0), m.number(1.0));
  Parts w{m.mul(s, z.re), m.mul(s, z.im)};
  Parts square = cmul(m, w, w);
  // 1 joins the real part only (an imaginary +0 would move -0 across the cut).
  Parts root = csqrt(m, {m.add(square.re, m.number(1.0)), square.im});
  Parts r = clog(m, cadd(m, w, root));
  // Near 0 that is the log of 1 + tiny, which keeps only the digits of w
  // past 1: the series w - w^3/6 + 3 w^5/40 instead (below |w| = 1e-4 its
  // next term is under 1e-29 of it). A zero part stays that zero, sign and
  // all (the series' subtractions would turn -0 into +0).
  Value small = m.test("lt", {modulus(m, w), m.number(1e-4)});
  Parts cube = cmul(m, square, w), fifth = cmul(m, cube, square);
  Parts series = cadd(m, csub(m, w, {m.scale(cube.re, 1.0 / 6), m.scale(cube.im, 1.0 / 6)}),
                      {m.scale(fifth.re, 3.0 / 40), m.scale(fifth.im, 3.0 / 40)});
  Value re = m.where(small, whereZero(m, w.re, w.re, series.re), r.re);
  Value im = m.where(small, whereZero(m, w.im, w.im, series.im), r.im);
  return {m.mul(s, re), m.mul(s, im)};
}

Parts cacosh(PartMath &m, Parts z) {
  Parts one{m.number(1.0), m.number(0.0)};
  Parts root = cmul(m, csqrt(m, cadd(m, z, one)), csqrt(m, csub(m, z, one)));
  return clog(m, cadd(m, z, root));
}

Parts catanh(PartMath &m, Parts z) {
  // (1/4) log1p(4a / ((1 - a)^2 + b^2)) + (i/2) atan2(2b, (1 - a)(1 + a) - b^2):
  // log1p keeps small arguments' precision.
  Value one = m.number(1.0);
  Value oneMinus = m.sub(one, z.re);
  Value d = m.add(m.mul(oneMinus, oneMinus), m.mul(z.im, z.im));
  Value re = m.scale(m.fn("log1p", m.div(m.scale(z.re, 4.0), d)), 0.25);
  Value x = m.sub(m.mul(oneMinus, m.add(one, z.re)), m.mul(z.im, z.im));
  Value im = m.scale(m.fn("atan2", {m.scale(z.im, 2.0), x}), 0.5);
  return {re, im};
}

Parts casin(PartMath &m, Parts z) { return timesMinusI(m, casinh(m, timesI(m, z))); }
Parts catan(PartMath &m, Parts z) { return timesMinusI(m, catanh(m, timesI(m, z))); }
Parts ctan(PartMath &m, Parts z) { return timesMinusI(m, ctanh(m, timesI(m, z))); }
Parts cacos(PartMath &m, Parts z) {
  Parts s = casin(m, z);
  return {m.sub(m.number(std::numbers::pi / 2), s.re), m.neg(s.im)};
}

Parts cexpm1(PartMath &m, Parts z) {
  // e^a cos b - 1 = expm1(a) cos b - 2 sin^2(b / 2): no cancellation near 0.
  Value half = m.fn("sin", m.scale(z.im, 0.5));
  Value re = m.sub(m.mul(m.fn("expm1", z.re), m.fn("cos", z.im)),
                   m.scale(m.mul(half, half), 2.0));
  return {re, m.mul(m.exp(z.re), m.fn("sin", z.im))};
}

Parts clog1p(PartMath &m, Parts z) {
  // As c10: for |z| < 0.5, |1 + z|^2 = 1 + (2a + a^2 + b^2) and log1p of
  // the bracket halved; elsewhere log(1 + z).
  Value inner = m.add(m.scale(z.re, 2.0), m.add(m.mul(z.re, z.re), m.mul(z.im, z.im)));
  Value im = m.fn("atan2", {z.im, m.add(m.number(1.0), z.re)});
  Value small = m.test("lt", {modulus(m, z), m.number(0.5)});
  Parts far = clog(m, {m.add(m.number(1.0), z.re), z.im});
  return {m.where(small, m.scale(m.fn("log1p", inner), 0.5), far.re), im};
}

using UnaryFn = std::function<Parts(NodeImporter &, PartMath &, RankedTensorType, Parts)>;

/// A complex unary function of argument "self", in double precision.
OpHandler unary(UnaryFn f) {
  return [f = std::move(f)](NodeImporter &n) -> absl::StatusOr<Values> {
    ASSIGN_OR_RETURN(auto result, pairResult(n));
    auto [type, element] = result;
    ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
    if (complexShape(self) != type.getShape().drop_back())
      return n.error("the declared result has another shape");
    Type f64 = n.b().getF64Type();
    Value wide = convertElements(n, self, f64);
    RankedTensorType widePairs = typeOf(wide);
    PartMath m(n, RankedTensorType::get(complexShape(wide), f64));
    Parts r = f(n, m, widePairs, {realPart(n, wide), imagPart(n, wide)});
    return Values{convertElements(n, pack(n, r.re, r.im), element)};
  };
}

template <Parts (*F)(PartMath &, Parts)>
OpHandler unary() {
  return unary([](NodeImporter &, PartMath &m, RankedTensorType, Parts z) { return F(m, z); });
}

/// log to base `base`: log z / ln(base).
OpHandler logBase(double base) {
  return unary([base](NodeImporter &, PartMath &m, RankedTensorType, Parts z) {
    Parts l = clog(m, z);
    double k = 1.0 / std::log(base);
    return Parts{m.scale(l.re, k), m.scale(l.im, k)};
  });
}

/// x^e for the exponents eager computes without exp(e log x): x^0 = 1 and
/// x^1 = x everywhere (zero, inf and NaN too), and 2, 3, 0.5, -0.5, -1, -2
/// by products and roots (z z, z z z, sqrt, 1 / sqrt, 1 / z, 1 / (z z)),
/// which differ from exp(e log z) at infinities ((inf + 1i)^2 is
/// (inf, inf)) and in the last digits; nullopt for other exponents.
std::optional<Parts> eagerPower(NodeImporter &n, PartMath &m, RankedTensorType pairs,
                                Parts z, std::complex<double> exponent) {
  if (exponent.imag() != 0.0)
    return std::nullopt;
  double e = exponent.real();
  if (e == 0.0) {
    ArrayRef<int64_t> shape = pairs.getShape().drop_back();
    Type f64 = pairs.getElementType();
    return Parts{n.constant(f64, 1.0, shape), n.constant(f64, 0.0, shape)};
  }
  if (e == 1.0)
    return z;
  if (e == 2.0)
    return cmul(m, z, z);
  if (e == 3.0)
    return cmul(m, cmul(m, z, z), z);
  if (e == 0.5)
    return csqrt(m, z);
  if (e == -0.5)
    return creciprocal(n, m, pairs, csqrt(m, z));
  if (e == -1.0)
    return creciprocal(n, m, pairs, z);
  if (e == -2.0)
    return creciprocal(n, m, pairs, cmul(m, z, z));
  return std::nullopt;
}

/// pow(x, y) = exp(y log x), glibc's cpow at x = 0; either may be a complex or
/// real tensor or number.
absl::StatusOr<Values> pow(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  Type f64 = n.b().getF64Type();
  RankedTensorType pairs = type.clone(f64);
  ASSIGN_OR_RETURN(Value x, pairsOf(n, "self", f64));
  x = expandPairs(n, x, pairs);
  PartMath m(n, RankedTensorType::get(type.getShape().drop_back(), f64));
  Parts base{realPart(n, x), imagPart(n, x)};
  if (n.opName() == "aten.pow.Tensor_Scalar") {
    ASSIGN_OR_RETURN(std::complex<double> exponent, n.complexAttr("exponent"));
    if (std::optional<Parts> r = eagerPower(n, m, pairs, base, exponent))
      return Values{convertElements(n, pack(n, r->re, r->im), element)};
  }
  ASSIGN_OR_RETURN(Value y, pairsOf(n, "exponent", f64));
  y = expandPairs(n, y, pairs);
  Parts r = cexp(m, cmul(m, {realPart(n, y), imagPart(n, y)}, clog(m, base)));
  // A zero base: 0 for Re y > 0, (inf, NaN) for Re y < 0, NaN otherwise,
  // as glibc's cpow gives eager (exp of y times (-inf, 0) under C's
  // complex arithmetic).
  Value zero = m.test("logical_and", {m.test("eq", {base.re, m.number(0.0)}),
                                      m.test("eq", {base.im, m.number(0.0)})});
  Value c = realPart(n, y);
  Value positive = m.test("gt", {c, m.number(0.0)});
  Value negative = m.test("lt", {c, m.number(0.0)});
  double nan = std::numeric_limits<double>::quiet_NaN();
  Value zeroRe = m.where(positive, m.number(0.0),
                         m.where(negative, m.number(std::numeric_limits<double>::infinity()),
                                 m.number(nan)));
  Value zeroIm = m.where(positive, m.number(0.0), m.number(nan));
  r = {m.where(zero, zeroRe, r.re), m.where(zero, zeroIm, r.im)};
  return Values{convertElements(n, pack(n, r.re, r.im), element)};
}

// --- products -------------------------------------------------------------

/// (A + iB)(C + iD) = (AC - BD) + i(AD + BC) by four real products.
template <typename ProductOp>
Value matrixProduct(NodeImporter &n, RankedTensorType type, Value x, Value y) {
  auto part = RankedTensorType::get(type.getShape().drop_back(), type.getElementType());
  auto product = [&](Value p, Value q) {
    return n.b().create<ProductOp>(n.loc(), part, p, q).getResult();
  };
  PartMath m(n, part);
  Value a = realPart(n, x), b = imagPart(n, x), c = realPart(n, y), d = imagPart(n, y);
  Value ac = product(a, c), bd = product(b, d);
  Value re = m.sub(ac, bd);
  Value ad = product(a, d), bc = product(b, c);
  Value im = m.add(ad, bc);
  return pack(n, re, im);
}

template <typename ProductOp>
absl::StatusOr<Values> matrixProductOp(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value x, pairsOf(n, "self", element));
  ASSIGN_OR_RETURN(Value y, pairsOf(n, "mat2", element));
  return Values{matrixProduct<ProductOp>(n, type, x, y)};
}

/// addmm: beta * self + alpha * (mat1 @ mat2), beta and alpha complex
/// numbers; beta = 0 ignores self (NaN included), as eager does.
absl::StatusOr<Values> addmm(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value x, pairsOf(n, "mat1", element));
  ASSIGN_OR_RETURN(Value y, pairsOf(n, "mat2", element));
  ASSIGN_OR_RETURN(std::complex<double> beta, n.complexAttr("beta", 1.0));
  ASSIGN_OR_RETURN(std::complex<double> alpha, n.complexAttr("alpha", 1.0));
  Value product = matrixProduct<aten::MmOp>(n, type, x, y);
  if (alpha != 1.0)
    product = scaleComplex(n, product, alpha);
  if (beta == 0.0)
    return Values{product};
  ASSIGN_OR_RETURN(Value self, pairsOf(n, "self", element));
  Value bias = expandPairs(n, self, type);
  if (beta != 1.0)
    bias = scaleComplex(n, bias, beta);
  return Values{n.b()
                    .create<aten::AddOp>(n.loc(), type, bias, product,
                                         n.b().getF64FloatAttr(1.0))
                    .getResult()};
}

/// prod.default and prod.dim_int on complex tensors.
absl::StatusOr<Values> prod(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  self = convertElements(n, self, element);
  int64_t rank = complexRank(self);
  if (typeOf(self).getNumElements() == 0)
    return n.unimplemented("prod of a complex tensor with no elements");
  if (!n.has("dim")) {
    int64_t count = typeOf(self).getNumElements() / 2;
    Value all = productAlong(n, viewValue(n, self, {count, 2}), 0);
    return Values{viewValue(n, all, type.getShape())};
  }
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, std::max<int64_t>(rank, 1)));
  if (rank == 0)
    return Values{viewValue(n, self, type.getShape())};
  Value reduced = productAlong(n, self, dim);
  if (typeOf(reduced).getNumElements() != type.getNumElements())
    return n.error("the declared prod result has another number of elements");
  return Values{viewValue(n, reduced, type.getShape())};
}

/// logcumsumexp of a complex tensor: one aten.logcumsumexp {complex} of its
/// pairs, eager's complex log-add-exp step by step (a 0-d tensor is its
/// own scan).
absl::StatusOr<Values> logCumSumExp(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  self = convertElements(n, self, element);
  if (typeOf(self).getShape() != type.getShape())
    return n.error("the result must have the input's shape");
  int64_t rank = complexRank(self);
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, std::max<int64_t>(rank, 1)));
  if (rank == 0 || type.getNumElements() == 0)
    return Values{self};
  return Values{n.b().create<aten::LogCumSumExpOp>(n.loc(), type, self,
                                                   n.b().getI64IntegerAttr(dim),
                                                   n.b().getUnitAttr())};
}

} // namespace

void addComplexMathHandlers(OpHandlerTable &t) {
  t["aten.exp.default"] = unary<cexp>();
  t["aten.log.default"] = unary<clog>();
  t["aten.log2.default"] = logBase(2.0);
  t["aten.log10.default"] = logBase(10.0);
  t["aten.log1p.default"] = unary<clog1p>();
  t["aten.expm1.default"] = unary<cexpm1>();
  t["aten.sqrt.default"] = unary<csqrt>();
  t["aten.rsqrt.default"] = unary(
      [](NodeImporter &n, PartMath &m, RankedTensorType pairs, Parts z) {
        return creciprocal(n, m, pairs, csqrt(m, z));
      });
  t["aten.reciprocal.default"] = unary(
      [](NodeImporter &n, PartMath &m, RankedTensorType pairs, Parts z) {
        return creciprocal(n, m, pairs, z);
      });
  t["aten.sigmoid.default"] = unary(
      [](NodeImporter &n, PartMath &m, RankedTensorType pairs, Parts z) {
        Parts e = cexp(m, {m.neg(z.re), m.neg(z.im)});
        return creciprocal(n, m, pairs, {m.add(m.number(1.0), e.re), e.im});
      });
  t["aten.sin.default"] = unary<csin>();
  t["aten.cos.default"] = unary<ccos>();
  t["aten.tan.default"] = unary<ctan>();
  t["aten.sinh.default"] = unary<csinh>();
  t["aten.cosh.default"] = unary<ccosh>();
  t["aten.tanh.default"] = unary<ctanh>();
  t["aten.asin.default"] = unary<casin>();
  t["aten.acos.default"] = unary<cacos>();
  t["aten.atan.default"] = unary<catan>();
  t["aten.asinh.default"] = unary<casinh>();
  t["aten.acosh.default"] = unary<cacosh>();
  t["aten.atanh.default"] = unary<catanh>();
  for (const char *op : {"aten.pow.Tensor_Tensor", "aten.pow.Tensor_Scalar",
                         "aten.pow.Scalar"})
    t[op] = pow;
  t["aten.mm.default"] = matrixProductOp<aten::MmOp>;
  t["aten.bmm.default"] = matrixProductOp<aten::BmmOp>;
  t["aten.addmm.default"] = addmm;
  t["aten.prod.default"] = prod;
  t["aten.prod.dim_int"] = prod;
  t["aten.logcumsumexp.default"] = logCumSumExp;
}

} // namespace kiln
