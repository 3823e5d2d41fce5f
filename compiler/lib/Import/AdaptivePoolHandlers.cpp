//===- AdaptivePoolHandlers.cpp - adaptive average and max pooling --------===//
//
// This file implements the importer handlers of adaptive pooling over the
// last 1, 2 or 3 dims: one aten.adaptive_avg_pool or aten.adaptive_max_pool
// each, whose verifiers check the shapes (reported against the node).
// kiln-decompose-aten computes them (lib/Transforms/DecomposeAdaptivePool.cpp).
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AdaptiveWindows.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// UNIMPLEMENTED when `pooled` dims of `self` pooled to `type` would need
/// gather tables past the limit (a shape the verifier also refuses).
absl::Status checkTables(NodeImporter &n, Value self, RankedTensorType type,
                         int64_t pooled) {
  ArrayRef<int64_t> in = typeOf(self).getShape(), out = type.getShape();
  if (in.size() != out.size() || static_cast<int64_t>(in.size()) <= pooled ||
      llvm::any_of(out.take_back(pooled), [](int64_t e) { return e < 1; }) ||
      llvm::any_of(in.take_back(pooled), [](int64_t e) { return e < 1; }))
    return absl::OkStatus();  // the verifier names what is wrong
  if (!aten::adaptiveTablesFit(aten::adaptiveWindows(in, out.take_back(pooled))))
    return n.unimplemented("adaptive pooling with uneven windows whose tables exceed "
                           "16M entries");
  return absl::OkStatus();
}

absl::StatusOr<Values> adaptiveAvgPool(NodeImporter &n, int64_t pooled) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RETURN_IF_ERROR(checkTables(n, self, type, pooled));
  return Values{n.b().create<aten::AdaptiveAvgPoolOp>(
      n.loc(), type, self, n.b().getI64IntegerAttr(pooled))};
}

absl::StatusOr<Values> adaptiveMaxPool(NodeImporter &n, int64_t pooled) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RETURN_IF_ERROR(checkTables(n, self, type, pooled));
  auto indices = RankedTensorType::get(type.getShape(), n.b().getI64Type());
  auto op = n.b().create<aten::AdaptiveMaxPoolOp>(
      n.loc(), TypeRange{type, indices}, self, n.b().getI64IntegerAttr(pooled));
  return Values(op->getResults());
}

} // namespace

void addAdaptivePoolHandlers(OpHandlerTable &t) {
  for (int64_t pooled : {1, 2, 3}) {
    std::string dims = std::to_string(pooled);
    auto avg = [pooled](NodeImporter &n) { return adaptiveAvgPool(n, pooled); };
    t["aten.adaptive_avg_pool" + dims + "d.default"] = avg;
    if (pooled > 1)
      t["aten._adaptive_avg_pool" + dims + "d.default"] = avg;
    t["aten.adaptive_max_pool" + dims + "d.default"] = [pooled](NodeImporter &n) {
      return adaptiveMaxPool(n, pooled);
    };
  }
}

} // namespace kiln
