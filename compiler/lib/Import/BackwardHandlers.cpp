//===- BackwardHandlers.cpp - gradients of convolution and max pooling ----===//
//
// This file implements the importer handlers of the backward ops that
// AOTAutograd's joint graphs keep in core ATen: convolution_backward (the
// input gradient a transposed convolution, the weight gradient a grouped
// convolution of the input with the output gradient, the bias gradient a
// sum), max_pool{2,3}d_with_indices_backward (one aten.max_pool_backward,
// which kiln-decompose-aten computes), and the leaky and randomized-leaky ReLU
// gradients (leaky_relu_backward, rrelu_with_noise_backward: in training
// the output gradient times the saved noise, otherwise the leaky gradient
// with the mean slope).
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

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

/// max_pool{2,3}d_with_indices_backward: one aten.max_pool_backward
/// (kiln-decompose-aten computes it, lib/Transforms/DecomposePoolBackward.cpp).
absl::StatusOr<Values> maxPoolBackward(NodeImporter &n, int64_t spatial) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value dy, n.tensor("grad_output"));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value indices, n.tensor("indices"));
  size_t s = static_cast<size_t>(spatial);
  ASSIGN_OR_RETURN(auto kernel, spatialList(n, "kernel_size", s, {}));
  ASSIGN_OR_RETURN(auto stride, spatialList(n, "stride", s, kernel));
  ASSIGN_OR_RETURN(auto padding, spatialList(n, "padding", s, std::vector<int64_t>{0}));
  ASSIGN_OR_RETURN(auto dilation, spatialList(n, "dilation", s, std::vector<int64_t>{1}));
  auto attr = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  return Values{n.b().create<aten::MaxPoolBackwardOp>(
      n.loc(), type, dy, self, indices, attr(kernel), attr(stride), attr(padding),
      attr(dilation))};
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
