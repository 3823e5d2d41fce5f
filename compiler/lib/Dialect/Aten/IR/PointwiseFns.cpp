//===- PointwiseFns.cpp - the table behind aten.pointwise -----------------===//
//
// This file implements the signature table of `aten.pointwise` functions.
// Adding a function: one row here, one in the lowering's body table
// (lib/Conversion/AtenToLinalg/PointwiseBodies.cpp), one importer row.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/PointwiseFns.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

namespace kiln::aten {

namespace {
using R = PointwiseResult;
using C = ComputeIn;
using D = Domain;
constexpr PointwiseFn kFns[] = {
    // Unary math on floating-point results.
    {"sqrt", 1, 0, R::Float, C::Result, D::Float},
    {"rsqrt", 1, 0, R::Float, C::Result, D::Float},
    {"log", 1, 0, R::Float, C::Result, D::Float},
    {"log2", 1, 0, R::Float, C::Result, D::Float},
    {"log10", 1, 0, R::Float, C::Result, D::Float},
    {"log1p", 1, 0, R::Float, C::Result, D::Float},
    {"exp2", 1, 0, R::Float, C::Result, D::Float},
    {"expm1", 1, 0, R::Float, C::Result, D::Float},
    {"sin", 1, 0, R::Float, C::Result, D::Float},
    {"cos", 1, 0, R::Float, C::Result, D::Float},
    {"tan", 1, 0, R::Float, C::Result, D::Float},
    {"asin", 1, 0, R::Float, C::Result, D::Float},
    {"acos", 1, 0, R::Float, C::Result, D::Float},
    {"atan", 1, 0, R::Float, C::Result, D::Float},
    {"sinh", 1, 0, R::Float, C::Result, D::Float},
    {"cosh", 1, 0, R::Float, C::Result, D::Float},
    {"asinh", 1, 0, R::Float, C::Result, D::Float},
    {"acosh", 1, 0, R::Float, C::Result, D::Float},
    {"atanh", 1, 0, R::Float, C::Result, D::Float},
    {"erf", 1, 0, R::Float, C::Result, D::Float},
    // angle of a real number: pi below 0, else 0; NaN stays NaN.
    {"angle", 1, 0, R::Float, C::Result, D::Float},
    // Special functions (lib/Conversion/AtenToLinalg/SpecialFunctions.h);
    // polygamma(n).
    {"lgamma", 1, 0, R::Float, C::Result, D::Float},
    {"digamma", 1, 0, R::Float, C::Result, D::Float},
    {"polygamma", 1, 1, R::Float, C::Result, D::Float},
    {"erfc", 1, 0, R::Float, C::Result, D::Float},
    {"erfcx", 1, 0, R::Float, C::Result, D::Float},
    {"erfinv", 1, 0, R::Float, C::Result, D::Float},
    {"ndtri", 1, 0, R::Float, C::Result, D::Float},
    {"frexp_mantissa", 1, 0, R::Float, C::Result, D::Float},
    {"frexp_exponent", 1, 0, R::Float, C::Result, D::Float},
    {"i0", 1, 0, R::Float, C::Result, D::Float},
    {"i0e", 1, 0, R::Float, C::Result, D::Float},
    {"i1", 1, 0, R::Float, C::Result, D::Float},
    {"i1e", 1, 0, R::Float, C::Result, D::Float},
    {"k0", 1, 0, R::Float, C::Result, D::Float},
    {"k0e", 1, 0, R::Float, C::Result, D::Float},
    {"k1", 1, 0, R::Float, C::Result, D::Float},
    {"k1e", 1, 0, R::Float, C::Result, D::Float},
    {"bessel_j0", 1, 0, R::Float, C::Result, D::Float},
    {"bessel_j1", 1, 0, R::Float, C::Result, D::Float},
    {"bessel_y0", 1, 0, R::Float, C::Result, D::Float},
    {"bessel_y1", 1, 0, R::Float, C::Result, D::Float},
    {"spherical_bessel_j0", 1, 0, R::Float, C::Result, D::Float},
    {"airy_ai", 1, 0, R::Float, C::Result, D::Float},
    {"reciprocal", 1, 0, R::Float, C::Result, D::Float},
    {"silu", 1, 0, R::Float, C::Result, D::Float},
    {"hardsigmoid", 1, 0, R::Float, C::Result, D::Float},
    {"hardswish", 1, 0, R::Float, C::Result, D::Float},
    {"mish", 1, 0, R::Float, C::Result, D::Float},
    // softplus(beta, threshold), elu(alpha, scale, input_scale).
    {"softplus", 1, 2, R::Float, C::Result, D::Float},
    {"elu", 1, 3, R::Float, C::Result, D::Float},
    // Unary, any element type.
    {"round_decimals", 1, 1, R::Float, C::Result, D::Float},
    {"abs", 1, 0, R::Any, C::Result, D::Any},
    {"floor", 1, 0, R::Any, C::Result, D::Any},
    {"ceil", 1, 0, R::Any, C::Result, D::Any},
    {"round", 1, 0, R::Any, C::Result, D::Any},
    {"trunc", 1, 0, R::Any, C::Result, D::Any},
    {"sign", 1, 0, R::Any, C::Result, D::Any},
    {"bitwise_not", 1, 0, R::Any, C::Result, D::IntOrBool},
    {"copy", 1, 0, R::Any, C::Promoted, D::Any},
    // clamp/hardtanh(min, max): NaN bounds mean "none".
    {"clamp", 1, 2, R::Any, C::Result, D::NotBool},
    {"leaky_relu", 1, 1, R::Any, C::Result, D::Float},
    // Unary predicates.
    {"logical_not", 1, 0, R::Bool, C::Bool, D::Any},
    {"isnan", 1, 0, R::Bool, C::Promoted, D::Any},
    {"isinf", 1, 0, R::Bool, C::Promoted, D::Any},
    {"signbit", 1, 0, R::Bool, C::Promoted, D::Any},
    // u8 carried as i16 inside graphs: zero-extend at inputs, truncate at
    // outputs.
    {"widen_u8", 1, 0, R::Any, C::Promoted, D::IntOrBool},
    {"narrow_u8", 1, 0, R::Any, C::Promoted, D::IntOrBool},
    // Binary math in the result type.
    {"maximum", 2, 0, R::Any, C::Result, D::Any},
    {"minimum", 2, 0, R::Any, C::Result, D::Any},
    {"pow", 2, 0, R::Any, C::Result, D::NotBool},
    {"remainder", 2, 0, R::Any, C::Result, D::NotBool},
    {"fmod", 2, 0, R::Any, C::Result, D::NotBool},
    {"atan2", 2, 0, R::Float, C::Result, D::Float},
    {"hypot", 2, 0, R::Float, C::Result, D::Float},
    {"copysign", 2, 0, R::Float, C::Result, D::Float},
    // The next value of x's type toward y (f16/bf16 step in their own bits).
    {"nextafter", 2, 0, R::Float, C::Result, D::Float},
    // Hurwitz's zeta(x, q).
    {"zeta", 2, 0, R::Float, C::Result, D::Float},
    // The regularized incomplete gamma functions P(a, x) and Q(a, x).
    {"igamma", 2, 0, R::Float, C::Result, D::Float},
    {"igammac", 2, 0, R::Float, C::Result, D::Float},
    // Orthogonal polynomials p_n(x) of (x, n): n is read as an integer.
    {"chebyshev_polynomial_t", 2, 0, R::Float, C::Result, D::Float},
    {"chebyshev_polynomial_u", 2, 0, R::Float, C::Result, D::Float},
    {"chebyshev_polynomial_v", 2, 0, R::Float, C::Result, D::Float},
    {"chebyshev_polynomial_w", 2, 0, R::Float, C::Result, D::Float},
    {"shifted_chebyshev_polynomial_t", 2, 0, R::Float, C::Result, D::Float},
    {"shifted_chebyshev_polynomial_u", 2, 0, R::Float, C::Result, D::Float},
    {"shifted_chebyshev_polynomial_v", 2, 0, R::Float, C::Result, D::Float},
    {"shifted_chebyshev_polynomial_w", 2, 0, R::Float, C::Result, D::Float},
    {"hermite_polynomial_h", 2, 0, R::Float, C::Result, D::Float},
    {"hermite_polynomial_he", 2, 0, R::Float, C::Result, D::Float},
    {"laguerre_polynomial_l", 2, 0, R::Float, C::Result, D::Float},
    {"legendre_polynomial_p", 2, 0, R::Float, C::Result, D::Float},
    // fmax/fmin: maximum/minimum that pass over a NaN operand.
    {"fmax", 2, 0, R::Any, C::Result, D::Any},
    {"fmin", 2, 0, R::Any, C::Result, D::Any},
    // gcd/lcm: integers only (eager has no bool kernel).
    {"gcd", 2, 0, R::Any, C::Result, D::Int},
    {"lcm", 2, 0, R::Any, C::Result, D::Int},
    {"div_trunc", 2, 0, R::Any, C::Result, D::NotBool},
    {"div_floor", 2, 0, R::Any, C::Result, D::NotBool},
    {"bitwise_and", 2, 0, R::Any, C::Result, D::IntOrBool},
    {"bitwise_or", 2, 0, R::Any, C::Result, D::IntOrBool},
    {"bitwise_xor", 2, 0, R::Any, C::Result, D::IntOrBool},
    // Shifts by b outside [0, bits) give 0 (left) or the sign (right).
    {"bitwise_left_shift", 2, 0, R::Any, C::Result, D::IntOrBool},
    {"bitwise_right_shift", 2, 0, R::Any, C::Result, D::IntOrBool},
    // Comparisons and logical ops: compared in the promoted operand type.
    {"eq", 2, 0, R::Bool, C::Promoted, D::Any},
    {"ne", 2, 0, R::Bool, C::Promoted, D::Any},
    {"lt", 2, 0, R::Bool, C::Promoted, D::Any},
    {"le", 2, 0, R::Bool, C::Promoted, D::Any},
    {"gt", 2, 0, R::Bool, C::Promoted, D::Any},
    {"ge", 2, 0, R::Bool, C::Promoted, D::Any},
    {"logical_and", 2, 0, R::Bool, C::Bool, D::Any},
    {"logical_or", 2, 0, R::Bool, C::Bool, D::Any},
    {"logical_xor", 2, 0, R::Bool, C::Bool, D::Any},
    // where(condition, self, other); clamp_tensor(self, min, max).
    {"where", 3, 0, R::Any, C::Where, D::Any},
    {"clamp_tensor", 3, 0, R::Any, C::Result, D::NotBool},
    // batch_norm(x, mean, var, weight, bias) with scalars (eps).
    {"batch_norm", 5, 1, R::Float, C::Result, D::Float},
    // Random numbers (lib/Conversion/AtenToLinalg/RandomBodies.h):
    // (index, seed) with (stream, draw[, bits]).
    {"random_uniform", 2, 3, R::Float, C::Promoted, D::Int64},
    {"random_normal", 2, 3, R::Float, C::Promoted, D::Int64},
    {"random_bits", 2, 2, R::Any, C::Promoted, D::Int64},
    // (index, seed, the rate's f64 bits); scalars (stream).
    {"random_poisson", 3, 1, R::Float, C::Promoted, D::Int64},
};
} // namespace

llvm::ArrayRef<PointwiseFn> pointwiseFns() { return kFns; }

namespace {

int category(mlir::Type t) {
  if (t.isInteger(1))
    return 0;
  return llvm::isa<mlir::FloatType>(t) ? 2 : 1;
}

/// PyTorch's promote_types for the element types Kiln has.
mlir::Type promote(mlir::Type a, mlir::Type b) {
  if (!a)
    return b;
  if (a == b)
    return a;
  int ca = category(a), cb = category(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == 2 && a.getIntOrFloatBitWidth() == b.getIntOrFloatBitWidth())
    return mlir::Float32Type::get(a.getContext()); // f16 with bf16.
  return a.getIntOrFloatBitWidth() > b.getIntOrFloatBitWidth() ? a : b;
}

bool inDomain(Domain domain, mlir::Type t) {
  switch (domain) {
  case Domain::Any:
    return true;
  case Domain::Float:
    return llvm::isa<mlir::FloatType>(t);
  case Domain::NotBool:
    return !t.isInteger(1);
  case Domain::IntOrBool:
    return llvm::isa<mlir::IntegerType>(t);
  case Domain::Int:
    return llvm::isa<mlir::IntegerType>(t) && !t.isInteger(1);
  case Domain::Int64:
    return t.isInteger(64);
  }
  return false;
}

} // namespace

mlir::Type promotedElementType(mlir::TypeRange operandTypes) {
  mlir::Type dimensioned, zeroDim;
  for (mlir::Type t : operandTypes) {
    auto type = llvm::cast<mlir::RankedTensorType>(t);
    mlir::Type &slot = type.getRank() ? dimensioned : zeroDim;
    slot = promote(slot, type.getElementType());
  }
  if (!dimensioned)
    return zeroDim;
  if (zeroDim && category(zeroDim) > category(dimensioned))
    return zeroDim;
  return dimensioned;
}

mlir::Type pointwiseComputeType(const PointwiseFn &fn,
                                mlir::TypeRange operandTypes,
                                mlir::Type resultElement) {
  mlir::Type compute;
  switch (fn.computeIn) {
  case ComputeIn::Result:
  case ComputeIn::Where:
    compute = resultElement;
    break;
  case ComputeIn::Promoted:
    compute = promotedElementType(operandTypes);
    break;
  case ComputeIn::Bool:
    compute = mlir::IntegerType::get(resultElement.getContext(), 1);
    break;
  }
  return inDomain(fn.domain, compute) ? compute : mlir::Type();
}

const PointwiseFn *lookupPointwiseFn(llvm::StringRef name) {
  for (const PointwiseFn &fn : kFns)
    if (fn.name == name)
      return &fn;
  return nullptr;
}

} // namespace kiln::aten
