//===- GridSample.cpp - aten.grid_sample to linalg ------------------------===//
//
// This file implements the lowering of 2-d and 3-d grid sampling: one
// linalg.generic over the (N, C, H_out, W_out) or (N, C, D_out, H_out,
// W_out) result. Its body reads the grid point, maps it to input coordinates
// as PyTorch's GridSampler.h does (unnormalisation, then border or
// reflection padding), and reads the input with tensor.extract at clamped
// indices; a tap outside the input reads 0 (zeros padding). Bilinear weighs
// 4 taps and trilinear 8 (with the products in the order of eager's 3-d
// kernel), nearest rounds half to even, bicubic (2-d only) weighs 16 taps
// with the cubic convolution coefficients (A = -0.75) and pads each tap's
// coordinates. Everything computes in the element type, as eager's CPU kernel
// does: f16 and bf16 round after every operation (computing in f32 differed
// from eager by 4 bf16 ulps).
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

/// The scalar arithmetic of one result element, in the element type `ft`.
class Sampler {
public:
  Sampler(OpBuilder &b, Location loc, FloatType ft, Value input, Value n,
          Value c, int64_t padding, bool alignCorners)
      : b(b), loc(loc), ft(ft), input(input), n(n), c(c), padding(padding),
        alignCorners(alignCorners) {
    auto shape = cast<RankedTensorType>(input.getType()).getShape();
    if (shape.size() == 5)
      depth = shape[2];
    height = shape[shape.size() - 2];
    width = shape.back();
  }

  Value k(double v) { return scalarConstant(b, loc, ft, v); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(loc, x, y); }
  Value floor(Value x) { return b.create<math::FloorOp>(loc, x); }
  Value roundEven(Value x) { return b.create<math::RoundEvenOp>(loc, x); }
  Value less(Value x, Value y) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, cond, x, y);
  }

  /// A grid coordinate in [-1, 1] as an input coordinate along `size`.
  Value unnormalize(Value coord, int64_t size) {
    if (alignCorners)
      return mul(div(add(coord, k(1)), k(2)), k(size - 1));
    return div(sub(mul(add(coord, k(1)), k(size)), k(1)), k(2));
  }

  /// std::min(size - 1, std::max(x, 0)), NaN included.
  Value clip(Value x, int64_t size) {
    Value low = select(less(x, k(0)), k(0), x);
    return select(less(low, k(size - 1)), low, k(size - 1));
  }

  /// `x` reflected into [twiceLow / 2, twiceHigh / 2].
  Value reflect(Value x, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return k(0);
    double low = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
    Value in = b.create<math::AbsFOp>(loc, sub(x, k(low)));
    Value extra = b.create<arith::RemFOp>(loc, in, k(span));
    Value flips = floor(div(in, k(span)));
    Value odd = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE,
                                        sub(flips, mul(k(2), floor(mul(flips, k(0.5))))),
                                        k(0));
    return select(odd, add(sub(k(span), extra), k(low)), add(extra, k(low)));
  }

  /// The padding mode applied to an input coordinate along `size`.
  Value pad(Value x, int64_t size) {
    if (padding == kBorder)
      return clip(x, size);
    if (padding == kReflection)
      return clip(alignCorners ? reflect(x, 0, 2 * (size - 1))
                               : reflect(x, -1, 2 * size - 1),
                  size);
    return x;
  }

  /// The input at coordinates (y, x) truncated to integers, or 0 outside it.
  Value read(Value y, Value x) {
    auto [iy, yIn] = index(y, height);
    auto [ix, xIn] = index(x, width);
    Value v = b.create<tensor::ExtractOp>(loc, input, ValueRange{n, c, iy, ix});
    Value inside = b.create<arith::AndIOp>(loc, yIn, xIn);
    return select(inside, v, k(0));
  }

  /// The input at coordinates (z, y, x) of a 3-d input, or 0 outside it.
  Value read(Value z, Value y, Value x) {
    auto [iz, zIn] = index(z, depth);
    auto [iy, yIn] = index(y, height);
    auto [ix, xIn] = index(x, width);
    Value v = b.create<tensor::ExtractOp>(loc, input, ValueRange{n, c, iz, iy, ix});
    Value inside = b.create<arith::AndIOp>(loc, zIn, b.create<arith::AndIOp>(loc, yIn, xIn));
    return select(inside, v, k(0));
  }

  /// cubic convolution of four taps at fraction `t` (PyTorch's A = -0.75).
  Value cubic(ArrayRef<Value> taps, Value t) {
    const double a = -0.75;
    auto near = [&](Value x) {  // ((A + 2) x - (A + 3)) x x + 1
      return add(mul(mul(sub(mul(k(a + 2), x), k(a + 3)), x), x), k(1));
    };
    auto far = [&](Value x) {  // ((A x - 5A) x + 8A) x - 4A
      return sub(mul(add(mul(sub(mul(k(a), x), k(5 * a)), x), k(8 * a)), x), k(4 * a));
    };
    Value rest = sub(k(1), t);
    Value coeffs[4] = {far(add(t, k(1))), near(t), near(rest), far(add(rest, k(1)))};
    Value sum = mul(taps[0], coeffs[0]);
    for (int i = 1; i < 4; ++i)
      sum = add(sum, mul(taps[i], coeffs[i]));
    return sum;
  }

  Value bilinear(Value gx, Value gy) {
    Value ix = pad(unnormalize(gx, width), width);
    Value iy = pad(unnormalize(gy, height), height);
    Value x0 = floor(ix), y0 = floor(iy);
    Value x1 = add(x0, k(1)), y1 = add(y0, k(1));
    Value nw = mul(sub(x1, ix), sub(y1, iy)), ne = mul(sub(ix, x0), sub(y1, iy));
    Value sw = mul(sub(x1, ix), sub(iy, y0)), se = mul(sub(ix, x0), sub(iy, y0));
    Value out = mul(read(y0, x0), nw);
    out = add(out, mul(read(y0, x1), ne));
    out = add(out, mul(read(y1, x0), sw));
    return add(out, mul(read(y1, x1), se));
  }

  /// Trilinear: the 8 corner weights as eager's 3-d kernel forms them
  /// (t/b top/bottom in z, n/s in y, w/e in x), taps summed in its order.
  Value trilinear(Value gx, Value gy, Value gz) {
    Value ix = pad(unnormalize(gx, width), width);
    Value iy = pad(unnormalize(gy, height), height);
    Value iz = pad(unnormalize(gz, depth), depth);
    Value x0 = floor(ix), y0 = floor(iy), z0 = floor(iz);
    Value x1 = add(x0, k(1)), y1 = add(y0, k(1)), z1 = add(z0, k(1));
    Value xl = sub(ix, x0), xh = sub(x1, ix);
    Value yl = sub(iy, y0), yh = sub(y1, iy);
    Value zl = sub(iz, z0), zh = sub(z1, iz);
    auto w = [&](Value x, Value y, Value z) { return mul(mul(x, y), z); };
    Value out = mul(read(z0, y0, x0), w(xh, yh, zh));
    out = add(out, mul(read(z0, y0, x1), w(xl, yh, zh)));
    out = add(out, mul(read(z0, y1, x0), w(xh, yl, zh)));
    out = add(out, mul(read(z0, y1, x1), w(xl, yl, zh)));
    out = add(out, mul(read(z1, y0, x0), w(xh, yh, zl)));
    out = add(out, mul(read(z1, y0, x1), w(xl, yh, zl)));
    out = add(out, mul(read(z1, y1, x0), w(xh, yl, zl)));
    return add(out, mul(read(z1, y1, x1), w(xl, yl, zl)));
  }

  Value nearest3d(Value gx, Value gy, Value gz) {
    return read(roundEven(pad(unnormalize(gz, depth), depth)),
                roundEven(pad(unnormalize(gy, height), height)),
                roundEven(pad(unnormalize(gx, width), width)));
  }

  Value nearest(Value gx, Value gy) {
    return read(roundEven(pad(unnormalize(gy, height), height)),
                roundEven(pad(unnormalize(gx, width), width)));
  }

  Value bicubic(Value gx, Value gy) {
    Value ix = unnormalize(gx, width), iy = unnormalize(gy, height);
    Value x0 = floor(ix), y0 = floor(iy);
    Value tx = sub(ix, x0), ty = sub(iy, y0);
    // Each tap's coordinates are padded, then truncated by read (PyTorch's
    // get_value_bounded).
    auto tap = [&](int dy, int dx) {
      return read(pad(add(y0, k(dy)), height), pad(add(x0, k(dx)), width));
    };
    SmallVector<Value, 4> rows;
    for (int dy = -1; dy <= 2; ++dy)
      rows.push_back(cubic({tap(dy, -1), tap(dy, 0), tap(dy, 1), tap(dy, 2)}, tx));
    return cubic(rows, ty);
  }

private:
  /// A coordinate truncated toward zero (as a cast to int64 does) as an
  /// index clamped into [0, size), and whether it was inside. Coordinates
  /// beyond [-1, size] (and NaN) count as -1 or size first, so the
  /// conversion to an integer is always defined.
  std::pair<Value, Value> index(Value x, int64_t size) {
    Value below = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ULT, x, k(-1));
    Value bounded = select(below, k(-1), x);
    bounded = select(less(k(size), bounded), k(size), bounded);
    Type i64 = b.getI64Type();
    Value i = b.create<arith::FPToSIOp>(loc, i64, bounded);
    Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
    Value inside = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, i, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i,
                                b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(size))));
    Value clamped = select(inside, i, zero);
    return {b.create<arith::IndexCastOp>(loc, b.getIndexType(), clamped), inside};
  }

  OpBuilder &b;
  Location loc;
  FloatType ft;
  Value input, n, c;
  int64_t padding;
  bool alignCorners;
  int64_t depth = 1, height = 0, width = 0;
};

struct GridSampleLowering : OpConversionPattern<GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    auto ft = cast<FloatType>(element);
    Value input = adaptor.getInput(), grid = adaptor.getGrid();
    int64_t mode = op.getInterpolationMode(), padding = op.getPaddingMode();
    bool alignCorners = op.getAlignCorners();
    int64_t rank = type.getRank();
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), element);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{}, init,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(b.create<linalg::IndexOp>(l, d));
          // grid[n, <spatial result indices>, i]
          auto coordinate = [&](int64_t i) {
            SmallVector<Value> where = {at[0]};
            where.append(at.begin() + 2, at.end());
            where.push_back(b.create<arith::ConstantIndexOp>(l, i));
            return b.create<tensor::ExtractOp>(l, grid, where).getResult();
          };
          Sampler s(b, l, ft, input, at[0], at[1], padding, alignCorners);
          Value gx = coordinate(0), gy = coordinate(1);
          Value v;
          if (rank == 5) {
            Value gz = coordinate(2);
            v = mode == kBilinear ? s.trilinear(gx, gy, gz) : s.nearest3d(gx, gy, gz);
          } else {
            v = mode == kBilinear  ? s.bilinear(gx, gy)
                : mode == kNearest ? s.nearest(gx, gy)
                                   : s.bicubic(gx, gy);
          }
          b.create<linalg::YieldOp>(l, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void kiln::aten::populateGridSamplePatterns(RewritePatternSet &patterns) {
  patterns.add<GridSampleLowering>(patterns.getContext());
}
