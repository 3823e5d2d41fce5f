//===- AtenToLinalg.cpp - the kiln-convert-aten-to-linalg pass ------------===//
//
// This file implements the pass that lowers the aten dialect to
// linalg-on-tensors by applying every pattern group as a partial conversion
// with the aten dialect illegal.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Aten/IR/AtenDialect.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTATENTOLINALG
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct ConvertAtenToLinalgPass
    : kiln::impl::ConvertAtenToLinalgBase<ConvertAtenToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<kiln::aten::AtenDialect>();
    target.addLegalDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                           func::FuncDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, vector::VectorDialect>();
    RewritePatternSet patterns(ctx);
    kiln::aten::populateElementwisePatterns(patterns);
    kiln::aten::populateLinearPatterns(patterns);
    kiln::aten::populateReductionPatterns(patterns);
    kiln::aten::populateNormalizationPatterns(patterns);
    kiln::aten::populateDataMovementPatterns(patterns);
    kiln::aten::populateDataDependentPatterns(patterns);
    kiln::aten::populatePointwisePatterns(patterns);
    kiln::aten::populateConvolutionPatterns(patterns);
    kiln::aten::populatePoolingPatterns(patterns);
    kiln::aten::populateGridSamplePatterns(patterns);
    kiln::aten::populateIndexingPatterns(patterns);
    kiln::aten::populateReductionFamilyPatterns(patterns);
    kiln::aten::populateSortingPatterns(patterns);
    kiln::aten::populateScanPatterns(patterns);
    kiln::aten::populateFactorisationPatterns(patterns);
    kiln::aten::populateJacobiPatterns(patterns);
    kiln::aten::populateSymmetricEigenPatterns(patterns);
    kiln::aten::populateHermitianEigenvectorPatterns(patterns);
    kiln::aten::populateComplexSingularVectorPatterns(patterns);
    kiln::aten::populateGeneralEigenPatterns(patterns);
    kiln::aten::populateComplexEigenPatterns(patterns);
    kiln::aten::populateBunchKaufmanPatterns(patterns);
    kiln::aten::populateMatrixExpPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
