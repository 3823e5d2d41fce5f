//===- EmbeddingHandlers.cpp - embedding bags and renormalisation ---------===//
//
// This file implements the importer handlers of aten._embedding_bag and
// aten._embedding_bag_forward_only (what nn.EmbeddingBag and
// F.embedding_bag export to), one aten.embedding_bag, and of
// aten.embedding_renorm (F.embedding with max_norm), one
// aten.embedding_renorm. Their verifiers check operands and declared
// results (reported against the node); kiln-decompose-aten computes them
// (lib/Transforms/DecomposeEmbedding.cpp). embedding_bag shapes past its
// bounds are UNIMPLEMENTED here.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// UNIMPLEMENTED for shapes Kiln does not compute (no indices or no bags,
/// or past the decomposition's bounds); malformed ones are left to the
/// verifier.
absl::Status checkSupported(NodeImporter &n, Value weight, Value indices,
                            Value offsets, int64_t mode, bool includeLast) {
  ArrayRef<int64_t> w = typeOf(weight).getShape(), i = typeOf(indices).getShape(),
                    o = typeOf(offsets).getShape();
  if (w.size() != 2 || i.size() != 1 || o.size() != 1)
    return absl::OkStatus();
  int64_t count = i[0], bags = o[0] - (includeLast ? 1 : 0);
  if (bags < 0)
    return absl::OkStatus();
  if (count == 0 || bags == 0)
    return n.unimplemented("embedding_bag without indices or bags");
  if (std::optional<std::string> why =
          aten::embeddingBagBeyondBounds(bags, count, w[1], mode))
    return n.unimplemented(absl::StrCat("embedding_bag of ", bags, " bags of ", count,
                                        " indices into rows of ", w[1], ": ", *why));
  return absl::OkStatus();
}

absl::StatusOr<Values> embeddingBag(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value weight, n.tensor("weight"));
  ASSIGN_OR_RETURN(Value indices, n.tensor("indices"));
  ASSIGN_OR_RETURN(Value offsets, n.tensor("offsets"));
  ASSIGN_OR_RETURN(int64_t mode, n.intAttr("mode", aten::kEmbeddingBagSum));
  ASSIGN_OR_RETURN(std::optional<Value> perSample,
                   n.optionalTensor("per_sample_weights"));
  ASSIGN_OR_RETURN(bool includeLast, n.boolAttr("include_last_offset", false));
  ASSIGN_OR_RETURN(int64_t padding, n.intAttr("padding_idx", -1));
  if (n.numResults() != 4)
    return n.error("_embedding_bag has 4 results");
  SmallVector<Type> types;
  for (int i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(i));
    types.push_back(type);
  }
  RETURN_IF_ERROR(checkSupported(n, weight, indices, offsets, mode, includeLast));
  auto op = n.b().create<aten::EmbeddingBagOp>(
      n.loc(), types, weight, indices, offsets, perSample.value_or(Value()),
      n.b().getI64IntegerAttr(mode), n.b().getBoolAttr(includeLast),
      n.b().getI64IntegerAttr(padding));
  return Values(op->getResults());
}

/// The functional embedding_renorm: `self` with the rows `indices` name
/// scaled down to `max_norm`.
absl::StatusOr<Values> embeddingRenorm(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value indices, n.tensor("indices"));
  ASSIGN_OR_RETURN(double maxNorm, n.floatAttr("max_norm"));
  ASSIGN_OR_RETURN(double normType, n.floatAttr("norm_type"));
  return Values{n.b().create<aten::EmbeddingRenormOp>(
      n.loc(), type, self, indices, n.b().getF64FloatAttr(maxNorm),
      n.b().getF64FloatAttr(normType))};
}

} // namespace

void addEmbeddingHandlers(OpHandlerTable &t) {
  t["aten._embedding_bag.default"] = embeddingBag;
  t["aten._embedding_bag_forward_only.default"] = embeddingBag;
  t["aten.embedding_renorm.default"] = embeddingRenorm;
}

} // namespace kiln
