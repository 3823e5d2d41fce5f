//===- BackwardHandlers.cpp - gradients of convolution and max pooling ----===//
//
// This file implements the importer handlers of the backward ops that
// AOTAutograd's joint graphs keep in core ATen: convolution_backward (the
// input gradient a transposed convolution, the weight gradient a grouped
// convolution of the input with the output gradient, the bias gradient a
// sum), max_pool{2,3}d_with_indices_backward (the output gradient added
// at each window's saved argmax), and the leaky and randomized-leaky ReLU
// gradients (leaky_relu_backward, rrelu_with_noise_backward: in training
// the output gradient times the saved noise, otherwise the leaky gradient
// with the mean slope).
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <numeric>
#include <vector>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// An int list with one entry per spatial dim (a single entry repeats).
absl::StatusOr<SmallVector<int64_t>> perSpatialDim(NodeImporter &n,
                                                    const std::string &name,
                                                    size_t spatial, int64_t fallback) {
  ASSIGN_OR_RETURN(std::vector<int64_t> values, n.intsAttr(name, true));
  if (values.empty())
    values.assign(1, fallback);
  if (values.size() == 1)
    values.assign(spatial, values[0]);
  if (values.size() != spatial)
    return n.error(absl::StrCat("argument '", name, "' needs ", spatial,
                                " entries, got ", values.size()));
  return SmallVector<int64_t>(values.begin(), values.end());
}

/// convolution_backward of a (non-transposed) convolution. With x (N, C_in,
/// S...), w (C_out, C_in/g, K...) and dy (N, C_out, O...):
///   dx = conv_transpose(dy, w), with the output padding that gives back S;
///   dw = conv(x as (C_in/g, g*N, S...), dy as (C_out, N, O...), groups g,
///             stride = dilation, dilation = stride), cut to K, transposed;
///   db = dy summed over every dim but 1.
absl::StatusOr<Values> convolutionBackward(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value dy, n.tensor("grad_output"));
  ASSIGN_OR_RETURN(Value x, n.tensor("input"));
  ASSIGN_OR_RETURN(Value w, n.tensor("weight"));
  RankedTensorType xType = typeOf(x), wType = typeOf(w), dyType = typeOf(dy);
  int64_t rank = xType.getRank();
  if (rank < 3 || rank > 5 || wType.getRank() != rank || dyType.getRank() != rank)
    return n.unimplemented(absl::StrCat("convolution_backward of rank ", rank,
                                        " (batched 1-d to 3-d only)"));
  if (!isa<FloatType>(xType.getElementType()))
    return n.unimplemented("integer convolution_backward is not supported");
  size_t s = rank - 2;
  ASSIGN_OR_RETURN(auto stride, perSpatialDim(n, "stride", s, 1));
  ASSIGN_OR_RETURN(auto padding, perSpatialDim(n, "padding", s, 0));
  ASSIGN_OR_RETURN(auto dilation, perSpatialDim(n, "dilation", s, 1));
  ASSIGN_OR_RETURN(bool transposed, n.boolAttr("transposed", false));
  ASSIGN_OR_RETURN(int64_t groups, n.intAttr("groups", 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> mask, n.intsAttr("output_mask"));
  if (transposed)
    return n.unimplemented("convolution_backward of a transposed convolution");
  if (mask.size() != 3)
    return n.error("output_mask needs 3 entries");
  int64_t batch = xType.getDimSize(0), cin = xType.getDimSize(1);
  int64_t cout = wType.getDimSize(0);
  if (groups < 1 || cin % groups || cout % groups ||
      wType.getDimSize(1) != cin / groups || dyType.getDimSize(1) != cout ||
      dyType.getDimSize(0) != batch)
    return n.error("grad_output, input, weight and groups do not agree");
  for (size_t i = 0; i < s; ++i)
    if (stride[i] < 1 || dilation[i] < 1 || padding[i] < 0)
      return n.error("stride and dilation must be positive, padding not negative");
  auto attr = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  Values results(3);

  if (mask[0]) {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
    SmallVector<int64_t> outputPadding;
    for (size_t i = 0; i < s; ++i) {
      int64_t k = wType.getDimSize(2 + i);
      if (padding[i] > dilation[i] * (k - 1))
        return n.unimplemented(absl::StrCat(
            "the input gradient of a convolution with padding ", padding[i],
            " above dilation * (kernel - 1)"));
      // The rows the forward's stride skipped at the end of the input.
      outputPadding.push_back(xType.getDimSize(2 + i) + 2 * padding[i] -
                              dilation[i] * (k - 1) - 1 -
                              (dyType.getDimSize(2 + i) - 1) * stride[i]);
    }
    results[0] = n.b().create<aten::ConvolutionOp>(
        n.loc(), type, dy, w, Value(), attr(stride), attr(padding),
        attr(dilation), attr(outputPadding), n.b().getBoolAttr(true),
        n.b().getI64IntegerAttr(groups));
  }

  if (mask[1]) {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(1));
    int64_t cinPerGroup = cin / groups;
    // x (N, C_in, S...) -> (N, g, C_in/g, S...) -> (C_in/g, g, N, S...)
    // -> (C_in/g, g*N, S...): group G's batch is input channels [G*N, G*N+N).
    SmallVector<int64_t> split{batch, groups, cinPerGroup};
    SmallVector<int64_t> order{2, 1, 0};
    SmallVector<int64_t> merged{cinPerGroup, groups * batch};
    for (size_t i = 0; i < s; ++i) {
      split.push_back(xType.getDimSize(2 + i));
      order.push_back(3 + i);
      merged.push_back(xType.getDimSize(2 + i));
    }
    Value input = viewValue(n, permuteValue(n, viewValue(n, x, split), order), merged);
    // dy (N, C_out, O...) -> (C_out, N, O...): the "weight", kernel O.
    SmallVector<int64_t> swap(rank);
    std::iota(swap.begin(), swap.end(), 0);
    std::swap(swap[0], swap[1]);
    Value kernel = permuteValue(n, dy, swap);
    SmallVector<int64_t> full{cinPerGroup, cout}, kernelShape{cinPerGroup, cout};
    for (size_t i = 0; i < s; ++i) {
      int64_t span = xType.getDimSize(2 + i) + 2 * padding[i] -
                     stride[i] * (dyType.getDimSize(2 + i) - 1) - 1;
      full.push_back(span / dilation[i] + 1);
      kernelShape.push_back(wType.getDimSize(2 + i));
    }
    Value dw = n.b().create<aten::ConvolutionOp>(
        n.loc(), RankedTensorType::get(full, type.getElementType()), input,
        kernel, Value(), attr(dilation), attr(padding), attr(stride),
        attr(SmallVector<int64_t>(s, 0)), n.b().getBoolAttr(false),
        n.b().getI64IntegerAttr(groups));
    // Positions past the kernel come from input rows the forward's stride
    // never reached.
    if (ArrayRef<int64_t>(full) != ArrayRef<int64_t>(kernelShape))
      dw = n.b().create<aten::SliceOp>(
          n.loc(), typeOf(dw).clone(kernelShape), dw,
          attr(SmallVector<int64_t>(rank, 0)), attr(SmallVector<int64_t>(rank, 1)));
    results[1] = permuteValue(n, dw, swap);
    if (typeOf(results[1]) != type)
      return n.error("grad_weight is declared with a type that differs from the weight's");
  }

  if (mask[2]) {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(2));
    SmallVector<int64_t> dims{0};
    for (size_t i = 0; i < s; ++i)
      dims.push_back(2 + i);
    results[2] = n.b().create<aten::SumOp>(n.loc(), type, dy, attr(dims),
                                           n.b().getBoolAttr(false));
  }
  return results;
}

/// The output positions whose windows can cover each input position of a
/// pooling plane, for max pooling's backward as a gather: J candidates per
/// input position (the most windows that overlap along every dim), in
/// ascending output order, with the position and whether it exists.
struct PoolCandidates {
  int64_t count = 1;            // J
  std::vector<int64_t> source;  // [inPlane * J]: flat output position (0 if none)
  std::vector<bool> exists;     // [inPlane * J]
};

PoolCandidates poolCandidates(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                              ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  size_t dims = in.size();
  // Along dim d, output o covers input i when o*s - p <= i <= o*s - p + span.
  SmallVector<int64_t> span(dims), perDim(dims);
  PoolCandidates c;
  for (size_t d = 0; d < dims; ++d) {
    span[d] = (kernel[d] - 1) * dilation[d];
    perDim[d] = span[d] / stride[d] + 1;
    c.count *= perDim[d];
  }
  int64_t inPlane = ShapedType::getNumElements(in);
  c.source.reserve(inPlane * c.count);
  c.exists.reserve(inPlane * c.count);
  SmallVector<int64_t> at(dims, 0), pick(dims, 0);
  for (int64_t i = 0; i < inPlane; ++i) {
    for (int64_t rest = i, d = dims - 1; d >= 0; --d) {
      at[d] = rest % in[d];
      rest /= in[d];
    }
    for (int64_t k = 0; k < c.count; ++k) {
      for (int64_t rest = k, d = dims - 1; d >= 0; --d) {
        pick[d] = rest % perDim[d];
        rest /= perDim[d];
      }
      int64_t flat = 0;
      bool inside = true;
      for (size_t d = 0; d < dims; ++d) {
        // The first window that can reach at[d], then the next ones.
        int64_t reach = at[d] + padding[d] - span[d];
        int64_t first = reach <= 0 ? -((-reach) / stride[d]) : (reach + stride[d] - 1) / stride[d];
        int64_t o = first + pick[d];
        inside = inside && o >= 0 && o < out[d] && o * stride[d] <= at[d] + padding[d];
        flat = flat * out[d] + std::clamp<int64_t>(o, 0, out[d] - 1);
      }
      c.source.push_back(inside ? flat : 0);
      c.exists.push_back(inside);
    }
  }
  return c;
}

/// max_pool{2,3}d_with_indices_backward: each input position sums the
/// gradients of the outputs that picked it. As a gather over the J windows
/// that can cover it (their saved index equal to its own position), in
/// eager's order of outputs; a geometry whose table would be too large takes
/// a scatter over the whole plane instead.
absl::StatusOr<Values> maxPoolBackward(NodeImporter &n, int64_t spatial) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value dy, n.tensor("grad_output"));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value indices, n.tensor("indices"));
  RankedTensorType selfType = typeOf(self), dyType = typeOf(dy);
  if (selfType != type || typeOf(indices).getShape() != dyType.getShape() ||
      dyType.getElementType() != type.getElementType())
    return n.error("grad_output, self, indices and the result do not agree");
  if (!typeOf(indices).getElementType().isInteger(64))
    return n.error("indices must be int64");
  int64_t leading = type.getRank() - spatial;  // (N, C) or, unbatched, (C)
  if (leading < 1 || leading > 2)
    return n.error(absl::StrCat("max pooling backward over ", spatial,
                                " spatial dims needs an input of rank ",
                                spatial + 1, " or ", spatial + 2));
  ArrayRef<int64_t> inDims = type.getShape().drop_front(leading);
  ArrayRef<int64_t> outDims = dyType.getShape().drop_front(leading);
  int64_t images = ShapedType::getNumElements(type.getShape().take_front(leading));
  int64_t inPlane = ShapedType::getNumElements(inDims);
  int64_t outPlane = ShapedType::getNumElements(outDims);
  Value flatIndices = viewValue(n, indices, {images, outPlane});
  Value flatDy = viewValue(n, dy, {images, outPlane});
  size_t s = static_cast<size_t>(spatial);
  ASSIGN_OR_RETURN(auto kernel, spatialList(n, "kernel_size", s, {}));
  ASSIGN_OR_RETURN(auto stride, spatialList(n, "stride", s, kernel));
  ASSIGN_OR_RETURN(auto padding, spatialList(n, "padding", s, std::vector<int64_t>{0}));
  ASSIGN_OR_RETURN(auto dilation, spatialList(n, "dilation", s, std::vector<int64_t>{1}));
  bool geometry = true;
  int64_t windows = 1;
  for (int64_t d = 0; geometry && d < spatial; ++d) {
    geometry = kernel[d] >= 1 && stride[d] >= 1 && padding[d] >= 0 && dilation[d] >= 1 &&
               kernel[d] <= 4096 && dilation[d] <= 4096;
    if (geometry)
      windows *= ((kernel[d] - 1) * dilation[d]) / stride[d] + 1;
  }
  if (!geometry || outPlane == 0 || windows > kMaxConstantTable / std::max<int64_t>(inPlane, 1)) {
    Value zeros = n.constant(type.getElementType(), 0.0, {images, inPlane});
    Value dx = n.b().create<aten::ScatterOp>(
        n.loc(), typeOf(zeros), zeros, flatIndices, flatDy,
        n.b().getI64IntegerAttr(1), n.b().getStringAttr("sum"));
    return Values{viewValue(n, dx, type.getShape())};
  }
  PoolCandidates c = poolCandidates(inDims, outDims, kernel, stride, padding, dilation);
  Type i64 = n.b().getI64Type();
  Value source = tableConstant<int64_t>(n, {inPlane * c.count}, i64,
                                        [&](int64_t k) { return c.source[k]; });
  Value exists = tableConstant<bool>(n, {1, inPlane, c.count}, n.b().getI1Type(),
                                     [&](int64_t k) { return c.exists[k]; });
  Value position = tableConstant<int64_t>(n, {1, inPlane, 1}, i64,
                                          [](int64_t k) { return k; });
  auto gather = [&](Value v) {
    RankedTensorType t = typeOf(v);
    Value picked = n.b().create<aten::IndexSelectOp>(
        n.loc(), t.clone({images, inPlane * c.count}), v, source,
        n.b().getI64IntegerAttr(1));
    return viewValue(n, picked, {images, inPlane, c.count});
  };
  auto pairs = RankedTensorType::get({images, inPlane, c.count}, n.b().getI1Type());
  Value hit = pointwise(n, pairs, "logical_and",
                        {pointwise(n, pairs, "eq", {gather(flatIndices), position}), exists});
  Value grads = gather(flatDy);
  Value picked = pointwise(n, typeOf(grads), "where",
                           {hit, grads, n.constant(type.getElementType(), 0.0)});
  Value dx = n.b().create<aten::SumOp>(n.loc(), RankedTensorType::get({images, inPlane},
                                                                      type.getElementType()),
                                       picked, n.b().getDenseI64ArrayAttr({2}),
                                       n.b().getBoolAttr(false));
  return Values{viewValue(n, dx, type.getShape())};
}

} // namespace

/// leaky_relu_backward's where(self > 0, grad, grad * slope); the slope is
/// a Python float, so f16 and bf16 multiply in f32 (ATen's opmath).
Value leakyGradient(NodeImporter &n, RankedTensorType type, Value grad,
                    Value self, double slope) {
  Type element = type.getElementType();
  Type opmath = element.isF16() || element.isBF16() ? n.b().getF32Type() : element;
  Value scaled = n.b().create<aten::MulOp>(n.loc(), type.clone(opmath), grad,
                                           n.constant(opmath, slope));
  if (opmath != element)
    scaled = pointwise(n, type, "copy", scaled);
  Value positive = pointwise(n, typeOf(self).clone(n.b().getI1Type()), "gt",
                             {self, n.constant(typeOf(self).getElementType(), 0.0)});
  return pointwise(n, type, "where", {positive, grad, scaled});
}

absl::StatusOr<Values> leakyReluBackward(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value grad, n.tensor("grad_output"));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(double slope, n.floatAttr("negative_slope"));
  return Values{leakyGradient(n, type, grad, self, slope)};
}

absl::StatusOr<Values> rreluWithNoiseBackward(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value grad, n.tensor("grad_output"));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value noise, n.tensor("noise"));
  ASSIGN_OR_RETURN(double lower, n.floatAttr("lower"));
  ASSIGN_OR_RETURN(double upper, n.floatAttr("upper"));
  ASSIGN_OR_RETURN(bool training, n.boolAttr("training"));
  if (training)
    return Values{n.b().create<aten::MulOp>(n.loc(), type, grad, noise).getResult()};
  return Values{leakyGradient(n, type, grad, self, (lower + upper) / 2)};
}

void addBackwardHandlers(OpHandlerTable &t) {
  t["aten.convolution_backward.default"] = convolutionBackward;
  t["aten.max_pool2d_with_indices_backward.default"] = [](NodeImporter &n) {
    return maxPoolBackward(n, 2);
  };
  t["aten.max_pool3d_with_indices_backward.default"] = [](NodeImporter &n) {
    return maxPoolBackward(n, 3);
  };
  t["aten.leaky_relu_backward.default"] = leakyReluBackward;
  t["aten.rrelu_with_noise_backward.default"] = rreluWithNoiseBackward;
}

} // namespace kiln
