//===- DecomposeAten.cpp - the kiln-decompose-aten pass -------------------===//
//
// This file implements the pass that rewrites composite aten ops into the
// simpler aten ops that compute them, applying every family declared in
// Decompositions.h.
//
//===----------------------------------------------------------------------===//
#include "Decompositions.h"

#include "kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSEATEN
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct DecomposeAtenPass : kiln::impl::DecomposeAtenBase<DecomposeAtenPass> {
  /// The patterns, built once per pass instance rather than per function.
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    kiln::populateQuantizeDecompositions(set);
    kiln::populateSearchDecompositions(set);
    kiln::populateScanDecompositions(set);
    kiln::populateNormDecompositions(set);
    kiln::populateTrilinearDecompositions(set);
    kiln::populateAdaptivePoolDecompositions(set);
    kiln::populateFractionalPoolDecompositions(set);
    kiln::populateEmbeddingDecompositions(set);
    kiln::populatePoolBackwardDecompositions(set);
    kiln::populateConvolutionBackwardDecompositions(set);
    kiln::populateTransposedConvolutionDecompositions(set);
    kiln::populateHistogramDecompositions(set);
    kiln::populateSegmentReduceDecompositions(set);
    kiln::populateScatterDecompositions(set);
    kiln::populateSelectionDecompositions(set);
    kiln::populateRepeatDecompositions(set);
    kiln::populateUniqueDecompositions(set);
    kiln::populateUpsampleDecompositions(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  /// Rewrites only the composite ops (and what their patterns build): a
  /// function without any is left as it is, its other ops unfolded.
  void runOnOperation() override {
    SmallVector<Operation *> composite;
    getOperation().walk([&](Operation *op) {
      if (patterns.getOpSpecificNativePatterns().contains(op->getName()))
        composite.push_back(op);
    });
    if (composite.empty())
      return;
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    if (failed(applyOpPatternsAndFold(composite, patterns, config)))
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
