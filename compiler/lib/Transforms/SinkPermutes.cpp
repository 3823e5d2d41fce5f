//===- SinkPermutes.cpp - the kiln-sink-permutes pass ---------------------===//
//
// This file implements the pass that moves aten.permute ops down past ops
// that do not care about layout (elementwise ops, keepdim reductions,
// pooling, which then pools channels last) and cancels inverse pairs. Channels-last
// convolution calls (kiln-convert-aten-to-kernel-calls) read permute(x) and
// give permute(y): once the permute after one call has moved down to the
// permute before the next, the two cancel, and the activations between the
// calls never change layout. A permute that reaches an op it cannot pass
// stays there, and is materialised as a transpose.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "kiln/Dialect/Aten/IR/AtenMatchers.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>
#include <type_traits>

namespace kiln {
#define GEN_PASS_DEF_SINKPERMUTES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using kiln::aten::PermuteOp;

namespace {

/// Operands with at most this share of the result's elements are permuted
/// on their own when an elementwise op's permute moves past it.
constexpr int64_t kSmallOperandShare = 8;

/// The inverse permutation of `dims`.
SmallVector<int64_t> inverse(ArrayRef<int64_t> dims) {
  SmallVector<int64_t> result(dims.size());
  for (auto [i, d] : llvm::enumerate(dims))
    result[d] = i;
  return result;
}

/// `shape` as permute(·, dims) gives it.
SmallVector<int64_t> permutedShape(ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> dims) {
  SmallVector<int64_t> result;
  for (int64_t d : dims)
    result.push_back(shape[d]);
  return result;
}

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// permute(permute(x, a), b) = permute(x, a[b[i]]), or x.
struct ComposePermutes : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getSelf().getDefiningOp<PermuteOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "not a permute of a permute");
    SmallVector<int64_t> dims;
    for (int64_t d : op.getDims())
      dims.push_back(inner.getDims()[d]);
    if (llvm::equal(dims, llvm::seq<int64_t>(0, dims.size()))) {
      rewriter.replaceOp(op, inner.getSelf());
      return success();
    }
    rewriter.replaceOpWithNewOp<PermuteOp>(op, inner.getSelf(), dims);
    return success();
  }
};

/// A permute that keeps the order of the dims of extent > 1 moves no
/// element: it is a view.
struct PermuteAsView : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType from = typeOf(op.getSelf());
    if (!from.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "symbolic sizes");
    int64_t last = -1;
    for (int64_t d : op.getDims()) {
      if (from.getDimSize(d) == 1)
        continue;
      if (d < last)
        return rewriter.notifyMatchFailure(op, "moves elements");
      last = d;
    }
    rewriter.replaceOpWithNewOp<kiln::aten::ViewOp>(op, op.getType(),
                                                    op.getSelf());
    return success();
  }
};

/// The groups of consecutive dims of `from` that `to` merges, one group per
/// dim of `to` (extent-1 dims join the group before them, or the first);
/// nullopt when `to` is not such a collapse of `from`.
std::optional<SmallVector<SmallVector<int64_t>>>
collapseGroups(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  SmallVector<SmallVector<int64_t>> groups;
  size_t d = 0;
  for (int64_t extent : to) {
    SmallVector<int64_t> group;
    int64_t product = 1;
    while (d < from.size() && (group.empty() || product < extent)) {
      product *= from[d];
      group.push_back(d++);
    }
    if (product != extent)
      return std::nullopt;
    groups.push_back(std::move(group));
  }
  // Trailing extent-1 dims join the last group.
  for (; d < from.size(); ++d) {
    if (from[d] != 1 || groups.empty())
      return std::nullopt;
    groups.back().push_back(d);
  }
  return groups;
}

/// view(permute(y, p)) that merges dims which p keeps adjacent and in
/// order = permute(view(y), p'): the merge happens in y's layout, and the
/// permute moves whole groups. The patch embedding of a vision transformer,
/// conv(x).flatten(2).transpose(1, 2), then reads the channels-last output
/// as it is.
struct SinkPastCollapse : OpRewritePattern<kiln::aten::ViewOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(kiln::aten::ViewOp op,
                                PatternRewriter &rewriter) const override {
    auto p = op.getSelf().getDefiningOp<PermuteOp>();
    RankedTensorType from = typeOf(op.getSelf());
    RankedTensorType to = op.getType();
    if (!p || !from.hasStaticShape() || !to.hasStaticShape() ||
        to.getRank() >= from.getRank())
      return rewriter.notifyMatchFailure(op, "not a collapse of a permute");
    std::optional<SmallVector<SmallVector<int64_t>>> groups =
        collapseGroups(from.getShape(), to.getShape());
    if (!groups)
      return rewriter.notifyMatchFailure(op, "not a collapse of adjacent dims");
    ArrayRef<int64_t> dims = p.getDims();
    // Each group is a run of y's dims in order; order the runs as y has them.
    SmallVector<std::pair<int64_t, int64_t>> runs; // (y's first dim, group)
    for (auto [g, group] : llvm::enumerate(*groups)) {
      for (size_t i = 1; i < group.size(); ++i)
        if (dims[group[i]] != dims[group[i - 1]] + 1)
          return rewriter.notifyMatchFailure(op, "merges dims the permute separates");
      runs.emplace_back(dims[group.front()], g);
    }
    llvm::sort(runs);
    RankedTensorType y = typeOf(p.getSelf());
    SmallVector<int64_t> merged, order(runs.size());
    for (auto [position, run] : llvm::enumerate(runs)) {
      merged.push_back(to.getDimSize(run.second));
      order[run.second] = position;
    }
    Value view = rewriter.create<kiln::aten::ViewOp>(op.getLoc(), y.clone(merged),
                                                     p.getSelf());
    rewriter.replaceOpWithNewOp<PermuteOp>(op, view, order);
    return success();
  }
};

/// Ops that apply one function per element, with operands broadcasting to
/// the result's shape by PyTorch's rules.
bool isElementwise(Operation *op) {
  return isa<kiln::aten::AddOp, kiln::aten::SubOp, kiln::aten::MulOp,
             kiln::aten::DivOp, kiln::aten::NegOp, kiln::aten::ReluOp,
             kiln::aten::TanhOp, kiln::aten::SigmoidOp, kiln::aten::ExpOp,
             kiln::aten::GeluOp, kiln::aten::PointwiseOp>(op);
}

/// elementwise(permute(y, p), ...) = permute(elementwise(y, ...'), p).
struct SinkPastElementwise : RewritePattern {
  explicit SinkPastElementwise(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(op) || op->getNumResults() != 1)
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static tensor result");
    // The anchor: a permute of the result's own shape.
    std::optional<SmallVector<int64_t>> dims;
    for (Value operand : op->getOperands())
      if (auto p = operand.getDefiningOp<PermuteOp>();
          p && typeOf(operand).getShape() == resultType.getShape())
        dims = SmallVector<int64_t>(p.getDims());
    if (!dims)
      return rewriter.notifyMatchFailure(op, "no permute of the result's shape");
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> back = inverse(*dims);
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      RankedTensorType type = typeOf(operand);
      if (auto p = operand.getDefiningOp<PermuteOp>();
          p && p.getDims() == ArrayRef<int64_t>(*dims)) {
        operands.push_back(p.getSelf());
        continue;
      }
      if (type.getRank() == 0) {
        operands.push_back(operand);
        continue;
      }
      if (!type.hasStaticShape() ||
          type.getNumElements() * kSmallOperandShare >
              resultType.getNumElements())
        return rewriter.notifyMatchFailure(op, "a large operand in another layout");
      operands.push_back(Value()); // permuted below, once the op matches
    }
    Location loc = op->getLoc();
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      if (operands[i])
        continue;
      // Right-aligned broadcasting: leading dims of extent 1 first.
      RankedTensorType type = typeOf(operand);
      Value full = operand;
      if (type.getRank() < rank) {
        SmallVector<int64_t> shape(rank - type.getRank(), 1);
        llvm::append_range(shape, type.getShape());
        full = rewriter.create<kiln::aten::ViewOp>(loc, type.clone(shape),
                                                   operand);
      }
      operands[i] = rewriter.create<PermuteOp>(loc, full, back);
    }
    OperationState state(loc, op->getName().getStringRef(), operands,
                         {resultType.clone(permutedShape(resultType.getShape(), back))},
                         op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOpWithNewOp<PermuteOp>(op, moved->getResult(0), *dims);
    return success();
  }
};

/// A keepdim reduction of permute(y, p) reduces y's matching dims.
template <typename Reduction>
struct SinkPastReduction : OpRewritePattern<Reduction> {
  using OpRewritePattern<Reduction>::OpRewritePattern;

  LogicalResult matchAndRewrite(Reduction op,
                                PatternRewriter &rewriter) const override {
    auto p = op.getSelf().template getDefiningOp<PermuteOp>();
    if (!p || !op.getKeepdim() || op.getDims().empty())
      return rewriter.notifyMatchFailure(op, "not a keepdim reduction of a permute");
    if (!op.getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "symbolic sizes");
    ArrayRef<int64_t> dims = p.getDims();
    SmallVector<int64_t> reduced; // reductions' dims are normalized
    for (int64_t d : op.getDims())
      reduced.push_back(dims[d]);
    llvm::sort(reduced);
    SmallVector<int64_t> back = inverse(dims);
    RankedTensorType type = op.getType();
    auto moved = rewriter.create<Reduction>(
        op.getLoc(), type.clone(permutedShape(type.getShape(), back)),
        p.getSelf(), rewriter.getDenseI64ArrayAttr(reduced),
        rewriter.getBoolAttr(true));
    rewriter.replaceOpWithNewOp<PermuteOp>(op, moved.getResult(), dims);
    return success();
  }
};

/// The permute that makes a pool's input, (n, c, spatial...), from a
/// channels-last tensor (n, spatial..., c); null when it is not one.
PermuteOp channelsLastSource(Value input, size_t spatialDims) {
  auto p = input.getDefiningOp<PermuteOp>();
  int64_t rank = typeOf(input).getRank();
  if (!p || rank != static_cast<int64_t>(spatialDims) + 2 ||
      p.getDims() != ArrayRef<int64_t>(kiln::aten::fromChannelsLast(rank)))
    return nullptr;
  return p;
}

/// A pool of permute(y, fromChannelsLast): the same pool of y channels
/// last, permuted back. Max pooling moves only when nothing reads its
/// indices (their layout would change with it).
template <typename Pool>
struct SinkPastPool : OpRewritePattern<Pool> {
  using OpRewritePattern<Pool>::OpRewritePattern;

  LogicalResult matchAndRewrite(Pool op,
                                PatternRewriter &rewriter) const override {
    PermuteOp p = op.getChannelsLast()
                      ? nullptr
                      : channelsLastSource(op.getSelf(), op.getKernel().size());
    if (!p)
      return rewriter.notifyMatchFailure(op, "not a pool of a channels-last tensor");
    if constexpr (std::is_same_v<Pool, kiln::aten::MaxPoolOp>)
      if (!op.getIndices().use_empty())
        return rewriter.notifyMatchFailure(op, "its indices are read");
    ArrayRef<int64_t> fromLast = p.getDims();
    SmallVector<int64_t> toLast = inverse(fromLast);
    SmallVector<Type> types;
    for (Type type : op->getResultTypes()) {
      auto tensor = cast<RankedTensorType>(type);
      types.push_back(tensor.clone(permutedShape(tensor.getShape(), toLast)));
    }
    OperationState state(op.getLoc(), op->getName().getStringRef(), {p.getSelf()},
                         types, op->getAttrs());
    Operation *moved = rewriter.create(state);
    moved->setAttr(Pool::getChannelsLastAttrName(moved->getName()),
                   rewriter.getUnitAttr());
    SmallVector<Value> results;
    for (Value result : moved->getResults())
      results.push_back(rewriter.create<PermuteOp>(op.getLoc(), result, fromLast));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// A float channels-last average pool whose window is the whole unpadded
/// spatial extent (adaptive_avg_pool2d to 1x1, as in squeeze-excite blocks)
/// is the mean of the spatial dims, which vectorises better than a pool.
struct GlobalAvgPoolAsMean : OpRewritePattern<kiln::aten::AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(kiln::aten::AvgPoolOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType input = typeOf(op.getSelf());
    RankedTensorType type = op.getType();
    if (!op.getChannelsLast() || !isa<FloatType>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "not a float channels-last pool");
    // Channels last, the verifier has it (n, spatial..., c).
    SmallVector<int64_t> spatial;
    int64_t window = 1;
    for (auto [s, k] : llvm::enumerate(op.getKernel())) {
      int64_t d = static_cast<int64_t>(s) + 1;
      if (k != input.getDimSize(d) || op.getPadding()[s] != 0 ||
          type.getDimSize(d) != 1)
        return rewriter.notifyMatchFailure(op, "not a global pool");
      window *= k;
      spatial.push_back(d);
    }
    if (op.getDivisorOverride() != 0 && op.getDivisorOverride() != window)
      return rewriter.notifyMatchFailure(op, "another divisor");
    rewriter.replaceOpWithNewOp<kiln::aten::MeanOp>(
        op, type, op.getSelf(), rewriter.getDenseI64ArrayAttr(spatial),
        rewriter.getBoolAttr(true));
    return success();
  }
};

struct SinkPermutesPass : kiln::impl::SinkPermutesBase<SinkPermutesPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<ComposePermutes, PermuteAsView, SinkPastCollapse,
                 SinkPastElementwise,
                 SinkPastReduction<kiln::aten::SumOp>,
                 SinkPastReduction<kiln::aten::MeanOp>,
                 SinkPastReduction<kiln::aten::AmaxOp>,
                 SinkPastReduction<kiln::aten::AminOp>,
                 SinkPastPool<kiln::aten::MaxPoolOp>,
                 SinkPastPool<kiln::aten::AvgPoolOp>, GlobalAvgPoolAsMean>(
        context);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
