//===- FoldBroadcastProducts.cpp - the kiln-fold-broadcast-products pass --===//
//
// This file implements the pass that turns a batched product against one
// broadcast matrix into a single 2-D product:
//   bmm(a[B,M,K], expand(w[K,N]))  =  view(mm(view(a, [B*M,K]), w), [B,M,N]).
// torch's matmul decomposition emits the first form for a 3-D input that is
// not contiguous (nn.MultiheadAttention's in-projection): per call it
// materialises B copies of the weight (100 MB for a d256 encoder at
// sequence 128) and runs B small products where one large one does, and a
// kernel library cannot keep such a weight packed.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDBROADCASTPRODUCTS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// `value` seen through views that keep its type.
Value throughIdentityViews(Value value) {
  while (auto view = value.getDefiningOp<kiln::aten::ViewOp>()) {
    if (view.getSelf().getType() != view.getType())
      break;
    value = view.getSelf();
  }
  return value;
}

/// bmm(a, expand(w)) with w (K, N) or (1, K, N): one mm over B*M rows.
struct FoldBroadcastMat2 : OpRewritePattern<kiln::aten::BmmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(kiln::aten::BmmOp op,
                                PatternRewriter &rewriter) const override {
    auto expand =
        throughIdentityViews(op.getMat2()).getDefiningOp<kiln::aten::ExpandOp>();
    if (!expand)
      return rewriter.notifyMatchFailure(op, "mat2 is not a broadcast");
    Value w = expand.getSelf();
    auto wType = cast<RankedTensorType>(w.getType());
    auto mat2Type = cast<RankedTensorType>(op.getMat2().getType());
    int64_t k = mat2Type.getDimSize(1), n = mat2Type.getDimSize(2);
    int64_t rank = wType.getRank();
    bool oneMatrix = rank == 2 || (rank == 3 && wType.getDimSize(0) == 1);
    if (!oneMatrix || wType.getDimSize(rank - 2) != k ||
        wType.getDimSize(rank - 1) != n)
      return rewriter.notifyMatchFailure(op, "mat2 is not one matrix broadcast "
                                             "over the batch");
    auto aType = cast<RankedTensorType>(op.getSelf().getType());
    RankedTensorType resultType = op.getType();
    if (!wType.hasStaticShape() || ShapedType::isDynamic(k) || ShapedType::isDynamic(n))
      return rewriter.notifyMatchFailure(op, "the broadcast matrix has a symbolic size");
    Location loc = op.getLoc();
    // Batch and rows may be symbolic (a batch, a sequence): their sizes then
    // travel as the views' size operands.
    bool dynamic = !aType.hasStaticShape();
    int64_t rows = dynamic ? ShapedType::kDynamic
                           : aType.getDimSize(0) * aType.getDimSize(1);
    SmallVector<Value> rowSizes, batchSizes;
    if (dynamic) {
      Value b = rewriter.create<tensor::DimOp>(loc, op.getSelf(), 0);
      Value m = rewriter.create<tensor::DimOp>(loc, op.getSelf(), 1);
      rowSizes.push_back(rewriter.create<arith::MulIOp>(loc, b, m));
      for (auto [d, size] : llvm::enumerate(ArrayRef<Value>{b, m}))
        if (resultType.isDynamicDim(d))
          batchSizes.push_back(size);
    }
    Value a = rewriter.create<kiln::aten::ViewOp>(loc, aType.clone({rows, k}),
                                                  op.getSelf(), rowSizes);
    if (rank == 3)
      w = rewriter.create<kiln::aten::ViewOp>(loc, wType.clone({k, n}), w);
    Value product = rewriter.create<kiln::aten::MmOp>(
        loc, resultType.clone({rows, n}), a, w);
    rewriter.replaceOpWithNewOp<kiln::aten::ViewOp>(op, resultType, product, batchSizes);
    return success();
  }
};

struct FoldBroadcastProductsPass
    : kiln::impl::FoldBroadcastProductsBase<FoldBroadcastProductsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldBroadcastMat2>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
