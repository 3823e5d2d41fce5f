//===- ScanHandlers.cpp - cummax, cummin and logcumsumexp -----------------===//
//
// This file implements the importer handlers of the running extrema
// aten.cummax and aten.cummin and of aten.logcumsumexp: each is one
// aten.cummax, aten.cummin or aten.logcumsumexp, which kiln-decompose-aten
// computes as a triangular reduction (lib/Transforms/DecomposeScan.cpp) or,
// along a dim longer than kMaxTriangularScan, the linalg lowering as a loop
// (lib/Conversion/AtenToLinalg/Scans.cpp). The handlers check what the node
// declares.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"


using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The scanned dim of `self`, normalised (a 0-d input scans dim 0).
absl::StatusOr<int64_t> scanDim(NodeImporter &n, Value self) {
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  return n.normalizeDim(raw, typeOf(self).getRank());
}

/// cummax (`max`) or cummin along `dim`: (values, i64 indices).
absl::StatusOr<Values> cumExtremum(NodeImporter &n, bool max) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType indicesType, n.resultType(1));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (typeOf(self).getShape() != type.getShape() ||
      indicesType.getShape() != type.getShape())
    return n.error("values and indices must have the input's shape");
  if (!indicesType.getElementType().isInteger(64))
    return n.error("indices must be i64");
  ASSIGN_OR_RETURN(int64_t dim, scanDim(n, self));
  TypeRange results = {type, indicesType};
  auto dimAttr = n.b().getI64IntegerAttr(dim);
  Operation *op =
      max ? n.b().create<aten::CummaxOp>(n.loc(), results, self, dimAttr).getOperation()
          : n.b().create<aten::CumminOp>(n.loc(), results, self, dimAttr).getOperation();
  return Values{op->getResult(0), op->getResult(1)};
}

absl::StatusOr<Values> logCumSumExp(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(0));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (!isa<FloatType>(type.getElementType()))
    return n.error("logcumsumexp needs a floating-point result");
  if (typeOf(self).getShape() != type.getShape())
    return n.error("the result must have the input's shape");
  ASSIGN_OR_RETURN(int64_t dim, scanDim(n, self));
  return Values{n.b().create<aten::LogCumSumExpOp>(
      n.loc(), type, self, n.b().getI64IntegerAttr(dim), /*complex=*/UnitAttr())};
}

} // namespace

void addScanHandlers(OpHandlerTable &t) {
  t["aten.cummax.default"] = [](NodeImporter &n) {
    return cumExtremum(n, true);
  };
  t["aten.cummin.default"] = [](NodeImporter &n) {
    return cumExtremum(n, false);
  };
  t["aten.logcumsumexp.default"] = logCumSumExp;
}

} // namespace kiln
