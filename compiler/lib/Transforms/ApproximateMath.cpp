//===- ApproximateMath.cpp - the kiln-approximate-math pass ---------------===//
//
// This file implements the replacement of transcendental math ops by MLIR's
// polynomial approximations, which vectorize where libm calls do not; f32
// sin, cos, atan, asin and acos, which those get wrong by more than an ulp
// or two, compute in f64 instead (AccurateTrigonometry.cpp).
//
//===----------------------------------------------------------------------===//
#include "AccurateTrigonometry.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct ApproximateMathPass
    : kiln::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    kiln::populateAccurateTrigonometryPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
