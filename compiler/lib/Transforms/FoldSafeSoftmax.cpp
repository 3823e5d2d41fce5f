//===- FoldSafeSoftmax.cpp - the kiln-fold-safe-softmax pass --------------===//
//
// This file implements the pass that recognises torch's decomposition of
// `_safe_softmax` (the softmax of scaled_dot_product_attention):
//   where(logical_not(any(logical_not(eq(x, -inf)), d, keepdim)), 0,
//         softmax(x, d))
// (or with all(eq(x, -inf), d, keepdim) as the condition) and replaces it by
// one `aten.softmax {zero_masked_rows}` (when nothing else reads the plain
// softmax, which would then be computed twice). The lowering zeroes a row whose
// maximum is -inf, which is exactly a row of -inf only: a NaN anywhere
// makes the maximum NaN, and such a row is not "all -inf" for torch either.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "kiln/Dialect/Aten/IR/AtenMatchers.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_FOLDSAFESOFTMAX
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using kiln::aten::PointwiseOp;

namespace {

/// The pointwise op of function `fn` with `arity` tensor inputs and no
/// scalars that defines `value`, or null.
PointwiseOp pointwise(Value value, StringRef fn, size_t arity) {
  auto op = value.getDefiningOp<PointwiseOp>();
  if (!op || op.getFn() != fn || op.getInputs().size() != arity ||
      !op.getScalars().empty())
    return nullptr;
  return op;
}

/// True when `reduction` reduces only `dim` and keeps it.
template <typename Reduction>
bool reducesOnly(Reduction reduction, int64_t dim) {
  return reduction.getKeepdim() && reduction.getDims() == ArrayRef<int64_t>{dim};
}

/// The x of eq(x, -inf) defining `value`, or null.
Value equalsNegativeInfinity(Value value) {
  PointwiseOp eq = pointwise(value, "eq", 2);
  if (!eq || !kiln::aten::isFloatSplat(eq.getInputs()[1], -INFINITY))
    return Value();
  return eq.getInputs()[0];
}

/// The x whose rows along `dim` are all -inf where `condition` is true:
/// logical_not(any(logical_not(eq(x, -inf)))) or all(eq(x, -inf)); null
/// when `condition` is neither.
Value maskedRowsOf(Value condition, int64_t dim) {
  if (auto all = condition.getDefiningOp<kiln::aten::AllOp>()) {
    if (!reducesOnly(all, dim))
      return Value();
    return equalsNegativeInfinity(all.getSelf());
  }
  PointwiseOp outer = pointwise(condition, "logical_not", 1);
  if (!outer)
    return Value();
  auto any = outer.getInputs()[0].getDefiningOp<kiln::aten::AnyOp>();
  if (!any || !reducesOnly(any, dim))
    return Value();
  PointwiseOp inner = pointwise(any.getSelf(), "logical_not", 1);
  if (!inner)
    return Value();
  return equalsNegativeInfinity(inner.getInputs()[0]);
}

struct FoldSafeSoftmaxPattern : OpRewritePattern<PointwiseOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PointwiseOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getFn() != "where" || op.getInputs().size() != 3 ||
        !op.getScalars().empty())
      return rewriter.notifyMatchFailure(op, "not a where");
    Value condition = op.getInputs()[0];
    auto softmax = op.getInputs()[2].getDefiningOp<kiln::aten::SoftmaxOp>();
    if (!softmax || softmax.getType() != op.getType() ||
        !kiln::aten::isFloatSplat(op.getInputs()[1], 0.0))
      return rewriter.notifyMatchFailure(op, "not where(c, 0, softmax(x))");
    // Another reader keeps the plain softmax: folding would compute it twice.
    if (!softmax->hasOneUse())
      return rewriter.notifyMatchFailure(op, "the softmax has other readers");
    if (maskedRowsOf(condition, softmax.getDim()) != softmax.getSelf())
      return rewriter.notifyMatchFailure(op, "the condition is not the "
                                             "softmax's masked rows");
    auto safe = rewriter.create<kiln::aten::SoftmaxOp>(
        op.getLoc(), softmax.getType(), softmax.getSelf(), softmax.getDimAttr(),
        rewriter.getUnitAttr());
    rewriter.replaceOp(op, safe.getResult());
    return success();
  }
};

struct FoldSafeSoftmaxPass
    : kiln::impl::FoldSafeSoftmaxBase<FoldSafeSoftmaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldSafeSoftmaxPattern>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
