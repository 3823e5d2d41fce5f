//===- NormHandlers.cpp - group norm, batch-statistics norm, vector norm --===//
//
// This file implements the importer handlers of the norms, each one aten op
// that kiln-decompose-aten computes (lib/Transforms/DecomposeNorm.cpp):
// native_group_norm as aten.group_norm, batch norm with batch statistics
// (as instance_norm decomposes to) as aten.batch_stats_norm,
// linalg_vector_norm as aten.vector_norm, and _cdist_forward (the norms of
// pairwise differences) as aten.cdist.
//
//===----------------------------------------------------------------------===//
#include "EmptyTensors.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Traits.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The statistics results' types for the op: `shape`, in the node's
/// declared element type where it declares a float one (else the
/// statistics type).
SmallVector<Type, 2> statisticsTypes(NodeImporter &n, Type input,
                                     ArrayRef<int64_t> shape) {
  SmallVector<Type, 2> types;
  for (int r : {1, 2}) {
    Type element = aten::normStatisticsType(input);
    if (r < n.numResults() && !n.resultLeftOut(r))
      if (absl::StatusOr<RankedTensorType> declared = n.resultType(r);
          declared.ok() && isa<FloatType>(declared->getElementType()))
        element = declared->getElementType();
    types.push_back(RankedTensorType::get(shape, element));
  }
  return types;
}

/// The op's results as the node declares them: a statistic declared with
/// another shape of as many elements is viewed to it (one declared empty is
/// left to the importer, which gives it no elements).
absl::StatusOr<Values> declaredResults(NodeImporter &n, Operation *op) {
  Values results(op->getResults());
  for (int r = 1; r < 3 && r < n.numResults(); ++r) {
    if (n.resultLeftOut(r))
      continue;
    ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType(r));
    if (!hasNoElements(declared))
      results[r] = viewValue(n, results[r], declared.getShape());
  }
  return results;
}

/// The arguments group norm and batch-statistics norm share.
struct StatisticsNormArgs {
  RankedTensorType type;
  Value input;
  Value weight, bias; // null when absent
  double eps = 0;
};

absl::StatusOr<StatisticsNormArgs> statisticsNormArgs(NodeImporter &n,
                                                      const char *what) {
  StatisticsNormArgs args;
  ASSIGN_OR_RETURN(args.type, n.resultType(0));
  ASSIGN_OR_RETURN(args.input, n.tensor("input"));
  ASSIGN_OR_RETURN(std::optional<Value> weight, n.optionalTensor("weight"));
  ASSIGN_OR_RETURN(std::optional<Value> bias, n.optionalTensor("bias"));
  ASSIGN_OR_RETURN(args.eps, n.floatAttr("eps"));
  args.weight = weight.value_or(Value());
  args.bias = bias.value_or(Value());
  RankedTensorType in = typeOf(args.input);
  if (!isa<FloatType>(in.getElementType()) || in.getRank() < 2)
    return n.error(absl::StrCat(what, " needs a floating-point input of rank >= 2"));
  if (args.type != in)
    return n.error(absl::StrCat(what, " output must have the input's type"));
  return args;
}

/// native_group_norm: one aten.group_norm (kiln-decompose-aten computes it,
/// lib/Transforms/DecomposeNorm.cpp).
absl::StatusOr<Values> groupNorm(NodeImporter &n) {
  ASSIGN_OR_RETURN(StatisticsNormArgs args, statisticsNormArgs(n, "group norm"));
  ASSIGN_OR_RETURN(int64_t groups, n.intAttr("group"));
  RankedTensorType in = typeOf(args.input);
  int64_t batch = in.getDimSize(0), channels = in.getDimSize(1);
  if (groups < 1 || channels % groups != 0)
    return n.error(absl::StrCat("group ", groups, " must divide ", channels,
                                " channels"));
  SmallVector<Type, 2> stats = statisticsTypes(n, in.getElementType(), {batch, groups});
  auto op = n.b().create<aten::GroupNormOp>(
      n.loc(), TypeRange{args.type, stats[0], stats[1]}, args.input, args.weight,
      args.bias, n.b().getI64IntegerAttr(groups), n.b().getF64FloatAttr(args.eps));
  return declaredResults(n, op);
}

/// Batch norm with batch statistics (no running stats): one
/// aten.batch_stats_norm.
absl::StatusOr<Values> batchStatsNorm(NodeImporter &n) {
  ASSIGN_OR_RETURN(StatisticsNormArgs args, statisticsNormArgs(n, "batch norm"));
  RankedTensorType in = typeOf(args.input);
  SmallVector<Type, 2> stats = statisticsTypes(n, in.getElementType(), {in.getDimSize(1)});
  auto op = n.b().create<aten::BatchStatsNormOp>(
      n.loc(), TypeRange{args.type, stats[0], stats[1]}, args.input, args.weight,
      args.bias, n.b().getF64FloatAttr(args.eps));
  return declaredResults(n, op);
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

/// _cdist_forward(x1, x2, p, compute_mode): one aten.cdist over x1 and x2
/// expanded to their broadcast batch dims. Eager's compute_mode (None or
/// 0: "use_mm_for_euclid_dist_if_necessary", 1: always, 2: never) picks
/// the matrix-product form for p = 2; so does Kiln, for eager's rounding.
absl::StatusOr<Values> cdist(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value x1, n.tensor("x1"));
  ASSIGN_OR_RETURN(Value x2, n.tensor("x2"));
  ASSIGN_OR_RETURN(double p, n.floatAttr("p"));
  ASSIGN_OR_RETURN(int64_t mode, n.intAttr("compute_mode", 0));
  ArrayRef<int64_t> a = typeOf(x1).getShape(), b = typeOf(x2).getShape();
  Type element = typeOf(x1).getElementType();
  if (!isa<FloatType>(element) || typeOf(x2).getElementType() != element)
    return n.error("cdist takes two tensors of one floating-point type");
  if (a.size() < 2 || b.size() < 2 || a.back() != b.back())
    return n.error("x1 and x2 must be (..., rows, M) with the same M");
  if (!(p >= 0))
    return n.error("cdist's p must be a non-negative number");
  if (mode < 0 || mode > 2)
    return n.error(absl::StrCat("compute_mode ", mode, " is not 0, 1 or 2"));
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(a.drop_back(2), b.drop_back(2), batch))
    return n.error("x1's and x2's batch dims do not broadcast");
  auto expanded = [&](Value v, ArrayRef<int64_t> shape) -> Value {
    SmallVector<int64_t> want(batch);
    want.append(shape.end() - 2, shape.end());
    auto to = RankedTensorType::get(want, element);
    if (typeOf(v) == to)
      return v;
    if (typeOf(v).getRank() < to.getRank()) {
      SmallVector<int64_t> ones(to.getRank() - typeOf(v).getRank(), 1);
      ones.append(shape.begin(), shape.end());
      v = viewValue(n, v, ones);
    }
    return n.b().create<aten::ExpandOp>(n.loc(), to, v).getResult();
  };
  int64_t rows1 = a[a.size() - 2], rows2 = b[b.size() - 2];
  bool useMm = p == 2.0 && (mode == 1 || (mode == 0 && (rows1 > 25 || rows2 > 25)));
  return Values{n.b()
                    .create<aten::CdistOp>(n.loc(), type, expanded(x1, a), expanded(x2, b),
                                           n.b().getF64FloatAttr(p),
                                           useMm ? n.b().getUnitAttr() : UnitAttr())
                    .getResult()};
}

} // namespace

void addNormHandlers(OpHandlerTable &t) {
  t["aten._cdist_forward.default"] = cdist;
  t["aten.native_group_norm.default"] = groupNorm;
  t["aten._native_batch_norm_legit.no_stats"] = batchStatsNorm;
  t["aten.linalg_vector_norm.default"] = vectorNorm;
}

} // namespace kiln
