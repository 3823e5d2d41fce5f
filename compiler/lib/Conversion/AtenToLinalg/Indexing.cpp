//===- Indexing.cpp - slice, cat, index_select, gather to tensor/linalg ---===//
//
// This file implements the lowering of ATen's slicing and indexing ops:
// slices are tensor.extract_slice, concatenation is insert_slice into an
// empty tensor, and index_select/gather are linalg.generic ops whose bodies
// read the source with tensor.extract at a wrapped and clamped index (an
// out-of-range index never reads outside the tensor). A scatter into a dim
// of at most kDenseScatterExtent positions is a linalg.generic comparing
// every target position with every index (vectorisable); a longer one is a
// loop nest over the index writing each value at its target (O(index)
// rather than O(index x extent)). Both combine the values that meet at one
// position in index order, and an index out of range writes nothing.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/StringSwitch.h"

#include <functional>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// An index scalar read from an index tensor, as i64, with a negative index
/// wrapped once (PyTorch's -1 is the last element).
Value wrappedIndex(OpBuilder &b, Location loc, Value raw, int64_t extent) {
  Type i64 = b.getI64Type();
  Value v = raw.getType() == i64 ? raw : b.create<arith::ExtSIOp>(loc, i64, raw);
  Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  Value size = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(extent));
  Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, v, zero);
  return b.create<arith::SelectOp>(loc, negative,
                                   b.create<arith::AddIOp>(loc, v, size), v);
}

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    // A dimension of symbolic size is taken whole: its size is the input's.
    SmallVector<OpFoldResult> sizes;
    for (auto [d, extent] : llvm::enumerate(op.getType().getShape()))
      sizes.push_back(ShapedType::isDynamic(extent)
                          ? tensor::getMixedSize(rewriter, op.getLoc(),
                                                 adaptor.getSelf(), d)
                          : rewriter.getIndexAttr(extent));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), adaptor.getSelf(),
        getAsIndexOpFoldResult(ctx, op.getOffsets()), sizes,
        getAsIndexOpFoldResult(ctx, op.getStrides()));
    return success();
  }
};

struct InsertSliceLowering : OpConversionPattern<InsertSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(InsertSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    Value src = castTensor(rewriter, op.getLoc(), adaptor.getSrc(),
                           op.getType().getElementType());
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, src, adaptor.getSelf(), getAsIndexOpFoldResult(ctx, op.getOffsets()),
        getAsIndexOpFoldResult(
            ctx, cast<RankedTensorType>(src.getType()).getShape()),
        getAsIndexOpFoldResult(ctx, op.getStrides()));
    return success();
  }
};

/// out[i, r...] over loops (i, r..., k): rows where index[k] == i take (or
/// add) values[k, r...]; k ascending, so the last write wins.
struct IndexPutLowering : OpConversionPattern<IndexPutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IndexPutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    int64_t rank = type.getRank(), extent = type.getDimSize(0);
    Value values = castTensor(rewriter, loc, adaptor.getValues(), element);
    SmallVector<AffineExpr> valueExprs = {getAffineDimExpr(rank, ctx)};
    for (int64_t i = 1; i < rank; ++i)
      valueExprs.push_back(getAffineDimExpr(i, ctx));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    bool accumulate = op.getAccumulate();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{adaptor.getIndex(), values}, adaptor.getSelf(),
        ArrayRef<AffineMap>{
            AffineMap::get(rank + 1, 0, getAffineDimExpr(rank, ctx)),
            AffineMap::get(rank + 1, 0, valueExprs, ctx),
            AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Type i64 = b.getI64Type();
          Value wrapped = wrappedIndex(b, l, args[0], extent);
          Value row = b.create<arith::IndexCastOp>(l, i64,
                                                   b.create<linalg::IndexOp>(l, 0));
          Value match =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, wrapped, row);
          Value updated = args[1];
          if (accumulate)
            updated = combineElements(Combiner::Sum, b, l, args[2], args[1]);
          b.create<linalg::YieldOp>(
              l, b.create<arith::SelectOp>(l, match, updated, args[2]).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The longest scatter dim written as a dense comparison of every target
/// position with every index.
constexpr int64_t kDenseScatterExtent = 16;

/// `self` with `src`'s values written at `index` along `dim` (combined by
/// `combiner`, else replacing): a loop nest over the index's positions in
/// row-major order, each reading and writing one target element. An index
/// outside [-extent, extent) writes nothing.
Value scatterByLoop(OpBuilder &b, Location loc, Value self, Value index, Value src,
                    int64_t dim, std::optional<Combiner> combiner) {
  auto type = cast<RankedTensorType>(self.getType());
  ArrayRef<int64_t> shape = cast<RankedTensorType>(index.getType()).getShape();
  const int64_t extent = type.getDimSize(dim);
  Value out = b.create<bufferization::AllocTensorOp>(loc, type, ValueRange{}, self);
  SmallVector<Value> coords;
  std::function<Value(OpBuilder &, Location, Value, size_t)> nest =
      [&](OpBuilder &b, Location l, Value out, size_t d) -> Value {
    if (d == shape.size()) {
      Value raw = b.create<tensor::ExtractOp>(l, index, coords);
      Value x = b.create<tensor::ExtractOp>(l, src, coords);
      Value wrapped = wrappedIndex(b, l, raw, extent);
      Value zero = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0));
      Value inRange = b.create<arith::AndIOp>(
          l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, wrapped, zero),
          b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, wrapped,
                                  b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(extent))));
      SmallVector<Value> target(coords);
      target[dim] = b.create<arith::IndexCastOp>(
          l, b.getIndexType(), b.create<arith::SelectOp>(l, inRange, wrapped, zero));
      Value old = b.create<tensor::ExtractOp>(l, out, target);
      Value combined = combiner ? combineElements(*combiner, b, l, old, x) : x;
      Value next = b.create<arith::SelectOp>(l, inRange, combined, old);
      return b.create<tensor::InsertOp>(l, next, out, target);
    }
    auto loop = b.create<scf::ForOp>(
        l, b.create<arith::ConstantIndexOp>(l, 0),
        b.create<arith::ConstantIndexOp>(l, shape[d]), b.create<arith::ConstantIndexOp>(l, 1),
        ValueRange{out}, [&](OpBuilder &nb, Location nl, Value iv, ValueRange carried) {
          coords.push_back(iv);
          Value written = nest(nb, nl, carried[0], d + 1);
          coords.pop_back();
          nb.create<scf::YieldOp>(nl, written);
        });
    return loop.getResult(0);
  };
  return nest(b, loc, out, 0);
}

/// scatter: loops (self dims..., k); index/src read with `dim` replaced by
/// k; where index == the output coordinate along dim, combine (past
/// kDenseScatterExtent, scatterByLoop).
struct ScatterLowering : OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    int64_t rank = type.getRank(), dim = op.getDim();
    int64_t extent = type.getDimSize(dim);
    std::optional<Combiner> combiner =
        llvm::StringSwitch<std::optional<Combiner>>(op.getReduce())
            .Case("sum", Combiner::Sum)
            .Case("prod", Combiner::Prod)
            .Case("amax", Combiner::Max)
            .Case("amin", Combiner::Min)
            .Default(std::nullopt);
    Value src = castTensor(rewriter, loc, adaptor.getSrc(), element);
    if (extent > kDenseScatterExtent) {
      rewriter.replaceOp(op, scatterByLoop(rewriter, loc, adaptor.getSelf(), adaptor.getIndex(),
                                           src, dim, combiner));
      return success();
    }
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i == dim ? rank : i, ctx));
    AffineMap readMap = AffineMap::get(rank + 1, 0, exprs, ctx);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{adaptor.getIndex(), src}, adaptor.getSelf(),
        ArrayRef<AffineMap>{
            readMap, readMap,
            AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Type i64 = b.getI64Type();
          Value wrapped = wrappedIndex(b, l, args[0], extent);
          Value at = b.create<arith::IndexCastOp>(l, i64,
                                                  b.create<linalg::IndexOp>(l, dim));
          Value match = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, wrapped, at);
          Value acc = args[2], x = args[1];
          Value combined = combiner ? combineElements(*combiner, b, l, acc, x) : x;
          b.create<linalg::YieldOp>(
              l, b.create<arith::SelectOp>(l, match, combined, acc).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = op.getType().getElementType();
    Value value = scalarConstant(rewriter, loc, element,
                                 op.getValue().convertToDouble());
    int64_t rank = op.getType().getRank();
    SmallVector<int64_t> strides(rank, 1), low, high, offsets, sizes;
    Value input = adaptor.getSelf();
    auto in = cast<RankedTensorType>(input.getType());
    bool crops = false;
    // Negative amounts crop first: a slice of what stays, then the padding.
    for (int64_t d = 0; d < rank; ++d) {
      int64_t lo = op.getLow()[d], hi = op.getHigh()[d];
      crops |= lo < 0 || hi < 0;
      offsets.push_back(std::max<int64_t>(-lo, 0));
      sizes.push_back(in.getDimSize(d) + std::min<int64_t>(lo, 0) +
                      std::min<int64_t>(hi, 0));
      low.push_back(std::max<int64_t>(lo, 0));
      high.push_back(std::max<int64_t>(hi, 0));
    }
    if (crops && !in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "cropping a tensor with symbolic sizes");
    if (crops)
      input = rewriter.create<tensor::ExtractSliceOp>(
          loc, in.clone(sizes), input, ValueRange{}, ValueRange{}, ValueRange{},
          rewriter.getDenseI64ArrayAttr(offsets), rewriter.getDenseI64ArrayAttr(sizes),
          rewriter.getDenseI64ArrayAttr(strides));
    rewriter.replaceOp(op, buildPadded(rewriter, loc, input, low, high, strides, value));
    return success();
  }
};

struct CatLowering : OpConversionPattern<CatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Value result = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                    type.getElementType());
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    int64_t dim = op.getDim();
    for (Value input : adaptor.getInputs()) {
      input = castTensor(rewriter, loc, input, type.getElementType());
      ArrayRef<int64_t> shape = cast<RankedTensorType>(input.getType()).getShape();
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, input, result, getAsIndexOpFoldResult(ctx, offsets),
          getAsIndexOpFoldResult(ctx, shape), getAsIndexOpFoldResult(ctx, strides));
      offsets[dim] += shape[dim];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// An index scalar read from an index tensor: negative wraps once, then
/// clamped to [0, extent).
Value safeIndex(OpBuilder &b, Location loc, Value raw, int64_t extent) {
  auto c = [&](int64_t x) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(x));
  };
  Value v = wrappedIndex(b, loc, raw, extent);
  v = b.create<arith::MaxSIOp>(loc, v, c(0));
  v = b.create<arith::MinSIOp>(loc, v, c(extent - 1));
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
}

/// A generic over the result that reads `index` through `indexMap` and
/// extracts from `source` at the coordinates `coords(b, loc, idx)` builds.
/// The result's dynamic dims are `index`'s: result dim d is index dim
/// `indexDimOf(d)`.
Value buildIndexedRead(
    OpBuilder &b, Location loc, RankedTensorType resultType, Value index,
    AffineMap indexMap,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value)> coords,
    Value source, function_ref<int64_t(int64_t)> indexDimOf) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < rank; ++d)
    if (resultType.isDynamicDim(d))
      dynamicSizes.push_back(b.create<tensor::DimOp>(loc, index, indexDimOf(d)));
  Value init = b.create<tensor::EmptyOp>(loc, resultType.getShape(),
                                         resultType.getElementType(), dynamicSizes);
  return b
      .create<linalg::GenericOp>(
          loc, resultType, index, init,
          ArrayRef<AffineMap>{indexMap, b.getMultiDimIdentityMap(rank)},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value v = nb.create<tensor::ExtractOp>(l, source,
                                                   coords(nb, l, args[0]));
            nb.create<linalg::YieldOp>(l, v);
          })
      .getResult(0);
}

struct IndexSelectLowering : OpConversionPattern<IndexSelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IndexSelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    auto selfType = cast<RankedTensorType>(adaptor.getSelf().getType());
    int64_t dim = op.getDim();
    int64_t indexRank = cast<RankedTensorType>(op.getIndex().getType()).getRank();
    int64_t rank = op.getType().getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < indexRank; ++i)
      exprs.push_back(getAffineDimExpr(dim + i, ctx));
    AffineMap indexMap = AffineMap::get(rank, 0, exprs, ctx);
    int64_t extent = selfType.getDimSize(dim);
    Value result = buildIndexedRead(
        rewriter, op.getLoc(), op.getType(), adaptor.getIndex(), indexMap,
        [&](OpBuilder &b, Location l, Value raw) {
          SmallVector<Value> coords;
          for (int64_t i = 0; i < dim; ++i)
            coords.push_back(b.create<linalg::IndexOp>(l, i));
          coords.push_back(safeIndex(b, l, raw, extent));
          for (int64_t i = dim + indexRank; i < rank; ++i)
            coords.push_back(b.create<linalg::IndexOp>(l, i));
          return coords;
        },
        adaptor.getSelf(), [&](int64_t d) { return d - dim; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto selfType = cast<RankedTensorType>(adaptor.getSelf().getType());
    int64_t dim = op.getDim(), rank = op.getType().getRank();
    int64_t extent = selfType.getDimSize(dim);
    Value result = buildIndexedRead(
        rewriter, op.getLoc(), op.getType(), adaptor.getIndex(),
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location l, Value raw) {
          SmallVector<Value> coords;
          for (int64_t i = 0; i < rank; ++i)
            coords.push_back(i == dim ? safeIndex(b, l, raw, extent)
                                      : b.create<linalg::IndexOp>(l, i).getResult());
          return coords;
        },
        adaptor.getSelf(), [](int64_t d) { return d; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// arange: start + i * step in f64, converted to the result element type.
struct ArangeLowering : OpConversionPattern<ArangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    double start = op.getStart().convertToDouble();
    double step = op.getStep().convertToDouble();
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                  type.getElementType());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{}, init,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(1)},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          Type f64 = b.getF64Type();
          Value i = b.create<arith::IndexCastOp>(
              l, b.getI64Type(), b.create<linalg::IndexOp>(l, 0));
          Value v = b.create<arith::AddFOp>(
              l, scalarConstant(b, l, f64, start),
              b.create<arith::MulFOp>(l, b.create<arith::SIToFPOp>(l, f64, i),
                                      scalarConstant(b, l, f64, step)));
          b.create<linalg::YieldOp>(l, castScalar(b, l, v, type.getElementType()));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void kiln::aten::populateIndexingPatterns(RewritePatternSet &patterns) {
  patterns.add<SliceLowering, InsertSliceLowering, IndexPutLowering, ScatterLowering, PadLowering, CatLowering, IndexSelectLowering, GatherLowering,
               ArangeLowering>(patterns.getContext());
}
