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

struct FuseElementwisePass
    : kiln::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 computesEachElementOnce);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
