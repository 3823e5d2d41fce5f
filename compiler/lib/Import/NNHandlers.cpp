//===- NNHandlers.cpp - convolution, pooling and batch norm handlers ------===//
//
// This file implements the importer handlers of convolutional-network ops:
// convolution, max/average pooling, inference batch norm (which imports as
// views plus one aten.pointwise "batch_norm"), grid sampling and
// separable resampling (one aten.upsample_separable); adaptive pooling is in
// AdaptivePoolHandlers.cpp.
//
//===----------------------------------------------------------------------===//
#include "EmptyTensors.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/Limits.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

absl::StatusOr<Values> convolution(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  ASSIGN_OR_RETURN(Value weight, n.tensor("weight"));
  ASSIGN_OR_RETURN(std::optional<Value> bias, n.optionalTensor("bias"));
  int64_t rank = typeOf(input).getRank();
  if (rank < 3 || rank > 5)
    return n.unimplemented(absl::StrCat("convolution input of rank ", rank,
                                        " (batched 1-d to 3-d only)"));
  size_t s = rank - 2;
  ASSIGN_OR_RETURN(auto stride, spatialList(n, "stride", s, std::vector<int64_t>{1}));
  ASSIGN_OR_RETURN(auto padding, spatialList(n, "padding", s, std::vector<int64_t>{0}));
  ASSIGN_OR_RETURN(auto dilation, spatialList(n, "dilation", s, std::vector<int64_t>{1}));
  ASSIGN_OR_RETURN(auto outputPadding,
                   spatialList(n, "output_padding", s, std::vector<int64_t>{0}));
  ASSIGN_OR_RETURN(bool transposed, n.boolAttr("transposed", false));
  ASSIGN_OR_RETURN(int64_t groups, n.intAttr("groups", 1));
  // Integer convolutions compute in their type, wrapping as eager's do;
  // eager has no bool convolution.
  if (type.getElementType().isInteger(1))
    return n.unimplemented("bool convolution is not supported");
  RankedTensorType weightType = typeOf(weight);
  // Padding past dilation * (kernel - 1) crops the output of one padded up
  // to it (kiln-decompose-aten); that uncut output must be a tensor.
  if (transposed && weightType.getRank() == rank && type.getRank() == rank &&
      type.hasStaticShape() && weightType.hasStaticShape() &&
      kiln::aten::uncutTransposedConvolutionTooLarge(
          type.getShape(), weightType.getShape().drop_front(2), padding, dilation))
    return n.unimplemented(absl::StrCat(
        "transposed convolution padded past dilation * (kernel - 1): its "
        "uncropped output would pass ", kiln::aten::kMaxTensorElements, " elements"));
  auto b = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  return Values{n.b().create<aten::ConvolutionOp>(
      n.loc(), type, input, weight, bias.value_or(Value()), b(stride),
      b(padding), b(dilation), b(outputPadding), n.b().getBoolAttr(transposed),
      n.b().getI64IntegerAttr(groups))};
}

absl::StatusOr<Values> maxPool(NodeImporter &n, size_t s) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(auto kernel, spatialList(n, "kernel_size", s, {}));
  ASSIGN_OR_RETURN(auto stride, spatialList(n, "stride", s, kernel));
  ASSIGN_OR_RETURN(auto padding, spatialList(n, "padding", s, std::vector<int64_t>{0}));
  ASSIGN_OR_RETURN(auto dilation, spatialList(n, "dilation", s, std::vector<int64_t>{1}));
  auto indicesType = RankedTensorType::get(type.getShape(), n.b().getI64Type());
  auto b = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  auto op = n.b().create<aten::MaxPoolOp>(n.loc(), TypeRange{type, indicesType},
                                          self, b(kernel), b(stride),
                                          b(padding), b(dilation),
                                          /*channels_last=*/UnitAttr());
  return Values(op->getResults());
}

absl::StatusOr<Values> avgPool(NodeImporter &n, size_t s) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(auto kernel, spatialList(n, "kernel_size", s, {}));
  ASSIGN_OR_RETURN(auto stride, spatialList(n, "stride", s, kernel));
  ASSIGN_OR_RETURN(auto padding, spatialList(n, "padding", s, std::vector<int64_t>{0}));
  ASSIGN_OR_RETURN(bool countIncludePad, n.boolAttr("count_include_pad", true));
  ASSIGN_OR_RETURN(int64_t divisor, n.intAttr("divisor_override", 0));
  if (n.has("divisor_override") && divisor == 0)
    return n.error("divisor_override must be non-zero");
  auto b = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  return Values{n.b().create<aten::AvgPoolOp>(
      n.loc(), type, self, b(kernel), b(stride), b(padding),
      n.b().getBoolAttr(countIncludePad), n.b().getI64IntegerAttr(divisor),
      /*channels_last=*/UnitAttr())};
}

/// Inference batch norm: per-channel statistics viewed as (C, 1, ..., 1) and
/// one pointwise "batch_norm". Saved-statistics results stay undefined.
absl::StatusOr<Values> batchNorm(NodeImporter &n, bool hasTrainingFlag) {
  if (hasTrainingFlag) {
    ASSIGN_OR_RETURN(bool training, n.boolAttr("training"));
    if (training)
      return n.unimplemented("training-mode batch norm (batch statistics) is "
                             "not supported; export the model in eval mode");
  }
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  int64_t rank = typeOf(input).getRank();
  if (rank < 2)
    return n.error("batch norm needs an input of rank >= 2");
  int64_t channels = typeOf(input).getDimSize(1);
  Type element = type.getElementType();
  if (!isa<FloatType>(element))
    return n.error("batch norm needs a floating-point input");
  SmallVector<int64_t> statShape(rank - 1, 1);
  statShape[0] = channels;
  auto perChannel = [&](const std::string &name,
                        double fallback) -> absl::StatusOr<Value> {
    ASSIGN_OR_RETURN(std::optional<Value> v, n.optionalTensor(name));
    if (!v)
      return n.constant(element, fallback);
    if (typeOf(*v).getShape() != ArrayRef<int64_t>{channels})
      return n.error(absl::StrCat("'", name, "' must have ", channels,
                                  " elements"));
    return n.b()
        .create<aten::ViewOp>(n.loc(), typeOf(*v).clone(statShape), *v)
        .getResult();
  };
  if (!n.has("running_mean") || !n.has("running_var"))
    return n.unimplemented("batch norm without running statistics");
  ASSIGN_OR_RETURN(Value mean, perChannel("running_mean", 0.0));
  ASSIGN_OR_RETURN(Value var, perChannel("running_var", 1.0));
  ASSIGN_OR_RETURN(Value weight, perChannel("weight", 1.0));
  ASSIGN_OR_RETURN(Value bias, perChannel("bias", 0.0));
  ASSIGN_OR_RETURN(double eps, n.floatAttr("eps"));
  Value out = n.b().create<aten::PointwiseOp>(
      n.loc(), type, n.b().getStringAttr("batch_norm"),
      ValueRange{input, mean, var, weight, bias},
      n.b().getDenseF64ArrayAttr({eps}));
  // save_mean and save_invstd: eval mode on the CPU leaves them empty,
  // (0,), which a graph may still return. Declared with elements (torch's
  // decomposition for other devices), they stay undefined: reading one
  // names no value.
  Values results{out};
  for (int r = 1; r < n.numResults(); ++r) {
    Value saved;
    if (!n.resultLeftOut(r)) {
      ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(r));
      if (hasNoElements(declared))
        saved = emptyTensor(n.b(), n.loc(), declared);
    }
    results.push_back(saved);
  }
  return results;
}

/// F.grid_sample on a 4-d (grid_sampler_2d) or 5-d (grid_sampler_3d)
/// input: PyTorch's mode numbers as attributes.
absl::StatusOr<Values> gridSampler(NodeImporter &n, int64_t spatial) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  ASSIGN_OR_RETURN(Value grid, n.tensor("grid"));
  ASSIGN_OR_RETURN(int64_t mode, n.intAttr("interpolation_mode"));
  ASSIGN_OR_RETURN(int64_t padding, n.intAttr("padding_mode"));
  ASSIGN_OR_RETURN(bool alignCorners, n.boolAttr("align_corners"));
  RankedTensorType inType = typeOf(input), gridType = typeOf(grid);
  if (!isa<FloatType>(type.getElementType()))
    return n.error("grid sampling needs a floating-point input");
  if (inType.getElementType() != gridType.getElementType())
    return n.error("the input and the grid must have the same dtype");
  if (inType.getRank() != spatial + 2 || gridType.getRank() != spatial + 2 ||
      gridType.getDimSize(spatial + 1) != spatial ||
      gridType.getDimSize(0) != inType.getDimSize(0))
    return n.error(spatial == 2
                       ? "grid_sampler_2d needs a (N, C, H, W) input and a (N, H_out, "
                         "W_out, 2) grid of the same N"
                       : "grid_sampler_3d needs a (N, C, D, H, W) input and a (N, D_out, "
                         "H_out, W_out, 3) grid of the same N");
  if (mode < 0 || mode > (spatial == 2 ? 2 : 1))
    return n.error(absl::StrCat(
        "interpolation_mode ", mode,
        spatial == 2 ? " is not 0 (bilinear), 1 (nearest) or 2 (bicubic)"
                     : " is not 0 (trilinear) or 1 (nearest); 3-d sampling has no bicubic"));
  if (padding < 0 || padding > 2)
    return n.error(absl::StrCat("padding_mode ", padding,
                                " is not 0 (zeros), 1 (border) or 2 (reflection)"));
  return Values{n.b().create<aten::GridSampleOp>(
      n.loc(), type, input, grid, n.b().getI64IntegerAttr(mode),
      n.b().getI64IntegerAttr(padding), n.b().getBoolAttr(alignCorners))};
}

absl::StatusOr<Values> trainingBatchNorm(NodeImporter &n) {
  return n.unimplemented("training-mode batch norm (batch statistics) is not "
                         "supported; export the model in eval mode");
}

/// One aten.upsample_separable: _upsample_bilinear2d_aa /
/// _upsample_bicubic2d_aa(self, output_size, align_corners, scales_h,
/// scales_w) (`antialias`), or upsample_bilinear2d / upsample_bicubic2d of
/// uint8 (self, output_size, align_corners, scales_h, scales_w, or .vec's
/// input, output_size, align_corners, scale_factors). Kiln's client lets
/// torch decompose the plain ones of floating-point tensors (their weights
/// computed in the tensor's type, as eager's); eager's uint8 kernel
/// resamples in fixed point, which only the op's decomposition matches.
absl::StatusOr<Values> upsampleSeparable(NodeImporter &n, const char *mode, bool antialias) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  const char *input = n.has("self") ? "self" : "input";
  ASSIGN_OR_RETURN(Value self, n.tensor(input));
  ASSIGN_OR_RETURN(bool alignCorners, n.boolAttr("align_corners"));
  Type element = typeOf(self).getElementType();
  if (!isa<FloatType>(element) && !n.resultIsUnsigned())
    return n.unimplemented(absl::StrCat(
        antialias ? "antialiased " : "", mode, " resampling of an integer tensor other than "
        "uint8 (eager resamples floating-point and uint8 tensors)"));
  if (typeOf(self).getRank() != 4 || type.getRank() != 4)
    return n.error("bilinear and bicubic resampling take (N, C, H, W)");
  for (int64_t d : {2, 3}) {
    if (typeOf(self).getDimSize(d) < 1)
      return n.error("resampling needs input sizes greater than 0");
    if (static_cast<__int128>(typeOf(self).getDimSize(d)) * type.getDimSize(d) >
        kMaxConstantTable)
      return n.unimplemented(absl::StrCat(
          "resampling ", typeOf(self).getDimSize(d), " to ", type.getDimSize(d),
          " points (its weight table would exceed ", kMaxConstantTable, " entries)"));
  }
  FloatAttr scaleH, scaleW;
  if (n.has("scale_factors")) {
    ASSIGN_OR_RETURN(std::vector<double> factors, n.floatsAttr("scale_factors"));
    if (factors.size() != 2)
      return n.error(absl::StrCat("scale_factors has ", factors.size(),
                                  " entries; 2-d resampling takes 2"));
    scaleH = n.b().getF64FloatAttr(factors[0]);
    scaleW = n.b().getF64FloatAttr(factors[1]);
  }
  for (auto [name, attr] : {std::pair{"scales_h", &scaleH}, std::pair{"scales_w", &scaleW}}) {
    if (!n.has(name))
      continue;
    ASSIGN_OR_RETURN(double value, n.floatAttr(name));
    *attr = n.b().getF64FloatAttr(value);
  }
  return Values{n.b()
                    .create<aten::UpsampleSeparableOp>(
                        n.loc(), type, self, n.b().getStringAttr(mode),
                        n.b().getBoolAttr(antialias), n.b().getBoolAttr(alignCorners), scaleH,
                        scaleW)
                    .getResult()};
}

} // namespace

void addNNHandlers(OpHandlerTable &t) {
  t["aten._upsample_bilinear2d_aa.default"] = [](NodeImporter &n) {
    return upsampleSeparable(n, "bilinear", true);
  };
  t["aten._upsample_bicubic2d_aa.default"] = [](NodeImporter &n) {
    return upsampleSeparable(n, "bicubic", true);
  };
  // The client's kiln::upsample_uint8 (kiln/resampling.py), which
  // torch.compile graphs hold in place of a uint8 F.interpolate: .vec's
  // arguments, the mode and the antialias flag.
  t["kiln.upsample_uint8.default"] = [](NodeImporter &n) -> absl::StatusOr<Values> {
    ASSIGN_OR_RETURN(std::string mode, n.stringAttr("mode"));
    ASSIGN_OR_RETURN(bool antialias, n.boolAttr("antialias"));
    if (mode != "bilinear" && mode != "bicubic")
      return n.error(absl::StrCat("kiln::upsample_uint8 resamples 'bilinear' or 'bicubic', not '",
                                  mode, "'"));
    return upsampleSeparable(n, mode == "bilinear" ? "bilinear" : "bicubic", antialias);
  };
  for (const char *overload : {"default", "vec"}) {
    t[absl::StrCat("aten.upsample_bilinear2d.", overload)] = [](NodeImporter &n) {
      return upsampleSeparable(n, "bilinear", false);
    };
    t[absl::StrCat("aten.upsample_bicubic2d.", overload)] = [](NodeImporter &n) {
      return upsampleSeparable(n, "bicubic", false);
    };
  }
  t["aten.convolution.default"] = convolution;
  // The legacy entry: convolution's arguments and backend flags that do not
  // change the result (benchmark, deterministic, cudnn_enabled, allow_tf32).
  t["aten._convolution.default"] = convolution;
  t["aten.max_pool1d_with_indices.default"] = [](NodeImporter &n) { return maxPool(n, 1); };
  t["aten.max_pool2d_with_indices.default"] = [](NodeImporter &n) { return maxPool(n, 2); };
  t["aten.max_pool3d_with_indices.default"] = [](NodeImporter &n) { return maxPool(n, 3); };
  t["aten.max_pool2d.default"] = [](NodeImporter &n) { return maxPool(n, 2); };
  t["aten.avg_pool1d.default"] = [](NodeImporter &n) { return avgPool(n, 1); };
  t["aten.avg_pool2d.default"] = [](NodeImporter &n) { return avgPool(n, 2); };
  t["aten.avg_pool3d.default"] = [](NodeImporter &n) { return avgPool(n, 3); };
  t["aten._native_batch_norm_legit_no_training.default"] = [](NodeImporter &n) {
    return batchNorm(n, false);
  };
  t["aten.native_batch_norm.default"] = [](NodeImporter &n) {
    return batchNorm(n, true);
  };
  t["aten._native_batch_norm_legit.default"] = [](NodeImporter &n) {
    return batchNorm(n, true);
  };
  t["aten._native_batch_norm_legit_functional.default"] = trainingBatchNorm;
  t["aten.grid_sampler_2d.default"] = [](NodeImporter &n) {
    return gridSampler(n, 2);
  };
  t["aten.grid_sampler_3d.default"] = [](NodeImporter &n) {
    return gridSampler(n, 3);
  };
}

} // namespace kiln
