//===- MatrixExp.cpp - aten.matrix_exp by scaling and squaring ------------===//
//
// This file lowers aten.matrix_exp, matrix by matrix in a loop over the
// batch, as eager's CPU kernel computes it for matrices past its smaller
// degrees' bounds:
//
//   s = max(0, ceil(log2(|A|_1 / theta)))        (theta: eager's degree-18
//   B = A / 2^s                                    bound for the type)
//   T = I + B (I + B/2 (I + ... (I + B/18)))       (degree-18 Taylor, Horner)
//   exp(A) = T^(2^s)                               (s squarings)
//
// The 1-norm is a scalar loop over the matrix; the division by 2^s is exact
// (a product with powers of two built from their exponent bits); the
// products are linalg.matmul; the squarings an scf.for whose trip count is
// the matrix's own s. Eager picks a lower degree for matrices of small
// norm; degree 18 is at least as accurate there, so the results agree to
// rounding.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

/// The Taylor polynomial's degree.
constexpr int kDegree = 18;

/// The largest 1-norm whose degree-18 Taylor polynomial eager takes without
/// scaling (its thetas for degree 18, float and double).
double degree18Bound(Type element) {
  return element.isF32() ? 3.010066362817634e+00 : 1.090863719290036e+00;
}

/// Squarings past this many mean a norm no finite f64 reaches (its largest
/// needs 1025): the count is 0 there (a NaN or infinite matrix stays NaN
/// or infinite). Half of it is a valid f64 exponent (inversePowerOfTwo).
constexpr double kMaxSquarings = 1100;

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// max over columns j of sum over rows i of |a[i, j]|, as f64 (NaN if any
/// entry is NaN).
Value oneNorm(OpBuilder &b, Location loc, Value a, int64_t n) {
  Type f64 = b.getF64Type();
  Value zero = scalarConstant(b, loc, f64, 0.0);
  auto columns = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, n), indexConstant(b, loc, 1),
      ValueRange{zero}, [&](OpBuilder &b, Location loc, Value j, ValueRange largest) {
        auto rows = b.create<scf::ForOp>(
            loc, indexConstant(b, loc, 0), indexConstant(b, loc, n),
            indexConstant(b, loc, 1), ValueRange{zero},
            [&](OpBuilder &b, Location loc, Value i, ValueRange sum) {
              Value x = b.create<tensor::ExtractOp>(loc, a, ValueRange{i, j});
              if (x.getType() != f64)
                x = b.create<arith::ExtFOp>(loc, f64, x);
              Value next = b.create<arith::AddFOp>(loc, sum[0], b.create<math::AbsFOp>(loc, x));
              b.create<scf::YieldOp>(loc, next);
            });
        Value next = b.create<arith::MaximumFOp>(loc, largest[0], rows.getResult(0));
        b.create<scf::YieldOp>(loc, next);
      });
  return columns.getResult(0);
}

/// s = ceil(log2(norm / bound)) as an index when norm > bound and s is
/// finite and at most kMaxSquarings; else 0.
Value squaringCount(OpBuilder &b, Location loc, Value norm, double bound) {
  Type f64 = b.getF64Type();
  Value ratio = b.create<arith::DivFOp>(loc, norm, scalarConstant(b, loc, f64, bound));
  Value count = b.create<math::CeilOp>(loc, b.create<math::Log2Op>(loc, ratio));
  Value needed = b.create<arith::AndIOp>(
      loc,
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, norm,
                              scalarConstant(b, loc, f64, bound)),
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, count,
                              scalarConstant(b, loc, f64, kMaxSquarings)));
  count = b.create<arith::SelectOp>(loc, needed, count, scalarConstant(b, loc, f64, 0.0));
  Value whole = b.create<arith::FPToSIOp>(loc, b.getI64Type(), count);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), whole);
}

/// 2^-k as f64 for 0 <= k <= 1022, from its exponent bits.
Value inversePowerOfTwo(OpBuilder &b, Location loc, Value k) {
  Type i64 = b.getI64Type();
  Value exponent = b.create<arith::SubIOp>(
      loc, b.create<arith::ConstantOp>(loc, i64, b.getI64IntegerAttr(1023)), k);
  Value bits = b.create<arith::ShLIOp>(
      loc, exponent, b.create<arith::ConstantOp>(loc, i64, b.getI64IntegerAttr(52)));
  return b.create<arith::BitcastOp>(loc, b.getF64Type(), bits);
}

/// An elementwise map over the (n, n) matrix `x` into a new tensor:
/// body(b, loc, x[i, j], i == j).
Value mapMatrix(OpBuilder &b, Location loc, Value x,
                function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto type = cast<RankedTensorType>(x.getType());
  Value out = b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(2);
  auto op = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{x}, ValueRange{out},
      ArrayRef<AffineMap>{identity, identity},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::parallel},
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value onDiagonal = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                   b.create<linalg::IndexOp>(loc, 0),
                                                   b.create<linalg::IndexOp>(loc, 1));
        b.create<linalg::YieldOp>(loc, body(b, loc, args[0], onDiagonal));
      });
  return op.getResult(0);
}

/// x @ y for (n, n) matrices, into `into` when given (else a new tensor).
Value product(OpBuilder &b, Location loc, Value x, Value y, Value into = {}) {
  auto type = cast<RankedTensorType>(x.getType());
  Value zero = scalarConstant(b, loc, type.getElementType(), 0.0);
  if (!into)
    into = b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  Value init = b.create<linalg::FillOp>(loc, zero, into).getResult(0);
  return b.create<linalg::MatmulOp>(loc, TypeRange{type}, ValueRange{x, y}, ValueRange{init})
      .getResult(0);
}

/// I + x / k.
Value identityPlus(OpBuilder &b, Location loc, Value x, int k) {
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  return mapMatrix(b, loc, x, [&](OpBuilder &b, Location loc, Value v, Value onDiagonal) {
    Value scaled = b.create<arith::DivFOp>(loc, v, scalarConstant(b, loc, element, k));
    Value one = b.create<arith::SelectOp>(loc, onDiagonal, scalarConstant(b, loc, element, 1.0),
                                          scalarConstant(b, loc, element, 0.0));
    return b.create<arith::AddFOp>(loc, scaled, one);
  });
}

/// exp of the (n, n) matrix `a`.
Value exponential(OpBuilder &b, Location loc, Value a, int64_t n) {
  auto type = cast<RankedTensorType>(a.getType());
  Type element = type.getElementType(), f64 = b.getF64Type();
  Value squarings = squaringCount(b, loc, oneNorm(b, loc, a, n), degree18Bound(element));
  // B = A * 2^-half * 2^-(s - half): each factor a normal f64.
  Value s = b.create<arith::IndexCastOp>(loc, b.getI64Type(), squarings);
  Value half = b.create<arith::ShRUIOp>(
      loc, s, b.create<arith::ConstantOp>(loc, b.getI64Type(), b.getI64IntegerAttr(1)));
  Value first = inversePowerOfTwo(b, loc, half);
  Value second = inversePowerOfTwo(b, loc, b.create<arith::SubIOp>(loc, s, half));
  Value scaled = mapMatrix(b, loc, a, [&](OpBuilder &b, Location loc, Value v, Value) {
    Value wide = element == f64 ? v : b.create<arith::ExtFOp>(loc, f64, v).getResult();
    wide = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, wide, first), second);
    return element == f64 ? wide : b.create<arith::TruncFOp>(loc, element, wide).getResult();
  });
  // Horner: T = I + B/18, then T = I + (B T)/k for k = 17 .. 1.
  Value taylor = identityPlus(b, loc, scaled, kDegree);
  for (int k = kDegree - 1; k >= 1; --k)
    taylor = identityPlus(b, loc, product(b, loc, scaled, taylor), k);
  // Each squaring writes T T into a scratch matrix and copies it back, so
  // that the loop carries the same two buffers throughout (what
  // bufferization takes: a yielded value in place of its iteration's).
  Value scratch = b.create<tensor::EmptyOp>(loc, type.getShape(), element);
  auto squaring = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), squarings, indexConstant(b, loc, 1),
      ValueRange{taylor, scratch}, [&](OpBuilder &b, Location loc, Value, ValueRange t) {
        Value square = product(b, loc, t[0], t[0], t[1]);
        Value copied = b.create<linalg::CopyOp>(loc, square, t[0]).getResult(0);
        b.create<scf::YieldOp>(loc, ValueRange{copied, square});
      });
  return squaring.getResult(0);
}

struct MatrixExpLowering : OpConversionPattern<MatrixExpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatrixExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value self = adaptor.getSelf();
    auto type = cast<RankedTensorType>(self.getType());
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    auto matrix = RankedTensorType::get({n, n}, type.getElementType());
    Value result = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1), rewriter.getIndexAttr(n),
                                       rewriter.getIndexAttr(n)};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    auto loop = rewriter.create<scf::ForOp>(
        loc, indexConstant(rewriter, loc, 0), indexConstant(rewriter, loc, batch),
        indexConstant(rewriter, loc, 1), ValueRange{result},
        [&](OpBuilder &b, Location loc, Value m, ValueRange out) {
          SmallVector<OpFoldResult> at = {m, b.getIndexAttr(0), b.getIndexAttr(0)};
          Value a = b.create<tensor::ExtractSliceOp>(loc, matrix, self, at, sizes, strides);
          Value e = exponential(b, loc, a, n);
          b.create<scf::YieldOp>(
              loc, b.create<tensor::InsertSliceOp>(loc, e, out[0], at, sizes, strides)
                       .getResult());
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

} // namespace

void kiln::aten::populateMatrixExpPatterns(RewritePatternSet &patterns) {
  patterns.add<MatrixExpLowering>(patterns.getContext());
}
