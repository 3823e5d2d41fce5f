//===- AccurateTrigonometry.h - f32 trigonometry in f64 ------------------===//
//
// This file declares the patterns that compute f32 sin, cos, atan, atan2, asin
// and acos in f64 (rounded once), which kiln-approximate-math applies in place
// of MLIR's f32 approximations of them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// Adds the patterns, at benefit 2 (above MLIR's approximations).
void populateAccurateTrigonometryPatterns(mlir::RewritePatternSet &patterns);

} // namespace kiln
