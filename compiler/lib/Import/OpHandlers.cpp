//===- OpHandlers.cpp - ATen op name to aten dialect builders -------------===//
//
// This file implements the handler of every ATen op overload the importer
// accepts. Aliases of one semantic (transpose/t/permute, the view family,
// clone/alias) map onto one aten dialect op.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <numeric>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

template <typename Op>
absl::StatusOr<Values> binary(NodeImporter &n, bool withAlpha) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  Type element = type.getElementType();
  ASSIGN_OR_RETURN(Value lhs, n.tensorOrScalar("self", element));
  ASSIGN_OR_RETURN(Value rhs, n.tensorOrScalar("other", element));
  if constexpr (std::is_same_v<Op, aten::AddOp> || std::is_same_v<Op, aten::SubOp>) {
    ASSIGN_OR_RETURN(double alpha, n.floatAttr("alpha", 1.0));
    return Values{n.b().create<Op>(n.loc(), type, lhs, rhs,
                                   n.b().getF64FloatAttr(alpha))};
  } else {
    (void)withAlpha;
    return Values{n.b().create<Op>(n.loc(), type, lhs, rhs)};
  }
}

template <typename Op>
absl::StatusOr<Values> unary(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  // exp/tanh/sigmoid of an integer tensor: convert to the float result first.
  if (self.getType() != type)
    self = n.b().create<aten::PointwiseOp>(n.loc(), type,
                                           n.b().getStringAttr("copy"), self,
                                           n.b().getDenseF64ArrayAttr({}));
  return Values{n.b().create<Op>(n.loc(), type, self)};
}

absl::StatusOr<Values> divide(NodeImporter &n) {
  if (n.has("rounding_mode"))
    return n.error("rounding_mode other than None is not supported yet");
  return binary<aten::DivOp>(n, false);
}

absl::StatusOr<Values> gelu(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::string approximate, n.stringAttr("approximate", "none"));
  return Values{n.b().create<aten::GeluOp>(n.loc(), type, self,
                                           n.b().getStringAttr(approximate))};
}

absl::StatusOr<Values> mm(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value mat2, n.tensor("mat2"));
  return Values{n.b().create<aten::MmOp>(n.loc(), type, self, mat2)};
}

absl::StatusOr<Values> bmm(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value mat2, n.tensor("mat2"));
  return Values{n.b().create<aten::BmmOp>(n.loc(), type, self, mat2)};
}

absl::StatusOr<Values> addmm(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value mat1, n.tensor("mat1"));
  ASSIGN_OR_RETURN(Value mat2, n.tensor("mat2"));
  ASSIGN_OR_RETURN(double beta, n.floatAttr("beta", 1.0));
  ASSIGN_OR_RETURN(double alpha, n.floatAttr("alpha", 1.0));
  return Values{n.b().create<aten::AddmmOp>(n.loc(), type, self, mat1, mat2,
                                            n.b().getF64FloatAttr(beta),
                                            n.b().getF64FloatAttr(alpha))};
}

absl::StatusOr<Values> softmax(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(bool halfToFloat, n.boolAttr("half_to_float", false));
  if (halfToFloat)
    return n.error("half_to_float=True is not supported");
  ASSIGN_OR_RETURN(int64_t rawDim, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(rawDim, type.getRank()));
  if (cast<RankedTensorType>(self.getType()) != type)
    return n.error("softmax output must have the input's type");
  return Values{n.b().create<aten::SoftmaxOp>(n.loc(), type, self, dim)};
}

/// view, _unsafe_view, reshape, unsqueeze, squeeze: the result type says it.
absl::StatusOr<Values> view(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(SmallVector<Value> sizes, n.resultSizes());
  return Values{n.b().create<aten::ViewOp>(n.loc(), type, self, sizes)};
}

absl::StatusOr<Values> permuteWith(NodeImporter &n, std::vector<int64_t> dims) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  int64_t rank = cast<RankedTensorType>(self.getType()).getRank();
  for (int64_t &dim : dims) {
    ASSIGN_OR_RETURN(dim, n.normalizeDim(dim, rank));
  }
  if (rank == 0 && dims.empty())
    return Values{self};
  return Values{n.b().create<aten::PermuteOp>(
      n.loc(), type, self, n.b().getDenseI64ArrayAttr(dims))};
}

absl::StatusOr<Values> permute(NodeImporter &n) {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.intsAttr("dims"));
  return permuteWith(n, dims);
}

absl::StatusOr<Values> transpose(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  int64_t rank = cast<RankedTensorType>(self.getType()).getRank();
  ASSIGN_OR_RETURN(int64_t raw0, n.intAttr("dim0"));
  ASSIGN_OR_RETURN(int64_t raw1, n.intAttr("dim1"));
  ASSIGN_OR_RETURN(int64_t dim0, n.normalizeDim(raw0, rank));
  ASSIGN_OR_RETURN(int64_t dim1, n.normalizeDim(raw1, rank));
  std::vector<int64_t> dims(rank);
  std::iota(dims.begin(), dims.end(), 0);
  if (rank > 0)
    std::swap(dims[dim0], dims[dim1]);
  return permuteWith(n, dims);
}

absl::StatusOr<Values> t(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  int64_t rank = cast<RankedTensorType>(self.getType()).getRank();
  if (rank > 2)
    return n.error(absl::StrCat("t() expects a tensor of rank <= 2, got ", rank));
  std::vector<int64_t> dims = rank == 2 ? std::vector<int64_t>{1, 0}
                                        : std::vector<int64_t>(rank, 0);
  if (rank < 2) {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
    if (type != self.getType())
      return n.error("t() of a rank < 2 tensor must not change its type");
    return Values{self};
  }
  return permuteWith(n, dims);
}

absl::StatusOr<Values> expand(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (type == self.getType())
    return Values{self};
  ASSIGN_OR_RETURN(SmallVector<Value> sizes, n.resultSizes());
  return Values{n.b().create<aten::ExpandOp>(n.loc(), type, self, sizes)};
}

/// clone, alias, detach, lift_fresh_copy: identity on value-semantic tensors.
absl::StatusOr<Values> identity(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (type != self.getType())
    return n.error("output type must equal the input type");
  return Values{self};
}

template <typename Op>
absl::StatusOr<Values> reduction(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  int64_t rank = cast<RankedTensorType>(self.getType()).getRank();
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   n.intsAttr("dim", /*absentIsEmpty=*/true));
  for (int64_t &dim : dims) {
    ASSIGN_OR_RETURN(dim, n.normalizeDim(dim, rank));
  }
  std::sort(dims.begin(), dims.end());
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  if (rank == 0)
    dims.clear();
  return Values{n.b().create<Op>(n.loc(), type, self,
                                 n.b().getDenseI64ArrayAttr(dims),
                                 n.b().getBoolAttr(keepdim))};
}

absl::StatusOr<Values> nativeLayerNorm(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType outType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType meanType, n.resultType(1));
  ASSIGN_OR_RETURN(RankedTensorType rstdType, n.resultType(2));
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  ASSIGN_OR_RETURN(std::vector<int64_t> normalized, n.intsAttr("normalized_shape"));
  ASSIGN_OR_RETURN(std::optional<Value> weight, n.optionalTensor("weight"));
  ASSIGN_OR_RETURN(std::optional<Value> bias, n.optionalTensor("bias"));
  ASSIGN_OR_RETURN(double eps, n.floatAttr("eps"));
  auto op = n.b().create<aten::NativeLayerNormOp>(
      n.loc(), TypeRange{outType, meanType, rstdType}, input,
      weight.value_or(Value()), bias.value_or(Value()),
      n.b().getI64IntegerAttr(static_cast<int64_t>(normalized.size())),
      n.b().getF64FloatAttr(eps));
  return Values(op->getResults());
}

} // namespace

const std::map<std::string, OpHandler> &opHandlers() {
  static const auto *table = [] {
    auto *handlers = new OpHandlerTable{
      {"aten.add.Tensor", [](NodeImporter &n) { return binary<aten::AddOp>(n, true); }},
      {"aten.add.Scalar", [](NodeImporter &n) { return binary<aten::AddOp>(n, true); }},
      {"aten.sub.Tensor", [](NodeImporter &n) { return binary<aten::SubOp>(n, true); }},
      {"aten.sub.Scalar", [](NodeImporter &n) { return binary<aten::SubOp>(n, true); }},
      {"aten.mul.Tensor", [](NodeImporter &n) { return binary<aten::MulOp>(n, false); }},
      {"aten.mul.Scalar", [](NodeImporter &n) { return binary<aten::MulOp>(n, false); }},
      {"aten.div.Tensor", divide},
      {"aten.div.Scalar", divide},
      {"aten.neg.default", unary<aten::NegOp>},
      {"aten.relu.default", unary<aten::ReluOp>},
      {"aten.tanh.default", unary<aten::TanhOp>},
      {"aten.sigmoid.default", unary<aten::SigmoidOp>},
      {"aten.exp.default", unary<aten::ExpOp>},
      {"aten.gelu.default", gelu},
      {"aten.mm.default", mm},
      {"aten.addmm.default", addmm},
      {"aten.bmm.default", bmm},
      {"aten._softmax.default", softmax},
      {"aten.softmax.int", softmax},
      {"aten.view.default", view},
      {"aten._unsafe_view.default", view},
      {"aten.reshape.default", view},
      {"aten.unsqueeze.default", view},
      {"aten.squeeze.default", view},
      {"aten.squeeze.dim", view},
      {"aten.squeeze.dims", view},
      {"aten.permute.default", permute},
      {"aten.transpose.int", transpose},
      {"aten.t.default", t},
      {"aten.expand.default", expand},
      {"aten.clone.default", identity},
      {"aten.alias.default", identity},
      {"aten.detach.default", identity},
      {"aten.lift_fresh_copy.default", identity},
      // The copy variants of views: a graph's values are never aliases, so
      // each is its view (torch 2.5 keeps some whole in an export).
      {"aten.view_copy.default", view},
      {"aten.unsqueeze_copy.default", view},
      {"aten.squeeze_copy.dims", view},
      {"aten.permute_copy.default", permute},
      {"aten.transpose_copy.int", transpose},
      {"aten.t_copy.default", t},
      {"aten.expand_copy.default", expand},
      {"aten.sum.dim_IntList", reduction<aten::SumOp>},
      {"aten.sum.default", reduction<aten::SumOp>},
      {"aten.mean.dim", reduction<aten::MeanOp>},
      {"aten.mean.default", reduction<aten::MeanOp>},
      {"aten.native_layer_norm.default", nativeLayerNorm},
    };
    addTensorHandlers(*handlers);
    addSpecialFunctionHandlers(*handlers);
    addIndexHandlers(*handlers);
    addScanHandlers(*handlers);
    addNNHandlers(*handlers);
    addAdaptivePoolHandlers(*handlers);
    addFractionalPoolHandlers(*handlers);
    addNormHandlers(*handlers);
    addBackwardHandlers(*handlers);
    addFlatIndexHandlers(*handlers);
    addQuantizeHandlers(*handlers);
    addSearchHandlers(*handlers);
    addTrilinearHandler(*handlers);
    addSegmentReduceHandler(*handlers);
    addEmbeddingHandlers(*handlers);
    addLinalgHandlers(*handlers);
    addRandomHandlers(*handlers);
    addDataDependentHandlers(*handlers);
    return handlers;
  }();
  return *table;
}

} // namespace kiln
