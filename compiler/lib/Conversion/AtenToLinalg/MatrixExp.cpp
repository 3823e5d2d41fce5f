//===- MatrixExp.cpp - aten.matrix_exp by scaling and squaring ------------===//
//
// This file lowers aten.matrix_exp, matrix by matrix in a loop over the
// batch, as eager's CPU kernel computes it for matrices past its smaller
// degrees' bounds:
//
//   s = max(0, ceil(log2(|A|_1 / theta)))   (theta: eager's degree-18
//   B = A / 2^s                               bound for the type)
//   T = T18(B)                                (the degree-18 Taylor
//                                              polynomial in 5 products)
//   exp(A) = T^(2^s)                          (s squarings)
//
// T18 is Bader, Blanes and Casas's evaluation ("Computing the Matrix
// Exponential with an Optimized Taylor Polynomial Approximation",
// Mathematics 7(12), 1174, 2019), which eager uses too: from B^2, B^3 and
// B^6, five combinations C_k = sum_j c[k][j] {I, B, B^2, B^3, B^6}_j, then
// A9 = C_0 C_4 + C_3 and T = C_1 + (C_2 + A9) A9. The 1-norm is a scalar
// loop over the matrix; the division by 2^s is exact (a product with
// powers of two built from their exponent bits); the products are
// linalg.matmul; the squarings an scf.for whose trip count is the matrix's
// own s. Eager picks a lower degree for matrices of small norm; degree 18
// is at least as accurate there, so the results agree to rounding.
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

/// The coefficients c[k][j] of T18's five combinations of I, B, B^2, B^3
/// and B^6 (Bader, Blanes and Casas 2019, the degree-18 scheme).
constexpr double kT18[5][5] = {
    {0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03,
     -8.92138498045729985177e-04, 0.0},
    {0.0, 3.97849749499645077844e-01, 1.36783778460411720168e+00,
     4.98289622525382669416e-01, -6.37898194594723280150e-04},
    {-1.09676396052962061844e+01, 1.68015813878906206114e+00,
     5.71779846478865511061e-02, -6.98210122488052056106e-03,
     3.34975017086070470649e-05},
    {-9.04316832390810593223e-02, -6.76404519071381882256e-02,
     6.75961301770459654925e-02, 2.95552570429315521194e-02,
     -1.39180257516060693404e-05},
    {0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02,
     -1.40086798182036094347e-05}};

/// The largest 1-norm whose degree-18 Taylor polynomial eager takes without
/// scaling (its thetas for degree 18, float and double).
double degree18Bound(Type element) {
  return element.isF32() ? 3.010066362817634e+00 : 1.090863719290036e+00;
}

/// Squarings past this many mean a norm no finite f64 reaches (its largest
/// needs 1024): the count is 0 there (a NaN or infinite matrix stays NaN
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

/// s = ceil(log2(norm / bound)) as an i64 when norm > bound and s is
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
  return b.create<arith::FPToSIOp>(loc, b.getI64Type(), count);
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

/// An elementwise map over the (n, n) matrices `xs` into a new tensor:
/// body(b, loc, {xs[0][i, j], ...}, i == j).
Value mapMatrices(OpBuilder &b, Location loc, ValueRange xs,
                  function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body) {
  auto type = cast<RankedTensorType>(xs.front().getType());
  Value out = b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps(xs.size() + 1, b.getMultiDimIdentityMap(2));
  auto op = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, xs, ValueRange{out}, maps,
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::parallel},
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value onDiagonal = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                   b.create<linalg::IndexOp>(loc, 0),
                                                   b.create<linalg::IndexOp>(loc, 1));
        b.create<linalg::YieldOp>(loc, body(b, loc, args.drop_back(), onDiagonal));
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

/// x + y.
Value sum(OpBuilder &b, Location loc, Value x, Value y) {
  return mapMatrices(b, loc, {x, y}, [](OpBuilder &b, Location loc, ValueRange v, Value) {
    return b.create<arith::AddFOp>(loc, v[0], v[1]);
  });
}

/// The degree-18 Taylor polynomial of the (n, n) matrix `x` (kT18).
Value taylor18(OpBuilder &b, Location loc, Value x) {
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Value x2 = product(b, loc, x, x);
  Value x3 = product(b, loc, x2, x);
  Value x6 = product(b, loc, x3, x3);
  SmallVector<Value, 5> c;
  for (const auto &row : kT18)
    c.push_back(mapMatrices(
        b, loc, {x, x2, x3, x6}, [&](OpBuilder &b, Location loc, ValueRange v, Value onDiagonal) {
          Value acc = b.create<arith::SelectOp>(loc, onDiagonal,
                                                scalarConstant(b, loc, element, row[0]),
                                                scalarConstant(b, loc, element, 0.0));
          for (size_t j = 1; j < 5; ++j)
            if (row[j] != 0.0)
              acc = b.create<arith::AddFOp>(
                  loc, acc,
                  b.create<arith::MulFOp>(loc, scalarConstant(b, loc, element, row[j]),
                                          v[j - 1]));
          return acc;
        }));
  Value a9 = sum(b, loc, product(b, loc, c[0], c[4]), c[3]);
  return sum(b, loc, c[1], product(b, loc, sum(b, loc, c[2], a9), a9));
}

/// exp of the (n, n) matrix `a`.
Value exponential(OpBuilder &b, Location loc, Value a, int64_t n) {
  auto type = cast<RankedTensorType>(a.getType());
  Type element = type.getElementType(), f64 = b.getF64Type();
  Value s = squaringCount(b, loc, oneNorm(b, loc, a, n), degree18Bound(element));
  // B = A * 2^-half * 2^-(s - half): each factor a normal f64.
  Value half = b.create<arith::ShRUIOp>(
      loc, s, b.create<arith::ConstantOp>(loc, b.getI64Type(), b.getI64IntegerAttr(1)));
  Value first = inversePowerOfTwo(b, loc, half);
  Value second = inversePowerOfTwo(b, loc, b.create<arith::SubIOp>(loc, s, half));
  Value scaled = mapMatrices(b, loc, a, [&](OpBuilder &b, Location loc, ValueRange v, Value) {
    Value wide = element == f64 ? v[0] : b.create<arith::ExtFOp>(loc, f64, v[0]).getResult();
    wide = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, wide, first), second);
    return element == f64 ? wide : b.create<arith::TruncFOp>(loc, element, wide).getResult();
  });
  Value taylor = taylor18(b, loc, scaled);
  // Each squaring writes T T into a scratch matrix and copies it back, so
  // that the loop carries the same two buffers throughout (what
  // bufferization takes: a yielded value in place of its iteration's).
  Value scratch = b.create<tensor::EmptyOp>(loc, type.getShape(), element);
  Value squarings = b.create<arith::IndexCastOp>(loc, b.getIndexType(), s);
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
