//===- LowerVectorContracts.cpp - the kiln-lower-vector-contracts pass ----===//
//
// This file implements the post-bufferization vector clean-up of the CPU
// pipeline: hoist the accumulator out of the K loop, then lower contractions
// to outer products (FMAs) and simplify transfers. Each pattern group runs
// separately: one large group can blow up compile time and memory.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_LOWERVECTORCONTRACTS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct LowerVectorContractsPass
    : kiln::impl::LowerVectorContractsBase<LowerVectorContractsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    linalg::hoistRedundantVectorTransfers(func);

    using Populate = std::function<void(RewritePatternSet &)>;
    SmallVector<Populate> groups = {
        [](RewritePatternSet &p) {
          vector::populateCastAwayVectorLeadingOneDimPatterns(p);
        },
        [](RewritePatternSet &p) {
          vector::populateVectorContractLoweringPatterns(
              p, vector::VectorTransformsOptions().setVectorTransformsOptions(
                     vector::VectorContractLowering::OuterProduct));
        },
        [](RewritePatternSet &p) {
          vector::populateVectorTransferPermutationMapLoweringPatterns(p);
          // A 2-D transpose becomes one shuffle of its flattened rows,
          // which LLVM lowers to register permutes (not element by element).
          vector::populateVectorTransposeLoweringPatterns(
              p, vector::VectorTransformsOptions().setVectorTransposeLowering(
                     vector::VectorTransposeLowering::Shuffle1D));
        },
        [](RewritePatternSet &p) {
          vector::populateVectorTransferLoweringPatterns(p,
                                                         /*maxTransferRank=*/1);
          vector::populateVectorShapeCastLoweringPatterns(p);
          vector::populateVectorBroadcastLoweringPatterns(p);
        },
    };
    for (const Populate &populate : groups) {
      RewritePatternSet patterns(&getContext());
      populate(patterns);
      if (failed(applyPatternsAndFoldGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
  }
};

} // namespace
