//===- SpecialFunctions.h - scalar bodies of the special functions --------===//
//
// This file declares the aten.pointwise bodies of the special functions:
// lgamma, digamma, polygamma, Hurwitz's zeta, erfc, erfcx, erfinv, the
// normal distribution's quantile ndtri and frexp's parts
// (SpecialFunctions.cpp); igamma and igammac (IncompleteGamma.cpp); the Bessel functions (BesselFunctions.cpp); and
// the orthogonal polynomials (OrthogonalPolynomials.cpp). The functions
// compute in f64 (an f32 operand widens and its result rounds once); the
// polynomials in their operands' type, as eager's. lgamma, erfc and the
// Bessel functions J and Y are libm's; the bodies call them by name, and
// kiln-declare-libm-calls declares them in the module before
// kiln-convert-aten-to-linalg runs.
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
/// The regularized incomplete gamma functions P(a, x) and Q(a, x) of
/// (a, x) (IncompleteGamma.cpp).
KILN_SPECIAL_FUNCTION(igammaBody)
KILN_SPECIAL_FUNCTION(igammacBody)
/// frexp's mantissa, and its exponent as a float (exact) in the same type.
KILN_SPECIAL_FUNCTION(frexpMantissaBody)
KILN_SPECIAL_FUNCTION(frexpExponentBody)
// Bessel functions: I and K modified (e: exp-scaled), J and Y, spherical
// j0, and Airy's Ai.
KILN_SPECIAL_FUNCTION(i0Body)
KILN_SPECIAL_FUNCTION(i0eBody)
KILN_SPECIAL_FUNCTION(i1Body)
KILN_SPECIAL_FUNCTION(i1eBody)
KILN_SPECIAL_FUNCTION(k0Body)
KILN_SPECIAL_FUNCTION(k0eBody)
KILN_SPECIAL_FUNCTION(k1Body)
KILN_SPECIAL_FUNCTION(k1eBody)
KILN_SPECIAL_FUNCTION(j0Body)
KILN_SPECIAL_FUNCTION(j1Body)
KILN_SPECIAL_FUNCTION(y0Body)
KILN_SPECIAL_FUNCTION(y1Body)
KILN_SPECIAL_FUNCTION(sphericalJ0Body)
KILN_SPECIAL_FUNCTION(airyAiBody)
// Orthogonal polynomials p_n(x): operands (x, n).
KILN_SPECIAL_FUNCTION(chebyshevTBody)
KILN_SPECIAL_FUNCTION(chebyshevUBody)
KILN_SPECIAL_FUNCTION(chebyshevVBody)
KILN_SPECIAL_FUNCTION(chebyshevWBody)
KILN_SPECIAL_FUNCTION(shiftedChebyshevTBody)
KILN_SPECIAL_FUNCTION(shiftedChebyshevUBody)
KILN_SPECIAL_FUNCTION(shiftedChebyshevVBody)
KILN_SPECIAL_FUNCTION(shiftedChebyshevWBody)
KILN_SPECIAL_FUNCTION(hermiteHBody)
KILN_SPECIAL_FUNCTION(hermiteHeBody)
KILN_SPECIAL_FUNCTION(laguerreLBody)
KILN_SPECIAL_FUNCTION(legendrePBody)
#undef KILN_SPECIAL_FUNCTION

/// The libm functions (double -> double) the bodies call by name, for
/// their rows in the pointwise lowering table (PointwiseTable.h).
inline constexpr llvm::StringLiteral kCallsLgamma[] = {"lgamma"};
inline constexpr llvm::StringLiteral kCallsErfc[] = {"erfc"};
inline constexpr llvm::StringLiteral kCallsJ0[] = {"j0"};
inline constexpr llvm::StringLiteral kCallsJ1[] = {"j1"};
inline constexpr llvm::StringLiteral kCallsY0[] = {"y0"};
inline constexpr llvm::StringLiteral kCallsY1[] = {"y1"};

} // namespace kiln::aten
