//===- PointwiseBodies.cpp - scalar bodies of aten.pointwise functions ----===//
//
// This file implements the lowering table of aten.pointwise: one row per
// function with its compute type, domain and scalar body. Integer division
// and remainder never trap: a zero divisor yields 0 (PyTorch raises), and
// INT_MIN / -1 wraps.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "MatrixLoops.h"
#include "PointwiseTable.h"
#include "RandomBodies.h"
#include "ScalarLoops.h"
#include "SpecialFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace kiln::aten {
namespace {

using Args = ValueRange;
using Scalars = ArrayRef<double>;

bool isF(Value v) { return isa<FloatType>(v.getType()); }
bool isBool(Value v) { return v.getType().isInteger(1); }
Value cst(OpBuilder &b, Location l, Value like, double v) {
  return scalarConstant(b, l, like.getType(), v);
}

template <typename MathOp>
Value unaryMath(OpBuilder &b, Location l, Args a, Scalars) {
  return b.create<MathOp>(l, a[0]);
}

Value maxV(OpBuilder &b, Location l, Value x, Value y) {
  if (isF(x))
    return b.create<arith::MaximumFOp>(l, x, y);
  return isBool(x) ? b.create<arith::OrIOp>(l, x, y).getResult()
                   : b.create<arith::MaxSIOp>(l, x, y).getResult();
}
Value minV(OpBuilder &b, Location l, Value x, Value y) {
  if (isF(x))
    return b.create<arith::MinimumFOp>(l, x, y);
  return isBool(x) ? b.create<arith::AndIOp>(l, x, y).getResult()
                   : b.create<arith::MinSIOp>(l, x, y).getResult();
}
Value fcmp(OpBuilder &b, Location l, arith::CmpFPredicate p, Value x, Value y) {
  return b.create<arith::CmpFOp>(l, p, x, y);
}
Value icmp(OpBuilder &b, Location l, arith::CmpIPredicate p, Value x, Value y) {
  return b.create<arith::CmpIOp>(l, p, x, y);
}
Value sel(OpBuilder &b, Location l, Value c, Value x, Value y) {
  return b.create<arith::SelectOp>(l, c, x, y);
}

/// relu6(x + 3) / 6, shared by hardsigmoid and hardswish.
Value hardsigmoidOf(OpBuilder &b, Location l, Value x) {
  Value shifted = b.create<arith::AddFOp>(l, x, cst(b, l, x, 3.0));
  Value clamped = b.create<arith::MinimumFOp>(
      l, b.create<arith::MaximumFOp>(l, shifted, cst(b, l, x, 0.0)),
      cst(b, l, x, 6.0));
  return b.create<arith::DivFOp>(l, clamped, cst(b, l, x, 6.0));
}

Value softplusOf(OpBuilder &b, Location l, Value x) {
  return b.create<math::Log1pOp>(l, b.create<math::ExpOp>(l, x));
}

/// A divisor that never traps: 0 and -1 become 1 (callers fix -1 up).
Value safeDivisor(OpBuilder &b, Location l, Value y) {
  Value bad = b.create<arith::OrIOp>(
      l, icmp(b, l, arith::CmpIPredicate::eq, y, cst(b, l, y, 0)),
      icmp(b, l, arith::CmpIPredicate::eq, y, cst(b, l, y, -1)));
  return sel(b, l, bad, cst(b, l, y, 1), y);
}
Value isMinusOne(OpBuilder &b, Location l, Value y) {
  return icmp(b, l, arith::CmpIPredicate::eq, y, cst(b, l, y, -1));
}
Value negI(OpBuilder &b, Location l, Value x) {
  return b.create<arith::SubIOp>(l, cst(b, l, x, 0), x);
}

/// True where a shift amount is outside [0, bits of x's type).
Value shiftOutOfRange(OpBuilder &b, Location l, Value x, Value y) {
  int64_t bits = x.getType().getIntOrFloatBitWidth();
  return b.create<arith::OrIOp>(
      l, icmp(b, l, arith::CmpIPredicate::slt, y, cst(b, l, y, 0)),
      icmp(b, l, arith::CmpIPredicate::sge, y,
           cst(b, l, y, static_cast<double>(bits))));
}

/// PyTorch's x << y: 0 when y is outside [0, bits).
Value shiftLeft(OpBuilder &b, Location l, Args a, Scalars) {
  Value x = a[0], y = a[1];
  Value outside = shiftOutOfRange(b, l, x, y);
  Value shifted =
      b.create<arith::ShLIOp>(l, x, sel(b, l, outside, cst(b, l, y, 0), y));
  return sel(b, l, outside, cst(b, l, x, 0), shifted);
}

/// PyTorch's x >> y (arithmetic): x >> (bits - 1) when y is outside
/// [0, bits). u8, carried zero-extended in i16, then gives 0 as eager does.
Value shiftRight(OpBuilder &b, Location l, Args a, Scalars) {
  Value x = a[0], y = a[1];
  int64_t bits = x.getType().getIntOrFloatBitWidth();
  Value outside = shiftOutOfRange(b, l, x, y);
  Value amount = sel(b, l, outside, cst(b, l, y, static_cast<double>(bits - 1)), y);
  return b.create<arith::ShRSIOp>(l, x, amount);
}

/// gcd as eager's calc_gcd: Euclid's algorithm on |x| and |y| in an
/// scf.while (at most ~92 steps for i64; the divisor is never 0). |INT_MIN|
/// wraps to INT_MIN, as std::abs does in eager.
Value gcdOf(OpBuilder &b, Location l, Value x, Value y) {
  Value zero = cst(b, l, x, 0);
  Value start[] = {b.create<math::AbsIOp>(l, x), b.create<math::AbsIOp>(l, y)};
  Carried last = whileLoop(
      b, l, start,
      [&](OpBuilder &nb, Location nl, ValueRange v) {
        return std::pair{icmp(nb, nl, arith::CmpIPredicate::ne, v[0], zero),
                         Carried(v.begin(), v.end())};
      },
      [&](OpBuilder &nb, Location nl, ValueRange v) {
        return Carried{nb.create<arith::RemSIOp>(nl, v[1], v[0]), v[0]};
      });
  return last[1];
}

Value gcd(OpBuilder &b, Location l, Args a, Scalars) { return gcdOf(b, l, a[0], a[1]); }

/// lcm as eager's: |x / gcd * y|, 0 when the gcd is 0. C++ multiplies
/// i8/i16 (and u8, carried in i16) in int and truncates after the
/// absolute value; wider types wrap first.
Value lcm(OpBuilder &b, Location l, Args a, Scalars) {
  Value g = gcdOf(b, l, a[0], a[1]);
  Value quotient = b.create<arith::DivSIOp>(l, a[0], safeDivisor(b, l, g));
  Value other = a[1];
  Type type = g.getType();
  if (type.getIntOrFloatBitWidth() < 32) {
    quotient = b.create<arith::ExtSIOp>(l, b.getI32Type(), quotient);
    other = b.create<arith::ExtSIOp>(l, b.getI32Type(), other);
  }
  Value product = b.create<math::AbsIOp>(l, b.create<arith::MulIOp>(l, quotient, other));
  if (product.getType() != type)
    product = b.create<arith::TruncIOp>(l, type, product);
  Value zero = cst(b, l, g, 0);
  return sel(b, l, icmp(b, l, arith::CmpIPredicate::eq, g, zero), zero, product);
}

/// Python-style remainder: the sign follows the divisor.
Value remainder(OpBuilder &b, Location l, Args a, Scalars) {
  Value x = a[0], y = a[1];
  Value zero = cst(b, l, x, 0);
  if (isF(x)) {
    Value r = b.create<arith::RemFOp>(l, x, y);
    Value fix = b.create<arith::AndIOp>(
        l, fcmp(b, l, arith::CmpFPredicate::ONE, r, zero),
        b.create<arith::XOrIOp>(l, fcmp(b, l, arith::CmpFPredicate::OLT, r, zero),
                                fcmp(b, l, arith::CmpFPredicate::OLT, y, zero)));
    return sel(b, l, fix, b.create<arith::AddFOp>(l, r, y), r);
  }
  Value r = b.create<arith::RemSIOp>(l, x, safeDivisor(b, l, y));
  Value fix = b.create<arith::AndIOp>(
      l, icmp(b, l, arith::CmpIPredicate::ne, r, zero),
      b.create<arith::XOrIOp>(l, icmp(b, l, arith::CmpIPredicate::slt, r, zero),
                              icmp(b, l, arith::CmpIPredicate::slt, y, zero)));
  return sel(b, l, fix, b.create<arith::AddIOp>(l, r, y), r);
}

Value fmod(OpBuilder &b, Location l, Args a, Scalars) {
  if (isF(a[0]))
    return b.create<arith::RemFOp>(l, a[0], a[1]);
  return b.create<arith::RemSIOp>(l, a[0], safeDivisor(b, l, a[1]));
}

Value divTrunc(OpBuilder &b, Location l, Args a, Scalars) {
  Value x = a[0], y = a[1];
  if (isF(x))
    return b.create<math::TruncOp>(l, b.create<arith::DivFOp>(l, x, y));
  Value q = b.create<arith::DivSIOp>(l, x, safeDivisor(b, l, y));
  return sel(b, l, isMinusOne(b, l, y), negI(b, l, x), q);
}

/// PyTorch's div_floor: exact floor of the quotient via fmod.
Value divFloor(OpBuilder &b, Location l, Args a, Scalars) {
  Value x = a[0], y = a[1];
  if (!isF(x)) {
    // Truncating quotient, one lower when inexact with operands of
    // opposite signs (arith.floordivsi has no LLVM lowering here).
    Value d = safeDivisor(b, l, y);
    Value q = b.create<arith::DivSIOp>(l, x, d);
    Value zero = cst(b, l, x, 0);
    Value inexact = icmp(b, l, arith::CmpIPredicate::ne,
                         b.create<arith::MulIOp>(l, q, d), x);
    Value opposite = b.create<arith::XOrIOp>(
        l, icmp(b, l, arith::CmpIPredicate::slt, x, zero),
        icmp(b, l, arith::CmpIPredicate::slt, d, zero));
    q = sel(b, l, b.create<arith::AndIOp>(l, inexact, opposite),
            b.create<arith::SubIOp>(l, q, cst(b, l, x, 1)), q);
    return sel(b, l, isMinusOne(b, l, y), negI(b, l, x), q);
  }
  Value zero = cst(b, l, x, 0.0);
  Value mod = b.create<arith::RemFOp>(l, x, y);
  Value div = b.create<arith::DivFOp>(l, b.create<arith::SubFOp>(l, x, mod), y);
  Value adjust = b.create<arith::AndIOp>(
      l, fcmp(b, l, arith::CmpFPredicate::UNE, mod, zero),
      b.create<arith::XOrIOp>(l, fcmp(b, l, arith::CmpFPredicate::OLT, y, zero),
                              fcmp(b, l, arith::CmpFPredicate::OLT, mod, zero)));
  div = sel(b, l, adjust, b.create<arith::SubFOp>(l, div, cst(b, l, x, 1.0)), div);
  Value floored = b.create<math::FloorOp>(l, div);
  Value roundUp = fcmp(b, l, arith::CmpFPredicate::OGT,
                       b.create<arith::SubFOp>(l, div, floored),
                       cst(b, l, x, 0.5));
  floored = sel(b, l, roundUp,
                b.create<arith::AddFOp>(l, floored, cst(b, l, x, 1.0)), floored);
  // A zero quotient keeps the sign of the true quotient; y == 0 gives x / y.
  Value signedZero = b.create<math::CopySignOp>(
      l, zero, b.create<arith::DivFOp>(l, x, y));
  Value isZero = fcmp(b, l, arith::CmpFPredicate::OEQ, div, zero);
  Value result = sel(b, l, isZero, signedZero, floored);
  return sel(b, l, fcmp(b, l, arith::CmpFPredicate::OEQ, y, zero),
             b.create<arith::DivFOp>(l, x, y), result);
}

/// Integer powers as eager computes them: repeated squaring in the integer
/// type, wrapping on overflow (unrolled over the exponent's bits, so the
/// loop body stays branch-free and vectorizes); a negative exponent gives 1
/// for base 1, -1 or 1 for base -1 (odd or even exponent), else 0.
Value integerPow(OpBuilder &b, Location l, Value base, Value exponent) {
  using P = arith::CmpIPredicate;
  Value one = cst(b, l, base, 1), zero = cst(b, l, base, 0);
  Value result = one, square = base;
  unsigned width = base.getType().getIntOrFloatBitWidth();
  for (unsigned bit = 0; bit + 1 < width; ++bit) {
    Value set = icmp(
        b, l, P::ne,
        b.create<arith::AndIOp>(
            l, b.create<arith::ShRSIOp>(l, exponent, cst(b, l, exponent, bit)),
            one),
        zero);
    result = b.create<arith::SelectOp>(
        l, set, b.create<arith::MulIOp>(l, result, square), result);
    if (bit + 2 < width)
      square = b.create<arith::MulIOp>(l, square, square);
  }
  Value odd = icmp(b, l, P::ne, b.create<arith::AndIOp>(l, exponent, one), zero);
  Value minusOne = cst(b, l, base, -1);
  Value ofMinusOne = b.create<arith::SelectOp>(l, odd, minusOne, one);
  Value negative = b.create<arith::SelectOp>(
      l, icmp(b, l, P::eq, base, one), one,
      b.create<arith::SelectOp>(l, icmp(b, l, P::eq, base, minusOne),
                                ofMinusOne, zero));
  return b.create<arith::SelectOp>(l, icmp(b, l, P::slt, exponent, zero),
                                   negative, result);
}

Value pow(OpBuilder &b, Location l, Args a, Scalars) {
  if (isF(a[0]))
    return b.create<math::PowFOp>(l, a[0], a[1]);
  return integerPow(b, l, a[0], castScalar(b, l, a[1], a[0].getType()));
}

/// atan2(y, x) with C's answers at y = x = 0 (+-0 for x = +0, +-pi for
/// x = -0, the sign of y), as eager returns them: MLIR's polynomial
/// approximation (kiln-approximate-math) gives NaN there.
Value atan2(OpBuilder &b, Location l, Args a, Scalars) {
  Value y = a[0], x = a[1];
  Value zero = cst(b, l, x, 0.0);
  Value bothZero = b.create<arith::AndIOp>(
      l, fcmp(b, l, arith::CmpFPredicate::OEQ, y, zero),
      fcmp(b, l, arith::CmpFPredicate::OEQ, x, zero));
  Value xNegative = fcmp(b, l, arith::CmpFPredicate::OLT,
                         b.create<math::CopySignOp>(l, cst(b, l, x, 1.0), x),
                         zero);
  Value atOrigin = b.create<math::CopySignOp>(
      l, b.create<arith::SelectOp>(l, xNegative, cst(b, l, x, M_PI), zero), y);
  return b.create<arith::SelectOp>(l, bothZero, atOrigin,
                                   b.create<math::Atan2Op>(l, y, x));
}

/// hypot(x, y) as C's: +inf when either is infinite (NaN or not), else the
/// decompositions' dlapy2 (MatrixLoops' hypotenuse: no square overflows or
/// underflows; 0 for two zeros; NaN from a NaN).
/// nextafter(x, y) on the float's bits, as C's and c10's (for f16/bf16):
/// NaN for a NaN operand, y when the bits are equal or both are zeros, the
/// smallest subnormal with y's sign from a zero, else one step of the bit
/// pattern away from zero when |x| > |y| or the signs differ, toward it
/// otherwise. Exact in every float type, so f16/bf16 stay unwidened.
Value nextafter(OpBuilder &b, Location l, Args a, Scalars) {
  Value x = a[0], y = a[1];
  unsigned width = x.getType().getIntOrFloatBitWidth();
  Type bits = b.getIntegerType(width);
  auto intConst = [&](APInt v) {
    return b.create<arith::ConstantOp>(l, b.getIntegerAttr(bits, v)).getResult();
  };
  Value xi = b.create<arith::BitcastOp>(l, bits, x);
  Value yi = b.create<arith::BitcastOp>(l, bits, y);
  Value signMask = intConst(APInt::getSignMask(width));
  Value magnitudeMask = intConst(APInt::getSignedMaxValue(width));
  Value zero = intConst(APInt(width, 0)), one = intConst(APInt(width, 1));
  Value absX = b.create<arith::AndIOp>(l, xi, magnitudeMask);
  Value absY = b.create<arith::AndIOp>(l, yi, magnitudeMask);
  Value signsDiffer = icmp(b, l, arith::CmpIPredicate::ne,
                           b.create<arith::AndIOp>(l, b.create<arith::XOrIOp>(l, xi, yi), signMask),
                           zero);
  Value away = b.create<arith::OrIOp>(
      l, icmp(b, l, arith::CmpIPredicate::ugt, absX, absY), signsDiffer);
  Value stepped = sel(b, l, away, b.create<arith::SubIOp>(l, xi, one),
                      b.create<arith::AddIOp>(l, xi, one));
  Value tiny = b.create<arith::OrIOp>(l, b.create<arith::AndIOp>(l, yi, signMask), one);
  Value fromZero = sel(b, l, icmp(b, l, arith::CmpIPredicate::eq, absY, zero), yi, tiny);
  Value result = sel(b, l, icmp(b, l, arith::CmpIPredicate::eq, absX, zero), fromZero, stepped);
  result = sel(b, l, icmp(b, l, arith::CmpIPredicate::eq, xi, yi), xi, result);
  Value unordered = fcmp(b, l, arith::CmpFPredicate::UNO, x, y);
  // NaN: x + y as C's; c10's f16/bf16 x + y rounds through f32, which
  // gives the canonical quiet NaN (0x7E00, 0x7FC0) whatever the payload.
  Value nan = width == 16 ? b.create<arith::ConstantOp>(
                                    l, b.getFloatAttr(x.getType(),
                                                      APFloat::getQNaN(cast<FloatType>(
                                                          x.getType()).getFloatSemantics())))
                                .getResult()
                          : b.create<arith::AddFOp>(l, x, y).getResult();
  return sel(b, l, unordered, nan, b.create<arith::BitcastOp>(l, x.getType(), result));
}

Value hypot(OpBuilder &b, Location l, Args a, Scalars) {
  Value inf = cst(b, l, a[0], INFINITY);
  Value infinite = b.create<arith::OrIOp>(
      l, fcmp(b, l, arith::CmpFPredicate::OEQ, b.create<math::AbsFOp>(l, a[0]), inf),
      fcmp(b, l, arith::CmpFPredicate::OEQ, b.create<math::AbsFOp>(l, a[1]), inf));
  return sel(b, l, infinite, inf, hypotenuse(b, l, a[0], a[1], Limits(b, l, a[0].getType())));
}

/// fmax/fmin: the float op that passes over a NaN operand (both NaN:
/// NaN); integers and bool as maximum/minimum.
template <typename FloatOp, Value (*Integer)(OpBuilder &, Location, Value, Value)>
Value passingNaN(OpBuilder &b, Location l, Args a, Scalars) {
  return isF(a[0]) ? b.create<FloatOp>(l, a[0], a[1]).getResult() : Integer(b, l, a[0], a[1]);
}

/// Whether x's sign bit is set: -0.0 and NaNs with the bit included, which
/// a comparison with 0 misses; negative integers; never for bool.
Value signbit(OpBuilder &b, Location l, Args a, Scalars) {
  Value x = a[0];
  if (isBool(x))
    return b.create<arith::ConstantOp>(l, b.getBoolAttr(false));
  if (isF(x)) {
    unsigned width = x.getType().getIntOrFloatBitWidth();
    x = b.create<arith::BitcastOp>(l, b.getIntegerType(width), x);
  }
  return icmp(b, l, arith::CmpIPredicate::slt, x, cst(b, l, x, 0));
}

Value clamp(OpBuilder &b, Location l, Args a, Scalars s) {
  Value x = a[0];
  if (!std::isnan(s[0]))
    x = maxV(b, l, x, cst(b, l, x, s[0]));
  if (!std::isnan(s[1]))
    x = minV(b, l, x, cst(b, l, x, s[1]));
  return x;
}

Value compare(OpBuilder &b, Location l, Value x, Value y, arith::CmpFPredicate f,
              arith::CmpIPredicate si, arith::CmpIPredicate ui) {
  if (isF(x))
    return fcmp(b, l, f, x, y);
  return icmp(b, l, isBool(x) ? ui : si, x, y);
}

#define CMP(NAME, F, SI, UI)                                                   \
  Value NAME(OpBuilder &b, Location l, Args a, Scalars) {                      \
    return compare(b, l, a[0], a[1], arith::CmpFPredicate::F,                  \
                   arith::CmpIPredicate::SI, arith::CmpIPredicate::UI);        \
  }
CMP(eq, OEQ, eq, eq)
CMP(ne, UNE, ne, ne)
CMP(lt, OLT, slt, ult)
CMP(le, OLE, sle, ule)
CMP(gt, OGT, sgt, ugt)
CMP(ge, OGE, sge, uge)
#undef CMP

const PointwiseLowering kRows[] = {
    {"sqrt", unaryMath<math::SqrtOp>},
    {"rsqrt", unaryMath<math::RsqrtOp>},
    {"log", unaryMath<math::LogOp>},
    {"log2", unaryMath<math::Log2Op>},
    {"log10", unaryMath<math::Log10Op>},
    {"log1p", unaryMath<math::Log1pOp>},
    {"exp2", unaryMath<math::Exp2Op>},
    {"expm1", unaryMath<math::ExpM1Op>},
    {"sin", unaryMath<math::SinOp>},
    {"cos", unaryMath<math::CosOp>},
    {"tan", unaryMath<math::TanOp>},
    // asin and acos: libm's in f64; f32's compute in f64 too
    // (kiln-approximate-math, AccurateTrigonometry.cpp).
    {"asin", unaryMath<math::AsinOp>},
    {"acos", unaryMath<math::AcosOp>},
    {"round_decimals",
     [](OpBuilder &b, Location l, Args a, Scalars s) -> Value {
       Value scale = cst(b, l, a[0], std::pow(10.0, s[0]));
       Value r = b.create<math::RoundEvenOp>(
           l, b.create<arith::MulFOp>(l, a[0], scale));
       return b.create<arith::DivFOp>(l, r, scale);
     }},
    {"atan", unaryMath<math::AtanOp>},
    {"sinh", unaryMath<math::SinhOp>},
    {"cosh", unaryMath<math::CoshOp>},
    {"asinh", unaryMath<math::AsinhOp>},
    {"acosh", unaryMath<math::AcoshOp>},
    {"atanh", unaryMath<math::AtanhOp>},
    {"erf", unaryMath<math::ErfOp>},
    {"lgamma", lgammaBody, kCallsLgamma},
    {"digamma", digammaBody},
    {"polygamma", polygammaBody},
    {"erfc", erfcBody, kCallsErfc},
    {"erfcx", erfcxBody, kCallsErfc},
    {"erfinv", erfinvBody, kCallsErfc},
    {"ndtri", ndtriBody, kCallsErfc},
    {"frexp_mantissa", frexpMantissaBody},
    {"frexp_exponent", frexpExponentBody},
    {"i0", i0Body},
    {"i0e", i0eBody},
    {"i1", i1Body},
    {"i1e", i1eBody},
    {"k0", k0Body},
    {"k0e", k0eBody},
    {"k1", k1Body},
    {"k1e", k1eBody},
    {"bessel_j0", j0Body, kCallsJ0},
    {"bessel_j1", j1Body, kCallsJ1},
    {"bessel_y0", y0Body, kCallsY0},
    {"bessel_y1", y1Body, kCallsY1},
    {"spherical_bessel_j0", sphericalJ0Body},
    {"airy_ai", airyAiBody},
    {"reciprocal",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::DivFOp>(l, cst(b, l, a[0], 1.0), a[0]);
     }},
    {"silu",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       Value x = a[0];
       Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, x));
       return b.create<arith::DivFOp>(
           l, x, b.create<arith::AddFOp>(l, cst(b, l, x, 1.0), e));
     }},
    {"hardsigmoid",
     [](OpBuilder &b, Location l, Args a, Scalars) {
       return hardsigmoidOf(b, l, a[0]);
     }},
    {"hardswish",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::MulFOp>(l, a[0], hardsigmoidOf(b, l, a[0]));
     }},
    {"mish",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::MulFOp>(
           l, a[0], b.create<math::TanhOp>(l, softplusOf(b, l, a[0])));
     }},
    {"softplus",
     [](OpBuilder &b, Location l, Args a, Scalars s) -> Value {
       Value scaled = b.create<arith::MulFOp>(l, a[0], cst(b, l, a[0], s[0]));
       Value soft = b.create<arith::DivFOp>(l, softplusOf(b, l, scaled),
                                            cst(b, l, a[0], s[0]));
       Value linear = fcmp(b, l, arith::CmpFPredicate::OGT, scaled,
                           cst(b, l, a[0], s[1]));
       return sel(b, l, linear, a[0], soft);
     }},
    {"elu",
     [](OpBuilder &b, Location l, Args a, Scalars s) -> Value {
       Value x = a[0];
       Value e = b.create<math::ExpM1Op>(
           l, b.create<arith::MulFOp>(l, x, cst(b, l, x, s[2])));
       Value neg = b.create<arith::MulFOp>(l, e, cst(b, l, x, s[0] * s[1]));
       Value pos = b.create<arith::MulFOp>(l, x, cst(b, l, x, s[1]));
       return sel(b, l, fcmp(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, x, 0)),
                  pos, neg);
     }},
    {"abs",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       if (isF(a[0]))
         return b.create<math::AbsFOp>(l, a[0]);
       return isBool(a[0]) ? a[0] : b.create<math::AbsIOp>(l, a[0]).getResult();
     }},
    {"floor",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return isF(a[0]) ? b.create<math::FloorOp>(l, a[0]).getResult() : a[0];
     }},
    {"ceil",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return isF(a[0]) ? b.create<math::CeilOp>(l, a[0]).getResult() : a[0];
     }},
    {"round",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return isF(a[0]) ? b.create<math::RoundEvenOp>(l, a[0]).getResult() : a[0];
     }},
    {"trunc",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return isF(a[0]) ? b.create<math::TruncOp>(l, a[0]).getResult() : a[0];
     }},
    {"sign",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       Value x = a[0];
       if (isBool(x))
         return x;
       Value zero = cst(b, l, x, 0);
       Value pos = compare(b, l, x, zero, arith::CmpFPredicate::OGT,
                           arith::CmpIPredicate::sgt, arith::CmpIPredicate::ugt);
       Value neg = compare(b, l, x, zero, arith::CmpFPredicate::OLT,
                           arith::CmpIPredicate::slt, arith::CmpIPredicate::ult);
       return sel(b, l, pos, cst(b, l, x, 1), sel(b, l, neg, cst(b, l, x, -1), zero));
     }},
    {"bitwise_not",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       Value ones = b.create<arith::ConstantOp>(
           l, b.getIntegerAttr(a[0].getType(), -1));
       return b.create<arith::XOrIOp>(l, a[0], ones);
     }},
    {"copy",
     [](OpBuilder &, Location, Args a, Scalars) { return a[0]; }},
    {"clamp", clamp},
    {"leaky_relu",
     [](OpBuilder &b, Location l, Args a, Scalars s) -> Value {
       Value x = a[0];
       Value pos = fcmp(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, x, 0));
       return sel(b, l, pos, x, b.create<arith::MulFOp>(l, x, cst(b, l, x, s[0])));
     }},
    {"logical_not",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::XOrIOp>(l, a[0], cst(b, l, a[0], 1));
     }},
    {"isnan",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       if (!isF(a[0]))
         return b.create<arith::ConstantOp>(l, b.getBoolAttr(false));
       return fcmp(b, l, arith::CmpFPredicate::UNO, a[0], a[0]);
     }},
    {"signbit", signbit},
    {"angle",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       Value x = a[0];
       Value below = fcmp(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, x, 0));
       Value r = sel(b, l, below, cst(b, l, x, M_PI), cst(b, l, x, 0));
       return sel(b, l, fcmp(b, l, arith::CmpFPredicate::UNO, x, x), x, r);
     }},
    {"isinf",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       if (!isF(a[0]))
         return b.create<arith::ConstantOp>(l, b.getBoolAttr(false));
       return fcmp(b, l, arith::CmpFPredicate::OEQ,
                   b.create<math::AbsFOp>(l, a[0]), cst(b, l, a[0], INFINITY));
     }},
    {"widen_u8",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::ExtUIOp>(l, b.getIntegerType(16), a[0]);
     }},
    {"narrow_u8",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::TruncIOp>(l, b.getIntegerType(8), a[0]);
     }},
    {"maximum",
     [](OpBuilder &b, Location l, Args a, Scalars) { return maxV(b, l, a[0], a[1]); }},
    {"minimum",
     [](OpBuilder &b, Location l, Args a, Scalars) { return minV(b, l, a[0], a[1]); }},
    {"pow", pow},
    {"remainder", remainder},
    {"fmod", fmod},
    {"atan2", atan2},
    {"hypot", hypot},
    {"copysign",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<math::CopySignOp>(l, a[0], a[1]);
     }},
    {"nextafter", nextafter, {}, /*halfInOwnType=*/true},
    {"zeta", zetaBody},
    {"igamma", igammaBody, kCallsLgamma},
    {"igammac", igammacBody, kCallsLgamma},
    {"chebyshev_polynomial_t", chebyshevTBody},
    {"chebyshev_polynomial_u", chebyshevUBody},
    {"chebyshev_polynomial_v", chebyshevVBody},
    {"chebyshev_polynomial_w", chebyshevWBody},
    {"shifted_chebyshev_polynomial_t", shiftedChebyshevTBody},
    {"shifted_chebyshev_polynomial_u", shiftedChebyshevUBody},
    {"shifted_chebyshev_polynomial_v", shiftedChebyshevVBody},
    {"shifted_chebyshev_polynomial_w", shiftedChebyshevWBody},
    {"hermite_polynomial_h", hermiteHBody},
    {"hermite_polynomial_he", hermiteHeBody},
    {"laguerre_polynomial_l", laguerreLBody},
    {"legendre_polynomial_p", legendrePBody},
    {"fmax", passingNaN<arith::MaxNumFOp, maxV>},
    {"fmin", passingNaN<arith::MinNumFOp, minV>},
    {"gcd", gcd},
    {"lcm", lcm},
    {"div_trunc", divTrunc},
    {"div_floor", divFloor},
    {"bitwise_left_shift", shiftLeft},
    {"bitwise_right_shift", shiftRight},
    {"bitwise_and",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::AndIOp>(l, a[0], a[1]);
     }},
    {"bitwise_or",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::OrIOp>(l, a[0], a[1]);
     }},
    {"bitwise_xor",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::XOrIOp>(l, a[0], a[1]);
     }},
    {"eq", eq},
    {"ne", ne},
    {"lt", lt},
    {"le", le},
    {"gt", gt},
    {"ge", ge},
    {"logical_and",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::AndIOp>(l, a[0], a[1]);
     }},
    {"logical_or",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::OrIOp>(l, a[0], a[1]);
     }},
    {"logical_xor",
     [](OpBuilder &b, Location l, Args a, Scalars) -> Value {
       return b.create<arith::XOrIOp>(l, a[0], a[1]);
     }},
    {"where",
     [](OpBuilder &b, Location l, Args a, Scalars) { return sel(b, l, a[0], a[1], a[2]); }},
    {"clamp_tensor",
     [](OpBuilder &b, Location l, Args a, Scalars) {
       return minV(b, l, maxV(b, l, a[0], a[1]), a[2]);
     }},
    {"batch_norm",
     [](OpBuilder &b, Location l, Args a, Scalars s) -> Value {
       Value scale = b.create<arith::MulFOp>(
           l, a[3],
           b.create<math::RsqrtOp>(
               l, b.create<arith::AddFOp>(l, a[2], cst(b, l, a[2], s[0]))));
       Value centered = b.create<arith::SubFOp>(l, a[0], a[1]);
       return b.create<arith::AddFOp>(
           l, b.create<arith::MulFOp>(l, centered, scale), a[4]);
     }},
    {"random_uniform", randomUniform},
    {"random_normal", randomNormal},
    {"random_bits", randomBits},
    {"random_poisson", randomPoisson, kCallsLgamma},
};

} // namespace

const PointwiseLowering *lookupPointwiseLowering(StringRef name) {
  for (const PointwiseLowering &row : kRows)
    if (row.name == name)
      return &row;
  return nullptr;
}

} // namespace kiln::aten
