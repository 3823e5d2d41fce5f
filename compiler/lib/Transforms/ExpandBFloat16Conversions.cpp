//===- ExpandBFloat16Conversions.cpp - bf16 conversions in integers -------===//
//
// This file implements kiln-expand-bf16-conversions: MLIR's bf16 expansion
// patterns (truncf by round-to-nearest-even on the bits, extf by a shift),
// so that no conversion the compiler writes depends on a CPU's bf16
// instructions. (The cpu target also turns those instructions off for the
// conversions LLVM inserts when it legalises bf16 arithmetic: CpuTarget.cpp.)
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_EXPANDBFLOAT16CONVERSIONS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct ExpandBFloat16ConversionsPass
    : kiln::impl::ExpandBFloat16ConversionsBase<ExpandBFloat16ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
