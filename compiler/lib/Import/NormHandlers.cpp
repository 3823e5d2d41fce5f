//===- NormHandlers.cpp - group norm, batch-statistics norm, vector norm --===//
//
// This file implements the importer handlers of the norms:
// native_group_norm and training-mode batch norm (batch statistics, as
// instance_norm decomposes to), composed here from mean/var and pointwise
// ops, and linalg_vector_norm, imported as one aten.vector_norm that
// kiln-decompose-aten computes (lib/Transforms/DecomposeNorm.cpp).
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// Small builders over the node's builder and location.
struct Ops {
  NodeImporter &n;
  Value pw(StringRef fn, RankedTensorType type, ValueRange inputs,
           ArrayRef<double> scalars = {}) {
    return n.b().create<aten::PointwiseOp>(n.loc(), type, n.b().getStringAttr(fn),
                                           inputs,
                                           n.b().getDenseF64ArrayAttr(scalars));
  }
  /// `v` converted to element type `element` (itself when it has it).
  Value cast(Value v, Type element) {
    if (typeOf(v).getElementType() == element)
      return v;
    return pw("copy", typeOf(v).clone(element), v);
  }
  Value view(Value v, ArrayRef<int64_t> shape) {
    return n.b().create<aten::ViewOp>(n.loc(), typeOf(v).clone(shape), v);
  }
  template <typename Op> Value binary(Value a, Value b, RankedTensorType type) {
    if constexpr (std::is_same_v<Op, aten::AddOp> || std::is_same_v<Op, aten::SubOp>)
      return n.b().create<Op>(n.loc(), type, a, b, n.b().getF64FloatAttr(1.0));
    else
      return n.b().create<Op>(n.loc(), type, a, b);
  }
  Value reduceShape(Value x, ArrayRef<int64_t> dims, bool keepdim, Type element,
                    bool mean, bool var) {
    RankedTensorType in = typeOf(x);
    llvm::SmallBitVector reduced(in.getRank(), dims.empty());
    for (int64_t d : dims)
      reduced.set(d);
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < in.getRank(); ++i)
      if (!reduced.test(i))
        shape.push_back(in.getDimSize(i));
      else if (keepdim)
        shape.push_back(1);
    auto type = RankedTensorType::get(shape, element);
    auto dimsAttr = n.b().getDenseI64ArrayAttr(dims);
    auto keep = n.b().getBoolAttr(keepdim);
    if (var)
      return n.b().create<aten::VarOp>(n.loc(), type, x, dimsAttr,
                                       n.b().getF64FloatAttr(0.0), keep,
                                       n.b().getBoolAttr(false));
    if (mean)
      return n.b().create<aten::MeanOp>(n.loc(), type, x, dimsAttr, keep);
    return n.b().create<aten::SumOp>(n.loc(), type, x, dimsAttr, keep);
  }
};

/// The type a norm over `element` computes its statistics in: f32 for
/// f16/bf16, as eager's CPU kernels do (an f16 mean of 2304 values near 40
/// overflows, and a mean rounded to f16 is off by more than the tolerance).
Type statisticsType(NodeImporter &n, Type element) {
  return element.isF16() || element.isBF16() ? n.b().getF32Type() : element;
}

/// rsqrt(var + eps) in var's type.
Value invStd(Ops &o, Value var, double eps) {
  Type element = typeOf(var).getElementType();
  Value shifted = o.binary<aten::AddOp>(var, o.n.constant(element, eps), typeOf(var));
  return o.pw("rsqrt", typeOf(var), shifted);
}

absl::StatusOr<Values> groupNorm(NodeImporter &n) {
  Ops o{n};
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  ASSIGN_OR_RETURN(std::optional<Value> weight, n.optionalTensor("weight"));
  ASSIGN_OR_RETURN(std::optional<Value> bias, n.optionalTensor("bias"));
  ASSIGN_OR_RETURN(int64_t groups, n.intAttr("group"));
  ASSIGN_OR_RETURN(double eps, n.floatAttr("eps"));
  RankedTensorType in = typeOf(input);
  Type element = in.getElementType();
  if (!isa<FloatType>(element) || in.getRank() < 2)
    return n.error("group norm needs a floating-point input of rank >= 2");
  int64_t batch = in.getDimSize(0), channels = in.getDimSize(1);
  if (groups < 1 || channels % groups != 0)
    return n.error(absl::StrCat("group ", groups, " must divide ", channels,
                                " channels"));
  int64_t perGroup = in.getNumElements() / (batch * groups);
  element = statisticsType(n, element);
  Value grouped = o.view(o.cast(input, element), {batch, groups, perGroup});
  Value mean = o.reduceShape(grouped, {2}, true, element, true, false);
  Value var = o.reduceShape(grouped, {2}, true, element, false, true);
  Value rstd = invStd(o, var, eps);
  Value centered = o.binary<aten::SubOp>(grouped, mean, typeOf(grouped));
  Value normalized = o.view(o.binary<aten::MulOp>(centered, rstd, typeOf(grouped)),
                            in.getShape());
  RankedTensorType computed = typeOf(normalized);
  SmallVector<int64_t> channelShape(in.getRank() - 1, 1);
  channelShape[0] = channels;
  if (weight)
    normalized = o.binary<aten::MulOp>(
        normalized, o.view(o.cast(*weight, element), channelShape), computed);
  if (bias)
    normalized = o.binary<aten::AddOp>(
        normalized, o.view(o.cast(*bias, element), channelShape), computed);
  normalized = o.cast(normalized, type.getElementType());
  if (typeOf(normalized) != type)
    return n.error("group norm output must have the input's type");
  Values results{normalized};
  for (Value stat : {mean, rstd}) {
    if (static_cast<int>(results.size()) >= n.numResults())
      break;
    ASSIGN_OR_RETURN(RankedTensorType statType, n.resultType(results.size()));
    stat = o.cast(stat, statType.getElementType());
    results.push_back(n.b().create<aten::ViewOp>(n.loc(), statType, stat));
  }
  return results;
}

/// Batch norm with batch statistics (training mode, or no running stats):
/// mean and biased variance over every dim but the channels.
absl::StatusOr<Values> batchStatsNorm(NodeImporter &n, bool checkTraining) {
  Ops o{n};
  if (checkTraining && n.has("training")) {
    ASSIGN_OR_RETURN(bool training, n.boolAttr("training"));
    if (!training)
      return n.unimplemented("use _native_batch_norm_legit_no_training");
  }
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  ASSIGN_OR_RETURN(double eps, n.floatAttr("eps"));
  RankedTensorType in = typeOf(input);
  Type element = in.getElementType();
  if (!isa<FloatType>(element) || in.getRank() < 2)
    return n.error("batch norm needs a floating-point input of rank >= 2");
  int64_t channels = in.getDimSize(1);
  SmallVector<int64_t> dims = {0};
  for (int64_t d = 2; d < in.getRank(); ++d)
    dims.push_back(d);
  element = statisticsType(n, element);
  Value mean = o.reduceShape(input, dims, false, element, true, false);
  Value var = o.reduceShape(input, dims, false, element, false, true);
  SmallVector<int64_t> statShape(in.getRank() - 1, 1);
  statShape[0] = channels;
  auto perChannel = [&](const std::string &name, double fallback) -> absl::StatusOr<Value> {
    ASSIGN_OR_RETURN(std::optional<Value> v, n.optionalTensor(name));
    if (!v)
      return n.constant(element, fallback);
    return o.view(o.cast(*v, element), statShape);
  };
  ASSIGN_OR_RETURN(Value weight, perChannel("weight", 1.0));
  ASSIGN_OR_RETURN(Value bias, perChannel("bias", 0.0));
  Value out = o.pw("batch_norm", type,
                   {input, o.view(mean, statShape), o.view(var, statShape), weight, bias},
                   {eps});
  Values results{out};
  for (Value stat : {mean, invStd(o, var, eps)}) {
    if (static_cast<int>(results.size()) >= n.numResults())
      break;
    ASSIGN_OR_RETURN(RankedTensorType statType, n.resultType(results.size()));
    results.push_back(o.cast(stat, statType.getElementType()));
  }
  return results;
}

/// linalg_vector_norm: one aten.vector_norm (kiln-decompose-aten computes
/// it, lib/Transforms/DecomposeNorm.cpp).
absl::StatusOr<Values> vectorNorm(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(double ord, n.floatAttr("ord", 2.0));
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  ASSIGN_OR_RETURN(std::vector<int64_t> rawDims, n.intsAttr("dim", true));
  int64_t rank = typeOf(self).getRank();
  SmallVector<int64_t> dims;
  for (int64_t d : rawDims) {
    ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(d, rank));
    dims.push_back(dim);
  }
  llvm::sort(dims);
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  if (rank == 0)
    dims.clear();
  if (!isa<FloatType>(type.getElementType()))
    return n.error("vector norm needs a floating-point result");
  if (std::isnan(ord))
    return n.error("ord must be a number, not NaN");
  return Values{n.b().create<aten::VectorNormOp>(
      n.loc(), type, self, n.b().getF64FloatAttr(ord),
      n.b().getDenseI64ArrayAttr(dims), n.b().getBoolAttr(keepdim))};
}

} // namespace

void addNormHandlers(OpHandlerTable &t) {
  t["aten.native_group_norm.default"] = groupNorm;
  t["aten._native_batch_norm_legit.no_stats"] = [](NodeImporter &n) {
    return batchStatsNorm(n, false);
  };
  t["aten.linalg_vector_norm.default"] = vectorNorm;
}

} // namespace kiln
