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
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    kiln::populateQuantizeDecompositions(patterns);
    kiln::populateSearchDecompositions(patterns);
    kiln::populateScanDecompositions(patterns);
    kiln::populateNormDecompositions(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
