//===- SpecialFunctions.h - scalar bodies of the special functions --------===//
//
// This file declares the aten.pointwise bodies of the special functions:
// lgamma, digamma, polygamma, Hurwitz's zeta, erfc, erfcx, erfinv, the
// normal distribution's quantile ndtri, the modified Bessel functions
// i0, i0e, i1, i1e, and frexp's parts. Each computes in f64 (an f32 operand widens
// and its result rounds once). lgamma and erfc are libm's; the bodies call
// them by name, and kiln-declare-libm-calls declares them in the module
// before kiln-convert-aten-to-linalg runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::aten {

#define KILN_SPECIAL_FUNCTION(NAME)                                            \
  mlir::Value NAME(mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a,   \
                   llvm::ArrayRef<double> scalars);
KILN_SPECIAL_FUNCTION(lgammaBody)
KILN_SPECIAL_FUNCTION(digammaBody)
/// polygamma(n; x): n is the one scalar.
KILN_SPECIAL_FUNCTION(polygammaBody)
/// zeta(x, q) = sum over k >= 0 of (q + k)^-x.
KILN_SPECIAL_FUNCTION(zetaBody)
KILN_SPECIAL_FUNCTION(erfcBody)
KILN_SPECIAL_FUNCTION(erfcxBody)
KILN_SPECIAL_FUNCTION(erfinvBody)
KILN_SPECIAL_FUNCTION(ndtriBody)
/// frexp's mantissa, and its exponent as a float (exact) in the same type.
KILN_SPECIAL_FUNCTION(frexpMantissaBody)
KILN_SPECIAL_FUNCTION(frexpExponentBody)
KILN_SPECIAL_FUNCTION(i0Body)
KILN_SPECIAL_FUNCTION(i0eBody)
KILN_SPECIAL_FUNCTION(i1Body)
KILN_SPECIAL_FUNCTION(i1eBody)
#undef KILN_SPECIAL_FUNCTION

/// The libm functions (double -> double) the bodies call by name, for
/// their rows in the pointwise lowering table (PointwiseTable.h).
inline constexpr llvm::StringLiteral kCallsLgamma[] = {"lgamma"};
inline constexpr llvm::StringLiteral kCallsErfc[] = {"erfc"};

} // namespace kiln::aten
