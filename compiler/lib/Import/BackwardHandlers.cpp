//===- BackwardHandlers.cpp - gradients of convolution and max pooling ----===//
//
// This file implements the importer handlers of the backward ops that
// AOTAutograd's joint graphs keep in core ATen: convolution_backward and
// max_pool{2,3}d_with_indices_backward (one aten.convolution_backward and
// one aten.max_pool_backward, which kiln-decompose-aten computes), and the
// leaky and randomized-leaky ReLU gradients (leaky_relu_backward,
// rrelu_with_noise_backward: in training the output gradient times the
// saved noise, otherwise the leaky gradient with the mean slope).
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

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

/// convolution_backward of a (non-transposed) convolution: one
/// aten.convolution_backward (kiln-decompose-aten computes it,
/// lib/Transforms/DecomposeConvolutionBackward.cpp). A gradient the
/// output_mask leaves out has no declared type: it gets the input's, the
/// weight's or (C_out).
absl::StatusOr<Values> convolutionBackward(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value dy, n.tensor("grad_output"));
  ASSIGN_OR_RETURN(Value x, n.tensor("input"));
  ASSIGN_OR_RETURN(Value w, n.tensor("weight"));
  RankedTensorType xType = typeOf(x), wType = typeOf(w);
  int64_t rank = xType.getRank();
  if (rank < 3 || rank > 5 || wType.getRank() != rank || typeOf(dy).getRank() != rank)
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
  // Its input gradient is a transposed convolution, computed uncut when the
  // padding passes dilation * (kernel - 1).
  if (mask[0] && xType.hasStaticShape() && wType.hasStaticShape() &&
      aten::uncutTransposedConvolutionTooLarge(xType.getShape(),
                                               wType.getShape().drop_front(2),
                                               padding, dilation))
    return n.unimplemented(absl::StrCat(
        "the input gradient of a convolution padded past its kernel: its uncut "
        "extents would pass ", aten::kMaxTensorElements, " elements"));
  SmallVector<Type> types = {
      xType, wType, RankedTensorType::get({wType.getDimSize(0)}, xType.getElementType())};
  for (int i = 0; i < 3; ++i)
    if (mask[i]) {
      ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(i));
      types[i] = declared;
    }
  auto attr = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  auto op = n.b().create<aten::ConvolutionBackwardOp>(
      n.loc(), types, dy, x, w, attr(stride), attr(padding), attr(dilation),
      n.b().getI64IntegerAttr(groups),
      n.b().getDenseBoolArrayAttr({mask[0] != 0, mask[1] != 0, mask[2] != 0}));
  Values results(3);
  for (int i = 0; i < 3; ++i)
    if (mask[i])
      results[i] = op->getResult(i);
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
