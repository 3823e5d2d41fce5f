//===- AccurateTrigonometry.cpp - f32 sin, cos, atan, asin, acos ----------===//
//
// This file implements the patterns kiln-approximate-math applies before
// MLIR's polynomial approximations, for the f32 functions those get wrong
// (sin, cos, atan, atan2, asin, acos):
// MLIR's sin and cos reduce the argument with a one-part pi/2 in f32, so
// their error grows with |x| (5e-5 absolute at |x| = 1000, 7e-3 at 1e5),
// and its atan, asin and acos are off by about 30 ulps. Here each computes
// in f64 and rounds once to f32, still branch-free arithmetic that
// vectorizes:
//   sin, cos: |x| in quarter turns, reduced mod 4 exactly at any |x| (2/pi
//     in 24-bit chunks, each product with an f32 exact in f64), then sin r
//     and cos r by their Taylor series on |r| <= pi/4 (truncation below
//     5e-17), and the quadrant picks which;
//   atan: |x| > 1 reflects to pi/2 - atan(1/|x|), t > tan(pi/8) shifts to
//     pi/4 + atan((t - 1)/(t + 1)), then the Taylor series on
//     |u| <= tan(pi/8) (14 terms: truncation below 1e-13);
//   asin x = atan(x / sqrt((1 - x)(1 + x))), acos x = 2 atan(sqrt((1 - x) /
//     (1 + x))), exact in their f64 products for an f32 x; atan2 from
//     atan(|y|/|x|) (f32 operands' ratio never overflows f64).
// NaN stays NaN, sin and cos of +-inf are NaN, asin and acos past +-1 NaN.
//
//===----------------------------------------------------------------------===//
#include "AccurateTrigonometry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/PatternMatch.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>

using namespace mlir;

namespace kiln {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// f64 arithmetic on scalars or vectors of one shape.
class Wide {
public:
  Wide(PatternRewriter &b, Location l, Type f32Type) : b(b), l(l) {
    auto vector = dyn_cast<VectorType>(f32Type);
    type = vector ? Type(vector.clone(b.getF64Type())) : Type(b.getF64Type());
  }

  Value c(double v) {
    TypedAttr scalar = b.getF64FloatAttr(v);
    if (auto vector = dyn_cast<VectorType>(type))
      return b.create<arith::ConstantOp>(l, DenseElementsAttr::get(vector, scalar));
    return b.create<arith::ConstantOp>(l, scalar);
  }
  Value widen(Value x) { return b.create<arith::ExtFOp>(l, type, x); }
  Value narrow(Value x, Type f32Type) { return b.create<arith::TruncFOp>(l, f32Type, x); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(l, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(l, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(l, x, y); }
  Value neg(Value x) { return b.create<arith::NegFOp>(l, x); }
  Value abs(Value x) { return b.create<math::AbsFOp>(l, x); }
  Value sqrt(Value x) { return b.create<math::SqrtOp>(l, x); }
  Value floor(Value x) { return b.create<math::FloorOp>(l, x); }
  Value copySign(Value x, Value y) { return b.create<math::CopySignOp>(l, x, y); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) { return b.create<arith::CmpFOp>(l, p, x, y); }
  Value lt(Value x, Value y) { return cmp(arith::CmpFPredicate::OLT, x, y); }
  Value gt(Value x, Value y) { return cmp(arith::CmpFPredicate::OGT, x, y); }
  Value eq(Value x, Value y) { return cmp(arith::CmpFPredicate::OEQ, x, y); }
  Value select(Value c, Value x, Value y) { return b.create<arith::SelectOp>(l, c, x, y); }
  Value either(Value x, Value y) { return b.create<arith::OrIOp>(l, x, y); }
  Value both(Value x, Value y) { return b.create<arith::AndIOp>(l, x, y); }
  /// c[0] + z (c[1] + z (c[2] + ...)).
  template <size_t N> Value horner(Value z, const std::array<double, N> &coefficients) {
    Value r = c(coefficients[N - 1]);
    for (size_t i = N - 1; i-- > 0;)
      r = add(mul(r, z), c(coefficients[i]));
    return r;
  }

private:
  PatternRewriter &b;
  Location l;
  Type type;
};

/// (-1)^k / (2k + 1 + shift)! for k = 0..N-1: sin's series in r^2 (times r)
/// with shift 0, cos's with shift -1.
template <size_t N> std::array<double, N> taylorOfSine(int shift) {
  std::array<double, N> c;
  for (size_t k = 0; k < N; ++k) {
    double factorial = 1;
    for (int i = 2; i <= static_cast<int>(2 * k + 1) + shift; ++i)
      factorial *= i;
    c[k] = (k % 2 ? -1.0 : 1.0) / factorial;
  }
  return c;
}

/// 2/pi in chunks of 24 bits (its bits 1-24, 25-48, ..., 193-216), so that
/// an f32's 24-bit significand times each is exact in f64, and the sum of
/// the chunks is 2/pi to 6e-66.
constexpr double kTwoOverPiChunks[] = {
    0x1.45f306p-1,   0x1.b93910p-26,  0x1.529fc0p-52,  0x1.3abe88p-75, 0x1.ea69bap-97,
    0x1.81b6c4p-121, 0x1.2b3278p-145, 0x1.0e4104p-170, 0x1.fca2c6p-193};

/// v mod 4 in [0, 4), exact.
Value modFour(Wide &w, Value v) { return w.sub(v, w.mul(w.c(4), w.floor(w.mul(v, w.c(0.25))))); }

/// sin (or cos, `cosine`) of `x`, an f32 widened to f64. a = |x| in
/// quarter turns is a (2/pi) = sum of a c_i over the chunks c_i of 2/pi,
/// each product exact and taken mod 4 exactly (Payne and Hanek's
/// reduction, which needs no table for an f32's 24 bits), so the sum
/// keeps 2^-48 of a quarter turn at any |x| up to 3.4e38. Its nearest
/// integer k gives the quadrant and r = (sum - k) pi/2 in [-pi/4, pi/4];
/// sin r and cos r are their Taylor series (truncation below 5e-17).
Value sineOrCosine(Wide &w, Value x, bool cosine) {
  static const std::array<double, 8> sineSeries = taylorOfSine<8>(0);
  static const std::array<double, 9> cosineSeries = taylorOfSine<9>(-1);
  Value a = w.abs(x);
  Value turns = w.c(0);
  for (double chunk : llvm::reverse(kTwoOverPiChunks)) {
    // The last chunks' products stay below 4 even at f32's largest value.
    Value product = w.mul(a, w.c(chunk));
    bool below4 = static_cast<double>(std::numeric_limits<float>::max()) * chunk < 4;
    turns = w.add(turns, below4 ? product : modFour(w, product));
  }
  Value k = w.floor(w.add(turns, w.c(0.5)));
  Value r = w.mul(w.sub(turns, k), w.c(kPi / 2));
  Value r2 = w.mul(r, r);
  Value sine = w.mul(r, w.horner(r2, sineSeries));
  Value cosineOfR = w.horner(r2, cosineSeries);
  // The quadrant k mod 4, one on for cos: sin r, cos r, -sin r, -cos r in
  // quadrants 0 to 3 (and 4, as 0).
  Value quadrant = modFour(w, k);
  if (cosine)
    quadrant = w.add(quadrant, w.c(1));
  Value three = w.eq(quadrant, w.c(3));
  Value odd = w.either(w.eq(quadrant, w.c(1)), three);
  Value negative = w.either(w.eq(quadrant, w.c(2)), three);
  Value value = w.select(odd, cosineOfR, sine);
  value = w.select(negative, w.neg(value), value);
  // sin is odd (sin(-0) = -0); cos even.
  return cosine ? value : w.mul(w.copySign(w.c(1), x), value);
}

/// atan of the f64 `x`: for |x| > 1, pi/2 - atan(1/|x|); for t above
/// tan(pi/8), pi/4 + atan((t - 1)/(t + 1)); then u (1 - u^2/3 + u^4/5 ...)
/// over 14 terms on |u| <= tan(pi/8); x's sign last (atan(-0) = -0).
Value arctangent(Wide &w, Value x) {
  static const std::array<double, 14> series = [] {
    std::array<double, 14> c;
    for (int k = 0; k < 14; ++k)
      c[k] = (k % 2 ? -1.0 : 1.0) / (2 * k + 1);
    return c;
  }();
  Value one = w.c(1);
  Value a = w.abs(x);
  Value reflected = w.gt(a, one);
  Value t = w.select(reflected, w.div(one, a), a);
  Value shifted = w.gt(t, w.c(0.41421356237309504880));
  Value u = w.select(shifted, w.div(w.sub(t, one), w.add(t, one)), t);
  Value atanU = w.mul(u, w.horner(w.mul(u, u), series));
  Value atanT = w.select(shifted, w.add(w.c(kPi / 4), atanU), atanU);
  Value atanA = w.select(reflected, w.sub(w.c(kPi / 2), atanT), atanT);
  return w.copySign(atanA, x);
}

/// atan2(y, x) of f64 operands: atan(|y|/|x|) (0 when both are 0, pi/4
/// when both are infinite), reflected to pi - that when x is negative or
/// -0, with y's sign. A NaN operand gives NaN.
Value arctangent2(Wide &w, Value y, Value x) {
  Value ay = w.abs(y), ax = w.abs(x);
  Value zero = w.c(0), inf = w.c(INFINITY);
  Value theta = arctangent(w, w.div(ay, ax));
  theta = w.select(w.both(w.eq(ay, zero), w.eq(ax, zero)), zero, theta);
  theta = w.select(w.both(w.eq(ay, inf), w.eq(ax, inf)), w.c(kPi / 4), theta);
  Value xNegative = w.lt(w.copySign(w.c(1), x), zero);
  theta = w.select(xNegative, w.sub(w.c(kPi), theta), theta);
  return w.copySign(theta, y);
}

/// The f32 op `Op` computed by `formula` in f64 and rounded once.
template <typename Op>
struct InF64 : OpRewritePattern<Op> {
  using Formula = Value (*)(Wide &, Value);
  InF64(MLIRContext *context, Formula formula)
      : OpRewritePattern<Op>(context, /*benefit=*/2), formula(formula) {}

  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Wide w(rewriter, op.getLoc(), type);
    Value result = formula(w, w.widen(op.getOperand()));
    rewriter.replaceOp(op, w.narrow(result, type));
    return success();
  }

  Formula formula;
};

/// f32 atan2 computed in f64 and rounded once.
struct Atan2InF64 : OpRewritePattern<math::Atan2Op> {
  Atan2InF64(MLIRContext *context) : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::Atan2Op op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Wide w(rewriter, op.getLoc(), type);
    Value result = arctangent2(w, w.widen(op.getLhs()), w.widen(op.getRhs()));
    rewriter.replaceOp(op, w.narrow(result, type));
    return success();
  }
};

}  // namespace

void populateAccurateTrigonometryPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<InF64<math::SinOp>>(context, [](Wide &w, Value x) {
    return sineOrCosine(w, x, /*cosine=*/false);
  });
  patterns.add<InF64<math::CosOp>>(context, [](Wide &w, Value x) {
    return sineOrCosine(w, x, /*cosine=*/true);
  });
  patterns.add<InF64<math::AtanOp>>(context, arctangent);
  patterns.add<Atan2InF64>(context);
  // asin x = atan(x / sqrt((1 - x)(1 + x))): +-pi/2 at +-1, NaN past them.
  patterns.add<InF64<math::AsinOp>>(context, [](Wide &w, Value x) {
    Value one = w.c(1);
    return arctangent(w, w.div(x, w.sqrt(w.mul(w.sub(one, x), w.add(one, x)))));
  });
  // acos x = 2 atan(sqrt((1 - x)/(1 + x))): 0 at 1, pi at -1.
  patterns.add<InF64<math::AcosOp>>(context, [](Wide &w, Value x) {
    Value one = w.c(1);
    return w.mul(w.c(2), arctangent(w, w.sqrt(w.div(w.sub(one, x), w.add(one, x)))));
  });
}

}  // namespace kiln
