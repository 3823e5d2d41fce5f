//===- Scans.cpp - long cummax/cummin/logcumsumexp to loops ---------------===//
//
// This file implements the lowering of the running scans along a dim longer
// than kMaxTriangularScan (kiln-decompose-aten takes the shorter ones as
// triangular reductions): a loop over the dim carrying the running values
// of every line (buildLinearScan), each step as eager's CPU kernel does it:
//  - cummax/cummin: a new element takes over when it is NaN, or when the
//    running value is not NaN and the element is >= (<=) it, so ties give
//    the last index and a NaN sticks (each later NaN taking the index);
//  - logcumsumexp: log(exp(r) + exp(x)) as max + log1p(exp(min - max)),
//    except when both are the same infinity (then that infinity), in f64
//    for f32/f64 and f32 for f16/bf16;
//  - logcumsumexp of complex parts (at any length: eager's imaginary parts
//    are not reduced to (-pi, pi], so only its order of steps gives them):
//    of r and x, the one of larger real part (x on a tie) is max, the other
//    min; a NaN part gives (NaN, NaN); equal real parts -inf give min,
//    +inf log(exp(min) + exp(max)); else max + log1p(w), w = exp(min - max)
//    as C's cexp (|w| <= 1), log1p(w)'s real part log1p(2 re w + |w|^2) / 2
//    below |w| = 1/2 and log|1 + w| above (c10's formula for CUDA; its CPU
//    one, log(1 + w) w / ((1 + w) - 1), agrees to rounding), its imaginary
//    part atan2(im w, 1 + re w); all in f64 (math.atan2 in f64 is libm's,
//    with C's zeros, infinities and NaN).
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "ComplexScalars.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// Whether `x`'s dim `dim` is long enough for a loop (shorter ones
/// kiln-decompose-aten takes as triangular reductions).
bool scansByLoop(Value x, int64_t dim) {
  auto type = cast<RankedTensorType>(x.getType());
  return type.getRank() > 0 && type.getDimSize(dim) > kMaxTriangularScan;
}

Value isNan(OpBuilder &b, Location l, Value v) {
  return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, v, v);
}

/// exp(z) where re z = +inf (the +inf case of the complex step): C's
/// (inf, im) for im = 0, (inf, NaN) for an infinite im, else
/// (inf cos im, inf sin im).
Complex expOfInfinite(Arithmetic &a, OpBuilder &b, Location l, Value im) {
  Scalars s(b, l);
  Type t = im.getType();
  Value inf = s.number(t, std::numeric_limits<double>::infinity());
  Value nan = s.number(t, std::numeric_limits<double>::quiet_NaN());
  Value zero = a.eq(im, s.number(t, 0.0));
  Value infinite = a.eq(a.abs(im), inf);
  Value re = a.select(zero, inf, a.mul(inf, b.create<math::CosOp>(l, im)));
  Value imag = a.select(zero, im, a.mul(inf, b.create<math::SinOp>(l, im)));
  return {a.select(infinite, inf, re), a.select(infinite, nan, imag)};
}

/// One step of eager's complex logcumsumexp (the file comment): the
/// running value `r` and the element `x`, both in the compute type.
Complex complexLogAddExp(OpBuilder &b, Location l, Complex x, Complex r) {
  Arithmetic a(b, l);
  Type t = x.re.getType();
  auto number = [&](double v) { return Scalars(b, l).number(t, v); };
  auto pick = [&](Value c, Complex u, Complex v) {
    return Complex{a.select(c, u.re, v.re), a.select(c, u.im, v.im)};
  };
  Value xFirst = a.lt(x.re, r.re); // x's real part is the smaller: x is min
  Complex lo = pick(xFirst, x, r), hi = pick(xFirst, r, x);
  Value anyNan = a.either(a.either(isNan(b, l, x.re), isNan(b, l, x.im)),
                          a.either(isNan(b, l, r.re), isNan(b, l, r.im)));
  Value inf = number(std::numeric_limits<double>::infinity());
  Value sameInfinity = a.both(a.eq(lo.re, hi.re), a.eq(a.abs(lo.re), inf));
  // max + log1p(w), w = exp(min - max) as C's cexp: e^re (cos, sin) (an
  // underflowed e^re gives +-0, or NaN with a non-finite angle), and
  // (0, 0) for re = -inf whatever the angle.
  Value shift = a.sub(lo.re, hi.re);
  Value scale = b.create<math::ExpOp>(l, shift);
  Value angle = a.sub(lo.im, hi.im);
  Value finiteAngle = a.lt(a.abs(angle), inf); // false for +-inf and NaN
  Value fromMinusInfinity = a.both(a.eq(shift, a.neg(inf)), a.negate(finiteAngle));
  Complex w{a.select(fromMinusInfinity, number(0.0),
                     a.mul(scale, b.create<math::CosOp>(l, angle))),
            a.select(fromMinusInfinity, number(0.0),
                     a.mul(scale, b.create<math::SinOp>(l, angle)))};
  Value onePlusRe = a.add(number(1.0), w.re);
  Value squared = a.add(a.mul(w.re, w.re), a.mul(w.im, w.im));
  Value nearOne = a.mul(number(0.5), b.create<math::Log1pOp>(
                                         l, a.add(a.mul(w.re, a.add(number(2.0), w.re)),
                                                  a.mul(w.im, w.im))));
  Value farOne = b.create<math::LogOp>(
      l, a.sqrt(a.add(a.mul(onePlusRe, onePlusRe), a.mul(w.im, w.im))));
  Complex general{a.add(hi.re, a.select(a.lt(squared, number(0.25)), nearOne, farOne)),
                  a.add(hi.im, b.create<math::Atan2Op>(l, w.im, onePlusRe))};
  // Both real parts +inf: log(exp(min) + exp(max)).
  Complex e1 = expOfInfinite(a, b, l, lo.im), e2 = expOfInfinite(a, b, l, hi.im);
  Complex s = plus(a, e1, e2);
  Value sInfinite = a.either(a.eq(a.abs(s.re), inf), a.eq(a.abs(s.im), inf));
  Value modulus = a.select(sInfinite, inf, a.sqrt(a.add(a.mul(s.re, s.re), a.mul(s.im, s.im))));
  Complex plusInfinity{b.create<math::LogOp>(l, modulus),
                       b.create<math::Atan2Op>(l, s.im, s.re)};
  Value negative = a.lt(lo.re, number(0.0));
  Complex result = pick(sameInfinity, pick(negative, lo, plusInfinity), general);
  Value nan = number(std::numeric_limits<double>::quiet_NaN());
  return pick(anyNan, Complex{nan, nan}, result);
}

/// logcumsumexp of complex parts (`complex`: the last dim holds them): one
/// loop at any length, carrying (re, im) of every line.
LogicalResult lowerComplexLogCumSumExp(LogCumSumExpOp op, Value x,
                                       ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  Type element = type.getElementType();
  Type compute = rewriter.getF64Type();
  int64_t rank = type.getRank();
  SmallVector<int64_t> partShape(type.getShape().drop_back());
  auto partType = RankedTensorType::get(partShape, element);
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
      strides(rank, rewriter.getIndexAttr(1));
  for (int64_t s : partShape)
    sizes.push_back(rewriter.getIndexAttr(s));
  sizes.push_back(rewriter.getIndexAttr(1));
  auto part = [&](int64_t which) -> Value {
    offsets.back() = rewriter.getIndexAttr(which);
    return rewriter.create<tensor::ExtractSliceOp>(loc, partType, x, offsets, sizes, strides);
  };
  Value re = part(0), im = part(1);
  Value start = scalarConstant(rewriter, loc, compute,
                               -std::numeric_limits<double>::infinity());
  Value zero = scalarConstant(rewriter, loc, compute, 0.0);
  SmallVector<Value> scanned = buildLinearScan(
      rewriter, loc, ValueRange{re, im}, op.getDim(), ValueRange{start, zero},
      [&](OpBuilder &b, Location l, Value, ValueRange v, ValueRange running) {
        Complex next = complexLogAddExp(
            b, l, {castScalar(b, l, v[0], compute), castScalar(b, l, v[1], compute)},
            {running[0], running[1]});
        return SmallVector<Value>{next.re, next.im};
      });
  Value out = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), element);
  for (int64_t which : {0, 1}) {
    offsets.back() = rewriter.getIndexAttr(which);
    out = rewriter.create<tensor::InsertSliceOp>(
        loc, castTensor(rewriter, loc, scanned[which], element), out, offsets, sizes,
        strides);
  }
  rewriter.replaceOp(op, out);
  return success();
}

/// cummax (`max`) or cummin along a dim longer than kMaxTriangularScan.
template <typename ScanOp, bool max>
struct LinearCumExtremumLowering : OpConversionPattern<ScanOp> {
  using OpConversionPattern<ScanOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<ScanOp>::OpAdaptor;
  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getSelf();
    int64_t dim = op.getDim();
    if (!scansByLoop(x, dim))
      return rewriter.notifyMatchFailure(op, "kiln-decompose-aten scans this");
    Location loc = op.getLoc();
    Type element = cast<RankedTensorType>(x.getType()).getElementType();
    bool isFloat = isa<FloatType>(element);
    Value start = extremeConstant(rewriter, loc, element, /*lowest=*/max);
    Value noIndex = scalarConstant(rewriter, loc, rewriter.getI64Type(), 0.0);
    SmallVector<Value> results = buildLinearScan(
        rewriter, loc, x, dim, ValueRange{start, noIndex},
        [&](OpBuilder &b, Location l, Value k, ValueRange x, ValueRange running) {
          Value v = x[0], best = running[0];
          Value takes;
          if (isFloat) {
            auto pred = max ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE;
            Value beats = b.create<arith::AndIOp>(
                l, b.create<arith::CmpFOp>(l, pred, v, best),
                b.create<arith::XOrIOp>(
                    l, isNan(b, l, best),
                    b.create<arith::ConstantOp>(l, b.getBoolAttr(true))));
            takes = b.create<arith::OrIOp>(l, isNan(b, l, v), beats);
          } else {
            bool isBool = element.isInteger(1);
            auto pred = max ? (isBool ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
                            : (isBool ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle);
            takes = b.create<arith::CmpIOp>(l, pred, v, best);
          }
          return SmallVector<Value>{
              b.create<arith::SelectOp>(l, takes, v, best),
              b.create<arith::SelectOp>(l, takes, k, running[1])};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LinearLogCumSumExpLowering : OpConversionPattern<LogCumSumExpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LogCumSumExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getSelf();
    int64_t dim = op.getDim();
    if (op.getComplex())
      return lowerComplexLogCumSumExp(op, x, rewriter);
    if (!scansByLoop(x, dim))
      return rewriter.notifyMatchFailure(op, "kiln-decompose-aten scans this");
    Location loc = op.getLoc();
    Type element = op.getType().getElementType();
    // Eager's CPU kernel accumulates f32 in double; f16 and bf16 in f32.
    Type compute = element.isF32() || element.isF64() ? rewriter.getF64Type()
                                                      : rewriter.getF32Type();
    Value start = scalarConstant(rewriter, loc, compute,
                                 -std::numeric_limits<double>::infinity());
    Value scanned = buildLinearScan(
        rewriter, loc, x, dim, start,
        [&](OpBuilder &b, Location l, Value, ValueRange x, ValueRange running) {
          Value y = castScalar(b, l, x[0], compute), r = running[0];
          Value hi = b.create<arith::MaximumFOp>(l, r, y);
          Value lo = b.create<arith::MinimumFOp>(l, r, y);
          Value sum = b.create<arith::AddFOp>(
              l, hi,
              b.create<math::Log1pOp>(
                  l, b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, lo, hi))));
          // Both the same infinity: that infinity (inf - inf would be NaN).
          Value inf = b.create<arith::ConstantOp>(
              l, b.getFloatAttr(compute, std::numeric_limits<double>::infinity()));
          Value sameInfinity = b.create<arith::AndIOp>(
              l, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, lo, hi),
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                      b.create<math::AbsFOp>(l, lo), inf));
          return SmallVector<Value>{b.create<arith::SelectOp>(l, sameInfinity, y, sum)};
        })[0];
    rewriter.replaceOp(op, castTensor(rewriter, loc, scanned, element));
    return success();
  }
};

} // namespace

void kiln::aten::populateScanPatterns(RewritePatternSet &patterns) {
  patterns.add<LinearCumExtremumLowering<CummaxOp, true>,
               LinearCumExtremumLowering<CumminOp, false>,
               LinearLogCumSumExpLowering>(patterns.getContext());
}
