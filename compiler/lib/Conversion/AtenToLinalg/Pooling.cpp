//===- Pooling.cpp - aten.max_pool and aten.avg_pool to linalg ------------===//
//
// This file implements the lowering of pooling over 1-3 spatial dims, the
// trailing ones or, channels last, those before the last: the input is
// padded (-inf or the smallest integer for max, 0 for average) and one
// linalg.generic reduces each window. Max pooling also yields the flat
// spatial index of the first maximum (NaN wins), as PyTorch does; average
// pooling divides by PyTorch's per-window divisor.
//
// Max pooling whose indices nothing reads (eval graphs) pads no copy of the
// whole input: the windows that lie inside it read it directly, and only
// the output's border slabs, whose windows reach into the padding, read
// padded copies of the few input rows they need. After a relu (of one
// use, maybe through a view of one use), it pools the relu's input from 0
// instead of -inf: the maximum of
// relu'd values is the relu of the maximum, so the relu's own pass over
// the larger input goes (not where a window lies wholly in the padding,
// which a dilation past the input allows: its maximum is -inf).
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// The dims of a pooled tensor: `lead` kept dims, `spatial` pooled ones,
/// then `trail` kept dims (1 channels last: the channels, else 0).
struct Window {
  int64_t lead, spatial, trail;
  SmallVector<int64_t> kernel, stride, padding, dilation;

  /// The loops' dim of window position `i`: loops run over (lead...,
  /// out spatial..., trail..., window...).
  int64_t windowDim(int64_t i) const { return lead + spatial + trail + i; }
};

/// Pads the spatial dims: low = padding, high = whatever the last window
/// (ceil mode included) needs beyond the input.
Value padForWindows(OpBuilder &b, Location loc, Value input,
                    ArrayRef<int64_t> outShape, const Window &w, Value padValue) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> low(w.lead, 0), high(w.lead, 0), strides(type.getRank(), 1);
  for (int64_t i = 0; i < w.spatial; ++i) {
    int64_t in = type.getDimSize(w.lead + i), out = outShape[w.lead + i];
    int64_t needed = (out - 1) * w.stride[i] + w.dilation[i] * (w.kernel[i] - 1) + 1;
    low.push_back(w.padding[i]);
    high.push_back(std::max<int64_t>(needed - in - w.padding[i], 0));
  }
  low.append(w.trail, 0);
  high.append(w.trail, 0);
  return buildPadded(b, loc, input, low, high, strides, padValue);
}

/// An empty tensor with the window's shape: linalg needs an operand indexed
/// by the window loops alone to derive their bounds.
Value windowShape(OpBuilder &b, Location loc, const Window &w) {
  return b.create<tensor::EmptyOp>(loc, w.kernel, b.getI1Type());
}

/// Maps for (lead..., o..., trail..., k...) loops: padded input, window
/// shape, output.
SmallVector<AffineMap> windowMaps(MLIRContext *ctx, const Window &w) {
  int64_t loops = w.lead + 2 * w.spatial + w.trail;
  SmallVector<AffineExpr> in, out;
  for (int64_t i = 0; i < w.lead; ++i) {
    in.push_back(getAffineDimExpr(i, ctx));
    out.push_back(getAffineDimExpr(i, ctx));
  }
  for (int64_t i = 0; i < w.spatial; ++i) {
    AffineExpr o = getAffineDimExpr(w.lead + i, ctx);
    AffineExpr k = getAffineDimExpr(w.windowDim(i), ctx);
    in.push_back(o * w.stride[i] + k * w.dilation[i]);
    out.push_back(o);
  }
  for (int64_t t = 0; t < w.trail; ++t) {
    in.push_back(getAffineDimExpr(w.lead + w.spatial + t, ctx));
    out.push_back(getAffineDimExpr(w.lead + w.spatial + t, ctx));
  }
  SmallVector<AffineExpr> window;
  for (int64_t i = 0; i < w.spatial; ++i)
    window.push_back(getAffineDimExpr(w.windowDim(i), ctx));
  return {AffineMap::get(loops, 0, in, ctx), AffineMap::get(loops, 0, window, ctx),
          AffineMap::get(loops, 0, out, ctx)};
}

SmallVector<utils::IteratorType> windowIterators(const Window &w) {
  SmallVector<utils::IteratorType> iterators(w.lead + w.spatial + w.trail,
                                             utils::IteratorType::parallel);
  iterators.append(w.spatial, utils::IteratorType::reduction);
  return iterators;
}

template <typename PoolOp>
Window windowOf(PoolOp op, ArrayRef<int64_t> dilation) {
  Window w;
  w.spatial = op.getKernel().size();
  w.trail = op.getChannelsLast() ? 1 : 0;
  w.lead = cast<RankedTensorType>(op.getSelf().getType()).getRank() - w.spatial -
           w.trail;
  w.kernel.assign(op.getKernel().begin(), op.getKernel().end());
  w.stride.assign(op.getStride().begin(), op.getStride().end());
  w.padding.assign(op.getPadding().begin(), op.getPadding().end());
  w.dilation.assign(dilation.begin(), dilation.end());
  return w;
}

Value index(OpBuilder &b, Location loc, int64_t dim) {
  return b.create<linalg::IndexOp>(loc, dim);
}

/// Whether window element `x` replaces the running maximum `best`: it is
/// greater, or (floats) NaN, which then propagates as in PyTorch.
Value isBetter(OpBuilder &b, Location loc, Value x, Value best) {
  if (isa<FloatType>(x.getType()))
    return b.create<arith::OrIOp>(
        loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, best),
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, x, best);
}

/// The output positions [lo, hi) along each spatial dim, other dims whole.
struct Box {
  SmallVector<int64_t> lo, hi;
};

/// Disjoint boxes covering the output: the interior, whose windows lie
/// inside the input, first, then along each spatial dim the low and high
/// slabs whose windows reach into the padding (earlier dims cut to their
/// interior, later ones whole).
SmallVector<Box> outputPieces(const Window &w, ArrayRef<int64_t> inShape,
                              ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> begin, end; // the interior per spatial dim
  for (int64_t i = 0; i < w.spatial; ++i) {
    int64_t in = inShape[w.lead + i], out = outShape[w.lead + i];
    int64_t reach = w.dilation[i] * (w.kernel[i] - 1);
    // o * s - p >= 0 and o * s - p + reach <= in - 1.
    int64_t first = (w.padding[i] + w.stride[i] - 1) / w.stride[i];
    int64_t last = in - 1 + w.padding[i] - reach >= 0
                       ? (in - 1 + w.padding[i] - reach) / w.stride[i]
                       : -1;
    begin.push_back(std::min(first, out));
    end.push_back(std::clamp<int64_t>(last + 1, begin.back(), out));
  }
  SmallVector<Box> pieces;
  Box interior;
  for (int64_t i = 0; i < w.spatial; ++i) {
    interior.lo.push_back(begin[i]);
    interior.hi.push_back(end[i]);
  }
  pieces.push_back(interior);
  for (int64_t i = 0; i < w.spatial; ++i) {
    for (auto [lo, hi] : {std::pair(int64_t{0}, begin[i]),
                          std::pair(end[i], outShape[w.lead + i])}) {
      Box slab;
      for (int64_t j = 0; j < w.spatial; ++j) {
        bool earlier = j < i;
        slab.lo.push_back(j == i ? lo : earlier ? begin[j] : 0);
        slab.hi.push_back(j == i ? hi : earlier ? end[j] : outShape[w.lead + j]);
      }
      pieces.push_back(slab);
    }
  }
  // Empty boxes (no border on a side, or no interior) compute nothing.
  llvm::erase_if(pieces, [&](const Box &box) {
    for (int64_t i = 0; i < w.spatial; ++i)
      if (box.hi[i] <= box.lo[i])
        return true;
    return false;
  });
  return pieces;
}

/// True when every window has a tap inside the input. With a dilation past
/// the input's extent PyTorch takes windows that lie wholly in the padding
/// (their maximum is the padding's lowest value, which a relu folded in as
/// a start of 0 would change).
bool everyWindowReachesInput(const Window &w, ArrayRef<int64_t> inShape,
                             ArrayRef<int64_t> outShape) {
  for (int64_t i = 0; i < w.spatial; ++i) {
    int64_t in = inShape[w.lead + i];
    for (int64_t o = 0; o < outShape[w.lead + i]; ++o) {
      bool reaches = false;
      for (int64_t k = 0; k < w.kernel[i] && !reaches; ++k) {
        int64_t tap = o * w.stride[i] - w.padding[i] + k * w.dilation[i];
        reaches = tap >= 0 && tap < in;
      }
      if (!reaches)
        return false;
    }
  }
  return true;
}

/// The values of a max pool whose indices nothing reads, computed box by
/// box into one output (each box's generic writes its slice of it): a box
/// reads the input rows its windows cover, padded with `lowest` only where
/// they reach outside the input. Windows start from `init`.
Value maxPoolValues(OpBuilder &b, Location loc, Value input, RankedTensorType type,
                    const Window &w, Value lowest, Value init) {
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Value output = b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps = windowMaps(b.getContext(), w);
  for (const Box &box : outputPieces(w, inType.getShape(), type.getShape())) {
    SmallVector<int64_t> inOffsets(rank, 0), inSizes(inType.getShape()),
        outOffsets(rank, 0), outSizes(type.getShape()), low(rank, 0), high(rank, 0);
    for (int64_t i = 0; i < w.spatial; ++i) {
      int64_t d = w.lead + i, in = inType.getDimSize(d);
      int64_t reach = w.dilation[i] * (w.kernel[i] - 1);
      int64_t from = box.lo[i] * w.stride[i] - w.padding[i];
      int64_t to = (box.hi[i] - 1) * w.stride[i] - w.padding[i] + reach + 1;
      inOffsets[d] = std::clamp<int64_t>(from, 0, in);
      inSizes[d] = std::clamp<int64_t>(to, 0, in) - inOffsets[d];
      low[d] = inOffsets[d] - from;
      high[d] = to - (inOffsets[d] + inSizes[d]);
      outOffsets[d] = box.lo[i];
      outSizes[d] = box.hi[i] - box.lo[i];
    }
    SmallVector<int64_t> ones(rank, 1);
    Value rows = b.create<tensor::ExtractSliceOp>(
        loc, input, getAsIndexOpFoldResult(b.getContext(), inOffsets),
        getAsIndexOpFoldResult(b.getContext(), inSizes),
        getAsIndexOpFoldResult(b.getContext(), ones));
    Value padded = buildPadded(b, loc, rows, low, high, ones, lowest);
    Value part = b.create<tensor::ExtractSliceOp>(
        loc, output, getAsIndexOpFoldResult(b.getContext(), outOffsets),
        getAsIndexOpFoldResult(b.getContext(), outSizes),
        getAsIndexOpFoldResult(b.getContext(), ones));
    Value start = b.create<linalg::FillOp>(loc, init, part).getResult(0);
    auto generic = b.create<linalg::GenericOp>(
        loc, TypeRange{start.getType()},
        ValueRange{padded, windowShape(b, loc, w)}, ValueRange{start}, maps,
        windowIterators(w), [&](OpBuilder &nb, Location l, ValueRange args) {
          Value x = args[0], best = args[2];
          nb.create<linalg::YieldOp>(
              l, nb.create<arith::SelectOp>(l, isBetter(nb, l, x, best), x, best)
                     .getResult());
        });
    output = b.create<tensor::InsertSliceOp>(
        loc, generic.getResult(0), output,
        getAsIndexOpFoldResult(b.getContext(), outOffsets),
        getAsIndexOpFoldResult(b.getContext(), outSizes),
        getAsIndexOpFoldResult(b.getContext(), ones));
  }
  return output;
}

/// The input of a relu that only `pooled` reads (directly, or through a
/// view that only the pool reads: max_pool1d is a 2-d pool of a view), as
/// `type`; null when there is none. The relu commutes with the view.
Value reluInput(ConversionPatternRewriter &rewriter, Location loc, Value pooled,
                RankedTensorType type) {
  auto view = pooled.getDefiningOp<ViewOp>();
  if (view && view->hasOneUse())
    pooled = view.getSelf();
  auto relu = pooled.getDefiningOp<ReluOp>();
  if (!relu || !relu->hasOneUse())
    return {};
  Value input = rewriter.getRemappedValue(relu.getSelf());
  return input.getType() == type ? input : buildReshape(rewriter, loc, input, type);
}

struct MaxPoolLowering : OpConversionPattern<MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType valuesType = op.getValues().getType();
    RankedTensorType indicesType = op.getIndices().getType();
    Type element = valuesType.getElementType();
    if (element.isInteger(1))
      return rewriter.notifyMatchFailure(op, "boolean max pooling");
    Window w = windowOf(op, op.getDilation());
    auto inType = cast<RankedTensorType>(adaptor.getSelf().getType());
    Value lowest;
    if (auto f = dyn_cast<FloatType>(element))
      lowest = rewriter.create<arith::ConstantOp>(
          loc, rewriter.getFloatAttr(f, -std::numeric_limits<double>::infinity()));
    else
      lowest = rewriter.create<arith::ConstantOp>(
          loc, rewriter.getIntegerAttr(
                   element, APInt::getSignedMinValue(element.getIntOrFloatBitWidth())));
    if (op.getIndices().use_empty()) {
      // Nothing reads the indices (max_pool2d in eval graphs): the values
      // alone, without the flat-index arithmetic in every window step. The
      // indices result has no uses, so any tensor of its type will do.
      Value input = adaptor.getSelf(), init = lowest;
      if (everyWindowReachesInput(w, inType.getShape(), valuesType.getShape()))
        if (Value unrelued = reluInput(rewriter, loc, op.getSelf(), inType)) {
          input = unrelued;
          init = scalarConstant(rewriter, loc, element, 0.0);
        }
      Value values = maxPoolValues(rewriter, loc, input, valuesType, w, lowest, init);
      Value unusedIndices = rewriter.create<tensor::EmptyOp>(
          loc, indicesType.getShape(), indicesType.getElementType());
      rewriter.replaceOp(op, ValueRange{values, unusedIndices});
      return success();
    }
    Value padded = padForWindows(rewriter, loc, adaptor.getSelf(),
                                 valuesType.getShape(), w, lowest);
    Value valuesInit =
        rewriter
            .create<linalg::FillOp>(
                loc, lowest,
                rewriter.create<tensor::EmptyOp>(loc, valuesType.getShape(), element)
                    .getResult())
            .getResult(0);
    SmallVector<AffineMap> maps = windowMaps(rewriter.getContext(), w);
    Value indicesInit = buildFilled(rewriter, loc, indicesType, -1.0);
    maps.push_back(maps[2]);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{valuesType, indicesType},
        ValueRange{padded, windowShape(rewriter, loc, w)},
        ValueRange{valuesInit, indicesInit}, maps, windowIterators(w),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[2], bestIndex = args[3];
          // Flat index of this element in the unpadded input plane.
          Type i64 = b.getI64Type();
          Value flat = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0));
          for (int64_t i = 0; i < w.spatial; ++i) {
            Value o = index(b, l, w.lead + i), k = index(b, l, w.windowDim(i));
            Value pos = b.create<arith::AddIOp>(
                l,
                b.create<arith::MulIOp>(
                    l, o, b.create<arith::ConstantIndexOp>(l, w.stride[i])),
                b.create<arith::MulIOp>(
                    l, k, b.create<arith::ConstantIndexOp>(l, w.dilation[i])));
            pos = b.create<arith::SubIOp>(
                l, pos, b.create<arith::ConstantIndexOp>(l, w.padding[i]));
            Value extent = b.create<arith::ConstantOp>(
                l, b.getI64IntegerAttr(inType.getDimSize(w.lead + i)));
            flat = b.create<arith::AddIOp>(
                l, b.create<arith::MulIOp>(l, flat, extent),
                b.create<arith::IndexCastOp>(l, i64, pos));
          }
          Value better = isBetter(b, l, x, best);
          // The first window element always counts (padding included), so
          // an all-padding window still yields a valid index.
          Value first = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::slt, bestIndex,
              b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)));
          better = b.create<arith::OrIOp>(l, better, first);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, better, x, best),
                            b.create<arith::SelectOp>(l, better, flat, bestIndex)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct AvgPoolLowering : OpConversionPattern<AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    Type outElement = outType.getElementType();
    // Eager sums in f32 for f16/bf16 and in int64 for integers, and divides
    // integers with truncation toward zero.
    bool isFloat = isa<FloatType>(outElement);
    Type element = isFloat ? accumulatorType(rewriter, outElement)
                           : Type(rewriter.getI64Type());
    RankedTensorType type = outType.clone(element);
    SmallVector<int64_t> ones(op.getKernel().size(), 1);
    Window w = windowOf(op, ones);
    auto inType = cast<RankedTensorType>(adaptor.getSelf().getType());
    Value zero = scalarConstant(rewriter, loc, inType.getElementType(), 0.0);
    Value padded = padForWindows(rewriter, loc, adaptor.getSelf(),
                                 type.getShape(), w, zero);
    Value sum =
        rewriter
            .create<linalg::GenericOp>(
                loc, type, ValueRange{padded, windowShape(rewriter, loc, w)},
                buildFilled(rewriter, loc, type, 0.0),
                windowMaps(rewriter.getContext(), w), windowIterators(w),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value x = castScalar(b, l, args[0], element);
                  Value total =
                      isFloat ? b.create<arith::AddFOp>(l, args[2], x).getResult()
                              : b.create<arith::AddIOp>(l, args[2], x).getResult();
                  b.create<linalg::YieldOp>(l, total);
                })
            .getResult(0);
    auto divide = [&](OpBuilder &b, Location l, Value total, Value divisor) -> Value {
      divisor = castScalar(b, l, divisor, element);
      return isFloat ? b.create<arith::DivFOp>(l, total, divisor).getResult()
                     : b.create<arith::DivSIOp>(l, total, divisor).getResult();
    };
    int64_t divisorOverride = op.getDivisorOverride();
    bool includePad = op.getCountIncludePad();
    // PyTorch: the window [o*s - p, o*s - p + k) clipped to the padded
    // input, then (without count_include_pad) to the input.
    Value result = buildElementwise(
        rewriter, loc, type, sum,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          if (divisorOverride)
            return divide(b, l, args[0],
                          scalarConstant(b, l, element, double(divisorOverride)));
          Type i64 = b.getI64Type();
          auto c = [&](int64_t v) -> Value {
            return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v));
          };
          Value count = c(1);
          for (int64_t i = 0; i < w.spatial; ++i) {
            int64_t in = inType.getDimSize(w.lead + i);
            Value o = b.create<arith::IndexCastOp>(
                l, i64, b.create<linalg::IndexOp>(l, w.lead + i));
            Value start = b.create<arith::SubIOp>(
                l, b.create<arith::MulIOp>(l, o, c(w.stride[i])), c(w.padding[i]));
            Value end = b.create<arith::MinSIOp>(
                l, b.create<arith::AddIOp>(l, start, c(w.kernel[i])),
                c(in + w.padding[i]));
            if (!includePad) {
              start = b.create<arith::MaxSIOp>(l, start, c(0));
              end = b.create<arith::MinSIOp>(l, end, c(in));
            }
            count = b.create<arith::MulIOp>(
                l, count, b.create<arith::SubIOp>(l, end, start));
          }
          return divide(b, l, args[0], count);
        });
    rewriter.replaceOp(op, castTensor(rewriter, loc, result, outElement));
    return success();
  }
};

} // namespace

void kiln::aten::populatePoolingPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AvgPoolLowering>(patterns.getContext());
}
