//===- AtenNNOps.cpp - verifiers of convolution and pooling ---------------===//
//
// This file implements the verifiers of aten.convolution, aten.max_pool,
// aten.avg_pool, the adaptive pools and aten.grid_sample: attribute
// lengths, channel and group arithmetic, and the output extents PyTorch's
// shape functions give.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "kiln/Dialect/Aten/IR/AdaptiveWindows.h"

#include "VerifyUtils.h"

#include <cmath>

using namespace mlir;
using namespace kiln::aten;

namespace {


WideInt floorDiv(WideInt a, WideInt b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// Checks `out` against the floor- or ceil-mode pooling extent of `in`.
bool poolExtentMatches(int64_t in, int64_t out, int64_t k, int64_t s,
                       int64_t p, int64_t d) {
  WideInt span = WideInt(in) + WideInt(2) * p - WideInt(d) * (k - 1) - 1;
  WideInt floorOut = floorDiv(span, s) + 1;
  WideInt ceilOut = floorDiv(span + s - 1, s) + 1;
  // PyTorch drops a last window that would start inside the right padding.
  if ((ceilOut - 1) * s >= WideInt(in) + p)
    --ceilOut;
  return out == floorOut || out == ceilOut;
}

/// With `channelsLast`, the data is (n, spatial..., c) and its last dim is
/// kept; else (n, c, spatial...) or (c, spatial...).
LogicalResult verifyPoolAttrs(Operation *op, Value input, ArrayRef<int64_t> out,
                              ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding,
                              ArrayRef<int64_t> dilation, bool channelsLast) {
  ArrayRef<int64_t> in = shapeOf(input);
  size_t s = kernel.size();
  if (s < 1 || s > 3 || stride.size() != s || padding.size() != s ||
      dilation.size() != s)
    return op->emitOpError("kernel, stride, padding and dilation need 1 to 3 "
                           "entries each, the same number");
  if (out.size() != in.size())
    return op->emitOpError("input and result need the same rank");
  if (channelsLast && in.size() != s + 2)
    return op->emitOpError() << "channels last, input and result need rank "
                             << s + 2 << ": (n, spatial..., c)";
  if (in.size() < s + 1 || in.size() > s + 2)
    return op->emitOpError() << "input and result need rank " << s + 1
                             << " or " << s + 2;
  size_t trail = channelsLast ? 1 : 0;
  size_t lead = in.size() - s - trail;
  for (size_t d = 0; d < in.size(); ++d)
    if ((d < lead || d >= lead + s) && in[d] != out[d])
      return op->emitOpError("batch and channel extents must be kept");
  for (size_t i = 0; i < s; ++i) {
    if (kernel[i] < 1 || stride[i] < 1 || dilation[i] < 1 || padding[i] < 0 ||
        padding[i] > kernel[i] / 2)
      return op->emitOpError() << "spatial dim " << i
                               << ": invalid kernel/stride/padding/dilation";
    if (!poolExtentMatches(in[lead + i], out[lead + i], kernel[i], stride[i],
                           padding[i], dilation[i]))
      return op->emitOpError() << "spatial dim " << i << ": result extent "
                               << out[lead + i] << " does not match the window";
  }
  return success();
}

/// The shapes of an adaptive pool: `pooled` trailing dims pooled to the
/// result's non-empty extents from non-empty ones, at least one dim kept,
/// the element type kept, and uneven windows' tables within the limit.
LogicalResult verifyAdaptivePool(Operation *op, Value input,
                                 RankedTensorType result, int64_t pooled) {
  ArrayRef<int64_t> in = shapeOf(input), out = result.getShape();
  if (pooled < 1 || pooled > 3)
    return op->emitOpError() << "pools 1 to 3 dims, not " << pooled;
  if (in.size() != out.size() || static_cast<int64_t>(in.size()) < pooled + 1 ||
      static_cast<int64_t>(in.size()) > pooled + 2)
    return op->emitOpError() << "input and result need one rank, " << pooled + 1
                             << " or " << pooled + 2;
  if (cast<RankedTensorType>(input.getType()).getElementType() !=
      result.getElementType())
    return op->emitOpError("keeps the input's element type");
  if (result.getElementType().isInteger(1))
    return op->emitOpError("needs a numeric tensor, not bool");
  size_t lead = in.size() - pooled;
  if (in.take_front(lead) != out.take_front(lead))
    return op->emitOpError("the dims before the pooled ones must be kept");
  for (size_t d = lead; d < in.size(); ++d)
    if (in[d] < 1 || out[d] < 1)
      return op->emitOpError("pooled dims need non-empty input and result extents");
  if (!adaptiveTablesFit(adaptiveWindows(in, out.drop_front(lead))))
    return op->emitOpError() << "uneven windows need gather tables of at most "
                             << kMaxConstantTable << " entries";
  return success();
}

} // namespace

LogicalResult ConvolutionBackwardOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto w = cast<RankedTensorType>(getWeight().getType());
  auto dy = cast<RankedTensorType>(getGradOutput().getType());
  int64_t rank = x.getRank();
  size_t s = rank - 2;
  if (rank < 3 || rank > 5 || w.getRank() != rank || dy.getRank() != rank)
    return emitOpError("grad_output, input and weight need one rank, 3 to 5");
  Type element = x.getElementType();
  if (!isa<FloatType>(element) || w.getElementType() != element ||
      dy.getElementType() != element)
    return emitOpError("grad_output, input and weight share one floating-point type");
  if (getStride().size() != s || getPadding().size() != s || getDilation().size() != s)
    return emitOpError("stride, padding and dilation need one entry per spatial dim");
  if (getOutputMask().size() != 3)
    return emitOpError("output_mask needs 3 entries");
  int64_t batch = x.getDimSize(0), cin = x.getDimSize(1), cout = w.getDimSize(0);
  int64_t g = getGroups();
  // As eager: at least `groups` output channels (which also bounds g * N).
  if (g < 1 || g > std::max<int64_t>(cout, 1) || cin % g || cout % g ||
      w.getDimSize(1) != cin / g || dy.getDimSize(0) != batch || dy.getDimSize(1) != cout)
    return emitOpError("grad_output, input, weight and groups do not agree");
  for (size_t i = 0; i < s; ++i) {
    int64_t st = getStride()[i], p = getPadding()[i], d = getDilation()[i];
    int64_t k = w.getDimSize(2 + i);
    // The padded extent, at most a tensor's, bounds every product the
    // decomposition forms.
    if (st < 1 || d < 1 || p < 0 ||
        WideInt(x.getDimSize(2 + i)) + WideInt(2) * p > kMaxTensorElements)
      return emitOpError() << "spatial dim " << i << ": invalid stride/padding/dilation";
    WideInt span = WideInt(x.getDimSize(2 + i)) + WideInt(2) * p - WideInt(d) * (k - 1) - 1;
    if (span < 0 || dy.getDimSize(2 + i) != floorDiv(span, st) + 1)
      return emitOpError() << "spatial dim " << i << ": grad_output extent "
                           << dy.getDimSize(2 + i) << " is not the forward's";
  }
  // The input gradient is a transposed convolution, computed uncut when the
  // padding passes dilation * (kernel - 1).
  if (getOutputMask()[0] &&
      uncutTransposedConvolutionTooLarge(x.getShape(), w.getShape().drop_front(2),
                                         getPadding(), getDilation()))
    return emitOpError() << "the input gradient's uncut extents pass "
                         << kMaxTensorElements << " elements";
  if (getGradInput().getType() != x || getGradWeight().getType() != w ||
      getGradBias().getType() != RankedTensorType::get({cout}, element))
    return emitOpError("the gradients have the input's, the weight's and (C_out) types");
  return success();
}

LogicalResult MaxPoolBackwardOp::verify() {
  auto self = cast<RankedTensorType>(getSelf().getType());
  auto dy = cast<RankedTensorType>(getGradOutput().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  if (getType() != self)
    return emitOpError("result must have self's type");
  if (dy.getElementType() != self.getElementType() ||
      indices.getShape() != dy.getShape() || !indices.getElementType().isInteger(64))
    return emitOpError("grad_output has self's element type and i64 indices its shape");
  size_t s = getKernel().size();
  if (s < 1 || s > 3 || getStride().size() != s || getPadding().size() != s ||
      getDilation().size() != s)
    return emitOpError("kernel, stride, padding and dilation need 1 to 3 "
                       "entries each, the same number");
  int64_t leading = self.getRank() - static_cast<int64_t>(s);
  if (leading < 1 || leading > 2 || dy.getRank() != self.getRank() ||
      dy.getShape().take_front(leading) != self.getShape().take_front(leading))
    return emitOpError() << "self and grad_output need rank " << s + 1 << " or "
                         << s + 2 << " and the same leading dims";
  for (size_t i = 0; i < s; ++i) {
    int64_t k = getKernel()[i], st = getStride()[i], p = getPadding()[i],
            d = getDilation()[i];
    // As the forward's: padding at most half the kernel.
    if (k < 1 || st < 1 || d < 1 || p < 0 || p > k / 2)
      return emitOpError() << "spatial dim " << i
                           << ": invalid kernel/stride/padding/dilation";
    if (!poolExtentMatches(self.getDimSize(leading + i), dy.getDimSize(leading + i),
                           k, st, p, d))
      return emitOpError() << "spatial dim " << i << ": grad_output extent "
                           << dy.getDimSize(leading + i)
                           << " does not match the window";
  }
  return success();
}

LogicalResult AdaptiveAvgPoolOp::verify() {
  if (failed(verifyAdaptivePool(*this, getSelf(),
                                cast<RankedTensorType>(getType()),
                                getPooledDims())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getSelf()), out = getType().getShape();
  size_t lead = in.size() - getPooledDims();
  if (!allEven(adaptiveWindows(in, out.drop_front(lead))) &&
      !isa<FloatType>(getType().getElementType()))
    return emitOpError("averages uneven windows of floating-point tensors only");
  return success();
}

LogicalResult AdaptiveMaxPoolOp::verify() {
  if (getIndices().getType().getShape() != getValues().getType().getShape() ||
      !getIndices().getType().getElementType().isInteger(64))
    return emitOpError("indices are i64 with the values' shape");
  return verifyAdaptivePool(*this, getSelf(),
                            cast<RankedTensorType>(getValues().getType()),
                            getPooledDims());
}

LogicalResult FractionalMaxPoolOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), out = shapeOf(getValues()),
                    samples = shapeOf(getSamples()), kernel = getKernel();
  const size_t pooled = kernel.size();
  Type element = getSelf().getType().getElementType();
  if (!isa<FloatType>(element) || getValues().getType().getElementType() != element ||
      getSamples().getType().getElementType() != element)
    return emitOpError("pools floating-point values, with samples and values of their type");
  if (pooled < 2 || pooled > 3 || in.size() < pooled + 1 || out.size() != in.size())
    return emitOpError("pools the last 2 or 3 dims of a tensor with at least one leading dim, "
                       "the values of the same rank");
  ArrayRef<int64_t> lead = in.drop_back(pooled);
  if (out.drop_back(pooled) != lead || samples.drop_back() != lead ||
      samples.back() != static_cast<int64_t>(pooled))
    return emitOpError("values and samples keep the leading dims; samples have one per pooled dim");
  if (getIndices().getType().getShape() != out ||
      !getIndices().getType().getElementType().isInteger(64))
    return emitOpError("indices are i64 with the values' shape");
  for (size_t d = 0; d < pooled; ++d) {
    int64_t size = in[lead.size() + d], extent = out[lead.size() + d];
    if (kernel[d] < 1 || extent < 1 || extent + kernel[d] - 1 > size)
      return emitOpError() << "pooled dim " << d << ": output " << extent << " with kernel "
                           << kernel[d] << " does not fit an input of " << size;
  }
  return success();
}

LogicalResult ConvolutionOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight()),
                    out = getType().getShape();
  size_t s = getStride().size();
  if (s < 1 || s > 3 || in.size() != s + 2 || w.size() != s + 2 ||
      out.size() != s + 2)
    return emitOpError("input, weight and result need rank 3 to 5 and one "
                       "stride per spatial dim");
  if (getPadding().size() != s || getDilation().size() != s ||
      getOutputPadding().size() != s)
    return emitOpError("padding, dilation and output_padding need one entry "
                       "per spatial dim");
  int64_t g = getGroups();
  if (g < 1 || in[1] % g != 0)
    return emitOpError() << "groups " << g << " must divide the "
                         << in[1] << " input channels";
  WideInt cOut = getTransposed() ? WideInt(w[1]) * g : WideInt(w[0]);
  if (getTransposed() ? w[0] != in[1]
                      : (WideInt(w[1]) * g != in[1] || w[0] % g != 0))
    return emitOpError("weight channels do not match the input and groups");
  if (out[0] != in[0] || out[1] != cOut)
    return emitOpError() << "result must have batch " << in[0] << " and "
                         << formatWide(cOut) << " channels";
  for (size_t i = 0; i < s; ++i) {
    int64_t k = w[2 + i], st = getStride()[i], p = getPadding()[i],
            d = getDilation()[i], op = getOutputPadding()[i];
    if (st < 1 || d < 1 || p < 0 || op < 0)
      return emitOpError() << "spatial dim " << i
                           << ": invalid stride/padding/dilation";
    WideInt x = in[2 + i], dk = WideInt(d) * (k - 1);
    WideInt expected = getTransposed()
                           ? (x - 1) * st - WideInt(2) * p + dk + op + 1
                           : floorDiv(x + WideInt(2) * p - dk - 1, st) + 1;
    if (out[2 + i] != expected)
      return emitOpError() << "spatial dim " << i << ": result extent "
                           << out[2 + i] << ", expected "
                           << formatWide(expected);
  }
  if (getBias() && (shapeOf(getBias()).size() != 1 || shapeOf(getBias())[0] != cOut))
    return emitOpError() << "bias must have " << formatWide(cOut) << " elements";
  return success();
}

LogicalResult MaxPoolOp::verify() {
  if (getValues().getType() != cast<RankedTensorType>(getSelf().getType())
                                   .clone(getValues().getType().getShape()))
    return emitOpError("values keep the input's element type");
  if (getIndices().getType().getShape() != getValues().getType().getShape() ||
      !getIndices().getType().getElementType().isInteger(64))
    return emitOpError("indices are i64 with the values' shape");
  return verifyPoolAttrs(*this, getSelf(), getValues().getType().getShape(),
                         getKernel(), getStride(), getPadding(), getDilation(),
                         getChannelsLast());
}

LogicalResult AvgPoolOp::verify() {
  if (getType().getElementType().isInteger(1))
    return emitOpError("needs a numeric tensor, not bool");
  SmallVector<int64_t> ones(getKernel().size(), 1);
  return verifyPoolAttrs(*this, getSelf(), getType().getShape(), getKernel(),
                         getStride(), getPadding(), ones, getChannelsLast());
}

LogicalResult UpsampleSeparableOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), out = getType().getShape();
  Type element = getType().getElementType();
  if (!(isa<FloatType>(element) || element.isInteger(16)) ||
      cast<ShapedType>(getSelf().getType()).getElementType() != element)
    return emitOpError("resamples a floating-point tensor, or uint8 values carried in i16, "
                       "into its own type");
  if (in.size() != 4 || out.size() != 4 || in[0] != out[0] || in[1] != out[1] ||
      in[2] < 1 || in[3] < 1 || out[2] < 1 || out[3] < 1)
    return emitOpError("needs (N, C, H, W) into (N, C, H_out, W_out), H, W, H_out and W_out "
                       ">= 1");
  if (getMode() != "bilinear" && getMode() != "bicubic")
    return emitOpError() << "mode '" << getMode() << "' is not bilinear or bicubic";
  return success();
}

LogicalResult GridSampleOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), grid = shapeOf(getGrid());
  ArrayRef<int64_t> out = getType().getShape();
  Type element = getType().getElementType();
  if (!isa<FloatType>(element))
    return emitOpError("samples floating-point tensors");
  if (cast<ShapedType>(getInput().getType()).getElementType() != element ||
      cast<ShapedType>(getGrid().getType()).getElementType() != element)
    return emitOpError("input, grid and result share their element type");
  size_t spatial = in.size() - 2;
  if ((in.size() != 4 && in.size() != 5) || grid.size() != in.size() ||
      grid.back() != static_cast<int64_t>(spatial))
    return emitOpError("needs a (N, C, H, W) input and a (N, H_out, W_out, 2) grid, "
                       "or a (N, C, D, H, W) input and a (N, D_out, H_out, W_out, 3) grid");
  SmallVector<int64_t> expected = {in[0], in[1]};
  expected.append(grid.begin() + 1, grid.end() - 1);
  if (grid[0] != in[0] || out != ArrayRef<int64_t>(expected))
    return emitOpError("result must be (N, C, <grid's spatial dims>) of the input and grid");
  if (getInterpolationMode() < 0 || getInterpolationMode() > (spatial == 2 ? 2 : 1))
    return emitOpError() << "interpolation_mode " << getInterpolationMode()
                         << (spatial == 2 ? ": 0 (bilinear), 1 (nearest) or 2 (bicubic)"
                                          : ": 0 (trilinear) or 1 (nearest) in 3-d");
  if (getPaddingMode() < 0 || getPaddingMode() > 2)
    return emitOpError() << "padding_mode " << getPaddingMode()
                         << ": 0 (zeros), 1 (border) or 2 (reflection)";
  return success();
}

/// What group_norm and batch_stats_norm share: a floating-point (N, C, ...)
/// input, a result of its type, optional 1-d float weight and bias of C,
/// and float statistics of `statShape`.
static LogicalResult verifyStatisticsNorm(Operation *op, Value input,
                                          Value weight, Value bias,
                                          Value result, Value mean, Value rstd,
                                          ArrayRef<int64_t> statShape) {
  auto in = cast<RankedTensorType>(input.getType());
  if (!isa<FloatType>(in.getElementType()) || in.getRank() < 2)
    return op->emitOpError("needs a floating-point (N, C, ...) input");
  if (in.getNumElements() == 0)
    return op->emitOpError("needs an input with elements (the importer "
                           "handles empty tensors before any op)");
  if (result.getType() != in)
    return op->emitOpError("result must have the input's type");
  for (auto [name, v] : {std::pair<const char *, Value>{"weight", weight},
                         {"bias", bias}}) {
    if (!v)
      continue;
    auto type = cast<RankedTensorType>(v.getType());
    if (!isa<FloatType>(type.getElementType()) ||
        type.getShape() != ArrayRef<int64_t>{in.getDimSize(1)})
      return op->emitOpError() << name << " must be a 1-d float tensor of the "
                               << in.getDimSize(1) << " channels";
  }
  for (Value stat : {mean, rstd}) {
    auto type = cast<RankedTensorType>(stat.getType());
    if (!isa<FloatType>(type.getElementType()) || type.getShape() != statShape)
      return op->emitOpError() << "mean and rstd must be float tensors of shape ["
                               << statShape << "]";
  }
  return success();
}

LogicalResult GroupNormOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t groups = getGroupsAttr().getInt();
  if (in.size() >= 2 && (groups < 1 || in[1] % groups != 0))
    return emitOpError() << "groups " << groups << " must divide the " << in[1]
                         << " channels";
  if (std::isnan(getEps().convertToDouble()))
    return emitOpError("eps must be a number");
  SmallVector<int64_t> statShape;
  if (!in.empty())
    statShape = {in[0], groups};
  return verifyStatisticsNorm(*this, getInput(), getWeight(), getBias(),
                              getResult(), getMean(), getRstd(), statShape);
}

LogicalResult BatchStatsNormOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (std::isnan(getEps().convertToDouble()))
    return emitOpError("eps must be a number");
  SmallVector<int64_t> statShape;
  if (in.size() >= 2)
    statShape = {in[1]};
  return verifyStatisticsNorm(*this, getInput(), getWeight(), getBias(),
                              getResult(), getMean(), getRstd(), statShape);
}

bool kiln::aten::uncutTransposedConvolutionTooLarge(ArrayRef<int64_t> output,
                                                    ArrayRef<int64_t> kernel,
                                                    ArrayRef<int64_t> padding,
                                                    ArrayRef<int64_t> dilation) {
  // Each factor is at most 2^63 + 2^64: the running product, checked after
  // every step, stays under 2^40 * 2^65.
  WideInt elements = 1;
  for (size_t i = 0; i < output.size(); ++i) {
    WideInt extent = output[i];
    size_t s = i - 2;
    if (i >= 2 && s < kernel.size() && s < padding.size() && s < dilation.size() &&
        kernel[s] >= 1 && padding[s] >= 0 && dilation[s] >= 1) {
      WideInt reach = WideInt(dilation[s]) * (kernel[s] - 1);
      if (padding[s] > reach)
        extent += 2 * (padding[s] - reach);
    }
    if (extent < 0)
      return false; // a dynamic or malformed extent: the verifier's to name
    elements *= extent;
    if (elements > kMaxTensorElements)
      return true;
  }
  return false;
}
