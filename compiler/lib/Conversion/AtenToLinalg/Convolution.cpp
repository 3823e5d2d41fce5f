//===- Convolution.cpp - aten.convolution to linalg -----------------------===//
//
// This file implements the lowering of aten.convolution for 1-3 spatial dims:
//  * padding is an insert_slice into a zero-filled tensor;
//  * depthwise (one input and one output channel per group) is one
//    linalg.generic reducing over the kernel window;
//  * everything else is im2col (a gathering linalg.generic) followed by
//    linalg.batch_matmul over (batch x group), which the CPU pipeline tiles
//    and vectorizes like any matmul;
//  * integer convolutions compute in their type (products and sums wrap,
//    as eager's do), floats in f32 at least;
//  * transposed convolution becomes a stride-1 convolution of the input
//    dilated by the stride and padded by dilation * (k - 1) - padding, with
//    the kernel flipped and its channel dims swapped per group.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

/// A tensor of `shape` whose element at index i is `source` at
/// `sourceIndex(i)`: a copying linalg.generic reading through an affine map.
Value gather(OpBuilder &b, Location loc, Value source, ArrayRef<int64_t> shape,
             ArrayRef<AffineExpr> sourceIndex) {
  MLIRContext *ctx = b.getContext();
  Type element = cast<RankedTensorType>(source.getType()).getElementType();
  int64_t loops = shape.size();
  Value init = b.create<tensor::EmptyOp>(loc, shape, element);
  return b
      .create<linalg::GenericOp>(
          loc, RankedTensorType::get(shape, element), source, init,
          ArrayRef<AffineMap>{AffineMap::get(loops, 0, sourceIndex, ctx),
                              b.getMultiDimIdentityMap(loops)},
          SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, args[0]);
          })
      .getResult(0);
}

int64_t product(ArrayRef<int64_t> values) {
  int64_t p = 1;
  for (int64_t v : values)
    p *= v;
  return p;
}

/// The geometry of a stride/dilation convolution over an already padded
/// input: x (N, C, I...), w (F, C/G, K...), result (N, F, O...).
struct ConvGeometry {
  int64_t groups;
  SmallVector<int64_t> stride, dilation;
};

/// out[n, c, o...] = sum_k x[n, c, o*s + k*d] * w[c, 0, k] (depthwise).
Value buildDepthwise(OpBuilder &b, Location loc, Value x, Value w,
                     RankedTensorType resultType, const ConvGeometry &g) {
  MLIRContext *ctx = b.getContext();
  int64_t s = resultType.getRank() - 2;
  // Loops: n, c, o..., k...
  int64_t loops = 2 + 2 * s;
  SmallVector<AffineExpr> xExprs = {getAffineDimExpr(0, ctx),
                                    getAffineDimExpr(1, ctx)};
  SmallVector<AffineExpr> wExprs = {getAffineDimExpr(1, ctx),
                                    getAffineConstantExpr(0, ctx)};
  SmallVector<AffineExpr> outExprs = {getAffineDimExpr(0, ctx),
                                      getAffineDimExpr(1, ctx)};
  for (int64_t i = 0; i < s; ++i) {
    AffineExpr o = getAffineDimExpr(2 + i, ctx), k = getAffineDimExpr(2 + s + i, ctx);
    xExprs.push_back(o * g.stride[i] + k * g.dilation[i]);
    wExprs.push_back(k);
    outExprs.push_back(o);
  }
  SmallVector<utils::IteratorType> iterators(2 + s, utils::IteratorType::parallel);
  iterators.append(s, utils::IteratorType::reduction);
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xExprs, ctx),
                                 AffineMap::get(loops, 0, wExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  Value init = buildFilled(b, loc, resultType, 0.0);
  return b
      .create<linalg::GenericOp>(
          loc, resultType, ValueRange{x, w}, init, maps, iterators,
          [](OpBuilder &nb, Location l, ValueRange args) {
            // Floats, or integers that wrap, as eager's integer convolutions do.
            Value p = combineElements(Combiner::Prod, nb, l, args[0], args[1]);
            nb.create<linalg::YieldOp>(l, combineElements(Combiner::Sum, nb, l, args[2], p));
          })
      .getResult(0);
}

/// Largest power of two (at most 16) dividing `extent`: the vector width the
/// matmul tiling can use along a dimension of that extent.
int64_t vectorWidth(int64_t extent) {
  int64_t width = 1;
  while (width < 16 && extent % (width * 2) == 0)
    width *= 2;
  return width;
}

Value transpose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  Value init = b.create<tensor::EmptyOp>(loc, shape, type.getElementType());
  return b.create<linalg::TransposeOp>(loc, v, init, perm).getResult()[0];
}

/// im2col + batch_matmul for any group count. The product is
/// (F/G x K) * (K x P) when the spatial size P vectorizes at least as well as
/// the channel count, else the transposed (P x K) * (K x F/G), so the
/// matmul's vectorized dimension is never a small odd extent (7x7 maps).
/// Spatial-major with one group folds the batch into the rows, (N*P x K) *
/// (K x F), instead of repeating the weights per image: for resnet18's last
/// stage at batch 8 that copy was 66 MB per convolution per call, and one
/// weight operand lets the matmul pack it straight from the transpose.
Value buildIm2col(OpBuilder &b, Location loc, Value x, Value w,
                  RankedTensorType resultType, const ConvGeometry &g) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  Type element = resultType.getElementType();
  int64_t s = resultType.getRank() - 2;
  int64_t n = xType.getDimSize(0), groups = g.groups;
  int64_t cg = wType.getDimSize(1), f = wType.getDimSize(0), fg = f / groups;
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  ArrayRef<int64_t> out = resultType.getShape().drop_front(2);
  int64_t k = cg * product(kernel), p = product(out);
  bool spatialMajor = vectorWidth(p) < vectorWidth(fg);
  // Rows (n, o...) are contiguous in spatial-major cols, so the batch folds
  // into the matmul's M when there is one group.
  bool foldBatch = spatialMajor && groups == 1 && n > 1;
  int64_t batches = foldBatch ? 1 : n * groups;

  // cols[n, g, c, k..., o...] (or [n, g, o..., c, k...] spatial-major)
  //   = x[n, g*cg + c, o*s + k*d].
  int64_t loops = 3 + 2 * s;
  int64_t cLoop = spatialMajor ? 2 + s : 2;
  int64_t kLoop = cLoop + 1;
  int64_t oLoop = spatialMajor ? 2 : 3 + s;
  SmallVector<int64_t> colsShape(loops);
  colsShape[0] = n;
  colsShape[1] = groups;
  colsShape[cLoop] = cg;
  for (int64_t i = 0; i < s; ++i) {
    colsShape[kLoop + i] = kernel[i];
    colsShape[oLoop + i] = out[i];
  }
  SmallVector<AffineExpr> xExprs = {
      getAffineDimExpr(0, ctx),
      getAffineDimExpr(1, ctx) * cg + getAffineDimExpr(cLoop, ctx)};
  for (int64_t i = 0; i < s; ++i)
    xExprs.push_back(getAffineDimExpr(oLoop + i, ctx) * g.stride[i] +
                     getAffineDimExpr(kLoop + i, ctx) * g.dilation[i]);
  Value cols = gather(b, loc, x, colsShape, xExprs);
  SmallVector<int64_t> colsFlat = {batches, k, p};
  if (spatialMajor)
    colsFlat = {batches, foldBatch ? n * p : p, k};
  cols = buildReshape(b, loc, cols, RankedTensorType::get(colsFlat, element));

  // Weights (G, Fg, K) or (G, K, Fg), repeated over the batch when N > 1
  // unless the batch is folded.
  Value weights = buildReshape(b, loc, w,
                               RankedTensorType::get({groups, fg, k}, element));
  if (spatialMajor)
    weights = transpose(b, loc, weights, {0, 2, 1});
  ArrayRef<int64_t> perGroup =
      cast<RankedTensorType>(weights.getType()).getShape().drop_front();
  if (n > 1 && !foldBatch) {
    auto repeated = RankedTensorType::get({n, groups, perGroup[0], perGroup[1]},
                                          element);
    weights = buildElementwise(
        b, loc, repeated, weights,
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  }
  if (!foldBatch)
    weights = buildReshape(
        b, loc, weights,
        RankedTensorType::get({batches, perGroup[0], perGroup[1]}, element));

  Value lhs = spatialMajor ? cols : weights, rhs = spatialMajor ? weights : cols;
  SmallVector<int64_t> productShape = {batches, fg, p};
  if (spatialMajor)
    productShape = {batches, foldBatch ? n * p : p, fg};
  auto productType = RankedTensorType::get(productShape, element);
  Value acc = buildFilled(b, loc, productType, 0.0);
  Value product =
      b.create<linalg::BatchMatmulOp>(loc, ValueRange{lhs, rhs}, acc).getResult(0);
  if (foldBatch)
    product = buildReshape(b, loc, product,
                           RankedTensorType::get({n, p, fg}, element));
  if (spatialMajor)
    product = transpose(b, loc, product, {0, 2, 1});
  return buildReshape(b, loc, product, resultType);
}

/// Transposed weight (C_in, F/G, K...) -> flipped forward weight (F, C_in/G, K...).
Value flipTransposedWeight(OpBuilder &b, Location loc, Value w, int64_t groups) {
  MLIRContext *ctx = b.getContext();
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t cin = wType.getDimSize(0), fg = wType.getDimSize(1), cg = cin / groups;
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  int64_t s = kernel.size();
  // out[g, f, c, k...] = w[g*cg + c, f, K-1-k].
  SmallVector<int64_t> shape = {groups, fg, cg};
  shape.append(kernel.begin(), kernel.end());
  SmallVector<AffineExpr> exprs = {
      getAffineDimExpr(0, ctx) * cg + getAffineDimExpr(2, ctx),
      getAffineDimExpr(1, ctx)};
  for (int64_t i = 0; i < s; ++i)
    exprs.push_back(kernel[i] - 1 - getAffineDimExpr(3 + i, ctx));
  Value flipped = gather(b, loc, w, shape, exprs);
  SmallVector<int64_t> forward = {groups * fg, cg};
  forward.append(kernel.begin(), kernel.end());
  return buildReshape(b, loc, flipped,
                      RankedTensorType::get(forward, wType.getElementType()));
}

struct ConvolutionLowering : OpConversionPattern<ConvolutionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvolutionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    if (outType.getElementType().isInteger(1))
      return rewriter.notifyMatchFailure(op, "needs a float or integer (not bool) result");
    // f16/bf16 convolve in f32 (products, sums and the bias) and round once,
    // as PyTorch's CPU kernels do: 3x3x64 terms summed in f16 drift by 10%.
    Type element = accumulatorType(rewriter, outType.getElementType());
    RankedTensorType resultType = outType.clone(element);
    Value x = castTensor(rewriter, loc, adaptor.getInput(), element);
    Value w = castTensor(rewriter, loc, adaptor.getWeight(), element);
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t s = resultType.getRank() - 2;
    ConvGeometry geometry{static_cast<int64_t>(op.getGroups()), SmallVector<int64_t>(op.getStride()),
                          SmallVector<int64_t>(op.getDilation())};
    SmallVector<int64_t> low(2, 0), high(2, 0), strides(2, 1);
    for (int64_t i = 0; i < s; ++i) {
      int64_t p = op.getPadding()[i];
      if (op.getTransposed()) {
        int64_t edge = op.getDilation()[i] * (wType.getDimSize(2 + i) - 1) - p;
        if (edge < 0)
          return rewriter.notifyMatchFailure(
              op, "transposed convolution with padding above dilation * "
                  "(kernel - 1)");
        low.push_back(edge);
        high.push_back(edge + op.getOutputPadding()[i]);
        strides.push_back(op.getStride()[i]);
        geometry.stride[i] = 1;
      } else {
        low.push_back(p);
        high.push_back(p);
        strides.push_back(1);
      }
    }
    Value zero = scalarConstant(rewriter, loc, element, 0.0);
    x = buildPadded(rewriter, loc, x, low, high, strides, zero);
    if (op.getTransposed())
      w = flipTransposedWeight(rewriter, loc, w, op.getGroups());
    auto forwardW = cast<RankedTensorType>(w.getType());
    int64_t groups = op.getGroups();
    bool depthwise = forwardW.getDimSize(1) == 1 &&
                     forwardW.getDimSize(0) == groups;
    Value result = depthwise
                       ? buildDepthwise(rewriter, loc, x, w, resultType, geometry)
                       : buildIm2col(rewriter, loc, x, w, resultType, geometry);
    if (Value bias = adaptor.getBias()) {
      SmallVector<int64_t> biasShape(s + 1, 1);
      biasShape[0] = resultType.getDimSize(1);
      auto biasType = cast<RankedTensorType>(bias.getType());
      bias = castTensor(
          rewriter, loc,
          buildReshape(rewriter, loc, bias, biasType.clone(biasShape)), element);
      result = buildElementwise(
          rewriter, loc, resultType, {result, bias},
          [](OpBuilder &b, Location l, ValueRange args) -> Value {
            return combineElements(Combiner::Sum, b, l, args[0], args[1]);
          });
    }
    rewriter.replaceOp(op, castTensor(rewriter, loc, result,
                                      outType.getElementType()));
    return success();
  }
};

} // namespace

void kiln::aten::populateConvolutionPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvolutionLowering>(patterns.getContext());
}
