//===- ReductionFamilies.cpp - prod/amax/any/var/argmax/cumsum to linalg --===//
//
// This file implements the lowering of the reduction families beyond
// sum/mean: prod, amax, amin, any and all from one table of (initial value,
// combiner); var/std (a corrected two-pass in double, with correction);
// argmax/argmin (the extreme, then the first index holding it: NaN counts
// as extreme); and cumsum/cumprod (a triangular reduction, or for
// dims over 128 a loop over the dim carrying the running values).
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

template <typename AtenOp, Combiner kind>
struct TableReductionLowering : OpConversionPattern<AtenOp> {
  using OpConversionPattern<AtenOp>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<AtenOp>::OpAdaptor;
  LogicalResult
  matchAndRewrite(AtenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getSelf();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type acc = op.getType().getElementType();
    Value init;
    switch (kind) {
    case Combiner::Prod:
      init = scalarConstant(rewriter, loc, acc, 1.0);
      break;
    case Combiner::Max:
    case Combiner::Min:
      init = extremeConstant(rewriter, loc, acc, kind == Combiner::Max);
      break;
    case Combiner::Any:
    case Combiner::All:
      init = rewriter.create<arith::ConstantOp>(
          loc, rewriter.getBoolAttr(kind == Combiner::All));
      break;
    }
    Value result = buildReductionFrom(
        rewriter, loc, input, reducedDims(inputType.getRank(), op.getDims()),
        init, [](OpBuilder &b, Location l, Value a, Value x) {
          return combineElements(kind, b, l, a, x);
        });
    Value reshaped = buildReshape(rewriter, loc, result, op.getType());
    if (!reshaped)
      return rewriter.notifyMatchFailure(op, "no sizes for the dynamic result");
    rewriter.replaceOp(op, reshaped);
    return success();
  }
};

/// var/std as eager computes them on the CPU: in double whatever the input
/// type, and with the two-pass algorithm corrected for the mean's rounding
/// error (Chan, Golub and LeVeque):
///   d = x - mean,  var = (sum(d^2) - sum(d)^2 / n) / max(0, n - correction).
/// Summing in the input's type lost everything for values far from zero
/// (f32 near 1e6: 700 % off).
struct VarLowering : OpConversionPattern<VarOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(VarOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = op.getType().getElementType();
    Type f64 = rewriter.getF64Type();
    // Every pass reads x in its own type, widening each element as it
    // goes: no f64 copy of x, and no centred one.
    Value x = adaptor.getSelf();
    auto inType = cast<RankedTensorType>(x.getType());
    llvm::SmallBitVector reduced = reducedDims(inType.getRank(), op.getDims());
    int64_t count = 1;
    SmallVector<int64_t> keptShape;
    for (auto [i, extent] : llvm::enumerate(inType.getShape())) {
      keptShape.push_back(reduced.test(i) ? 1 : extent);
      if (reduced.test(i))
        count *= extent;
    }
    auto keptType = RankedTensorType::get(keptShape, f64);
    Value sum = buildReduction(rewriter, loc, x, reduced, f64, 0.0, addToSum);
    Value mean = buildElementwise(
        rewriter, loc, keptType, buildReshape(rewriter, loc, sum, keptType),
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return b.create<arith::DivFOp>(
              l, args[0], scalarConstant(b, l, f64, double(count)));
        });
    Value zero = scalarConstant(rewriter, loc, f64, 0.0);
    Value deviations = buildReductionWithKept(
        rewriter, loc, x, mean, reduced, zero,
        [](OpBuilder &b, Location l, Value a, Value v, Value m) -> Value {
          return addToSum(b, l, a, b.create<arith::SubFOp>(l, v, m));
        });
    Value squares = buildReductionWithKept(
        rewriter, loc, x, mean, reduced, zero,
        [](OpBuilder &b, Location l, Value a, Value v, Value m) -> Value {
          Value d = b.create<arith::SubFOp>(l, v, m);
          return addToSum(b, l, a, b.create<arith::MulFOp>(l, d, d));
        });
    double divisor =
        std::max(0.0, double(count) - op.getCorrection().convertToDouble());
    bool takeRoot = op.getStd();
    auto statType = cast<RankedTensorType>(squares.getType());
    Value result = buildElementwise(
        rewriter, loc, statType.clone(element), {squares, deviations},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value drift = b.create<arith::DivFOp>(
              l, b.create<arith::MulFOp>(l, args[1], args[1]),
              scalarConstant(b, l, f64, double(count)));
          Value v = b.create<arith::DivFOp>(
              l, b.create<arith::SubFOp>(l, args[0], drift),
              scalarConstant(b, l, f64, divisor));
          return takeRoot ? b.create<math::SqrtOp>(l, v).getResult() : v;
        },
        f64);
    rewriter.replaceOp(op, buildReshape(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// argmax/argmin as eager's CPU kernel answers them (the first extreme
/// wins; a NaN is extreme, the first NaN wins), in two passes that each
/// vectorize: the extreme of each row (maximumf/minimumf propagate NaN and
/// are exact in any order), then the least index where the row holds it
/// (or holds a NaN, which only a NaN extreme allows). One pass carrying the
/// value and its index through a select chain stayed scalar, every step a
/// store and reload of both: 5x eager's time on 256x4096 f32.
struct ArgReduceLowering : OpConversionPattern<ArgReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArgReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getSelf();
    auto inType = cast<RankedTensorType>(x.getType());
    Type element = inType.getElementType();
    Type i64 = rewriter.getI64Type();
    Type compute = isa<FloatType>(element) ? element : i64;
    int64_t dim = op.getDim().value_or(0);
    if (!op.getDim() || inType.getRank() == 0) {
      x = buildReshape(rewriter, loc, x,
                       RankedTensorType::get({inType.getNumElements()}, element));
      dim = 0;
    }
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    llvm::SmallBitVector reduced(rank);
    reduced.set(dim);
    bool max = op.getMax();
    Combiner extreme = max ? Combiner::Max : Combiner::Min;
    Value best = buildReductionFrom(
        rewriter, loc, x, reduced, extremeConstant(rewriter, loc, compute, max),
        [&](OpBuilder &b, Location l, Value acc, Value v) {
          return combineElements(extreme, b, l, acc, v);
        });
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t i = 0; i < rank; ++i) {
      iterators.push_back(i == dim ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
      if (i != dim)
        outExprs.push_back(getAffineDimExpr(i, ctx));
    }
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    // No row lacks its extreme: the largest i64 only starts the search.
    Value none = extremeConstant(rewriter, loc, i64, /*lowest=*/false);
    auto indexType = RankedTensorType::get(droppedShape(xType.getShape(), reduced), i64);
    Value indexInit =
        rewriter
            .create<linalg::FillOp>(
                loc, none, rewriter.create<tensor::EmptyOp>(loc, indexType.getShape(), i64)
                               .getResult())
            .getResult(0);
    auto first = rewriter.create<linalg::GenericOp>(
        loc, indexType, ValueRange{x, best}, indexInit,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank), outMap, outMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value v = castScalar(b, l, args[0], compute);
          Value hit;
          if (isa<FloatType>(compute))
            hit = b.create<arith::OrIOp>(
                l, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, v, args[1]),
                b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, v, v));
          else
            hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, v, args[1]);
          Value i = b.create<arith::IndexCastOp>(l, i64,
                                                 b.create<linalg::IndexOp>(l, dim));
          Value candidate = b.create<arith::SelectOp>(l, hit, i, none);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::MinSIOp>(l, args[2], candidate)});
        });
    rewriter.replaceOp(op,
                       buildReshape(rewriter, loc, first.getResult(0), op.getType()));
    return success();
  }
};

/// out[..., i, ...] = sum (product) over j <= i of x[..., j, ...], in `acc`,
/// as an (i, j) reduction with j <= i.
Value triangularScan(OpBuilder &b, Location loc, Value x, int64_t dim,
                     Type acc, Combiner combiner) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  // Loops: the result dims, then j.
  SmallVector<AffineExpr> inExprs;
  for (int64_t i = 0; i < rank; ++i)
    inExprs.push_back(getAffineDimExpr(i == dim ? rank : i, ctx));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  RankedTensorType accType = type.clone(acc);
  auto generic = b.create<linalg::GenericOp>(
      loc, accType, x,
      buildFilled(b, loc, accType, combiner == Combiner::Prod ? 1.0 : 0.0),
      ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, inExprs, ctx),
                          AffineMap::getMultiDimIdentityMap(rank + 1, ctx)
                              .getMajorSubMap(rank)},
      iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        Value combined = combineElements(combiner, b, l, args[1],
                                         castScalar(b, l, args[0], acc));
        Value included = b.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::ule, b.create<linalg::IndexOp>(l, rank),
            b.create<linalg::IndexOp>(l, dim));
        b.create<linalg::YieldOp>(
            l, b.create<arith::SelectOp>(l, included, combined, args[1]).getResult());
      });
  return generic.getResult(0);
}

/// cumsum / cumprod: out[..., i, ...] = sum (product) over j <= i of
/// x[..., j, ...].
struct CumsumLowering : OpConversionPattern<CumsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CumsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    if (element.isInteger(1))
      return rewriter.notifyMatchFailure(op, "boolean accumulation");
    int64_t rank = type.getRank(), dim = op.getDim();
    Value x = adaptor.getSelf();
    if (rank == 0 || type.getNumElements() == 0) {
      rewriter.replaceOp(op, castTensor(rewriter, loc, x, element));
      return success();
    }
    // f16/bf16 accumulate in f32 and round each running value once, as
    // eager's CPU kernel does (its acc_type).
    Type acc = element.isF16() || element.isBF16() ? rewriter.getF32Type() : element;
    Combiner combiner = op.getProduct() ? Combiner::Prod : Combiner::Sum;
    Value scanned;
    if (type.getDimSize(dim) > kMaxTriangularScan)
      scanned = buildLinearScan(
          rewriter, loc, x, dim,
          scalarConstant(rewriter, loc, acc, combiner == Combiner::Prod ? 1.0 : 0.0),
          [&](OpBuilder &b, Location l, Value, ValueRange v, ValueRange running) {
            return SmallVector<Value>{combineElements(
                combiner, b, l, running[0], castScalar(b, l, v[0], acc))};
          })[0];
    else
      scanned = triangularScan(rewriter, loc, x, dim, acc, combiner);
    rewriter.replaceOp(op, castTensor(rewriter, loc, scanned, element));
    return success();
  }
};

} // namespace

void kiln::aten::populateReductionFamilyPatterns(RewritePatternSet &patterns) {
  patterns.add<TableReductionLowering<ProdOp, Combiner::Prod>,
               TableReductionLowering<AmaxOp, Combiner::Max>,
               TableReductionLowering<AminOp, Combiner::Min>,
               TableReductionLowering<AnyOp, Combiner::Any>,
               TableReductionLowering<AllOp, Combiner::All>, VarLowering,
               ArgReduceLowering, CumsumLowering>(patterns.getContext());
}
