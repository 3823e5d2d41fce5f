//===- FuseElementwise.cpp - the kiln-fuse-elementwise pass ---------------===//
//
// This file implements producer-consumer fusion of elementwise linalg.generic
// ops, restricted to fusions that compute each producer element once.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Fuse only into an all-parallel consumer that reads the producer's result
/// through a permutation: no reduction and no broadcast re-reads, so no
/// producer element is computed twice.
bool computesEachElementOnce(OpOperand *fusedOperand) {
  auto consumer = dyn_cast<linalg::GenericOp>(fusedOperand->getOwner());
  if (!consumer || consumer.getNumReductionLoops() != 0)
    return false;
  return consumer.getMatchingIndexingMap(fusedOperand).isPermutation();
}

/// True when fusing the producer of `fusedOperand` into its consumer gives
/// a body of at most `maxBodyOps` operations.
bool fusedBodyFits(OpOperand *fusedOperand, int64_t maxBodyOps) {
  auto producer = fusedOperand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(fusedOperand->getOwner());
  if (!producer || !consumer)
    return true;
  auto size = [](linalg::GenericOp op) {
    return static_cast<int64_t>(op.getRegion().front().getOperations().size());
  };
  return size(producer) + size(consumer) <= maxBodyOps;
}

struct FuseElementwisePass
    : kiln::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    int64_t limit = maxBodyOps;
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [limit](OpOperand *fusedOperand) {
          return computesEachElementOnce(fusedOperand) &&
                 fusedBodyFits(fusedOperand, limit);
        });
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
