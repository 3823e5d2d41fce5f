//===- SpecialFunctionHandlers.cpp - the special functions ----------------===//
//
// This file implements the import of torch.special's functions that
// torch.export keeps whole (lgamma, digamma, polygamma, zeta, erfc, erfcx,
// erfinv, ndtri, igamma and igammac, the Bessel functions I, K, J, Y and
// spherical j0, Airy's Ai, and the orthogonal polynomials of Chebyshev, Hermite, Laguerre and
// Legendre), and
// gcd, lcm and frexp: one aten.pointwise each (frexp's exponent a second;
// lib/Conversion/AtenToLinalg/SpecialFunctions.h, PointwiseBodies.cpp).
// torch decomposes the rest of torch.special (log_ndtr, ndtr, xlog1py,
// entr, multigammaln, ...) into these and core ops.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// polygamma(n, self): the n-th derivative of digamma, n >= 0 as eager
/// requires.
absl::StatusOr<Values> polygamma(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(int64_t order, n.intAttr("n"));
  if (order < 0)
    return n.error(absl::StrCat("polygamma's n must be non-negative, got ", order));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  return Values{pointwise(n, type, "polygamma", self, {static_cast<double>(order)})};
}

/// frexp(self): (mantissa, exponent), the exponent computed as a float of
/// self's type (exact) and converted to int32.
absl::StatusOr<Values> frexp(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType mantissaType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType exponentType, n.resultType(1));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (!isa<FloatType>(mantissaType.getElementType()))
    return n.error("frexp takes a floating-point tensor");
  Value exponent = pointwise(n, mantissaType, "frexp_exponent", self);
  return Values{pointwise(n, mantissaType, "frexp_mantissa", self),
                convertElements(n, exponent, exponentType.getElementType())};
}

} // namespace

void addSpecialFunctionHandlers(OpHandlerTable &t) {
  for (const char *fn : {"lgamma", "digamma", "erfinv", "erfc", "i0"})
    t[absl::StrCat("aten.", fn, ".default")] = pointwiseHandler(fn);
  for (const char *fn : {"i0e", "i1", "i1e", "erfcx", "ndtri"})
    t[absl::StrCat("aten.special_", fn, ".default")] = pointwiseHandler(fn);
  // torch.special's modified_bessel_i0/i1: the same functions as i0/i1.
  t["aten.special_modified_bessel_i0.default"] = pointwiseHandler("i0");
  t["aten.special_modified_bessel_i1.default"] = pointwiseHandler("i1");
  t["aten.polygamma.default"] = polygamma;
  t["aten.frexp.Tensor"] = frexp;
  for (const char *fn : {"gcd", "lcm"})
    t[absl::StrCat("aten.", fn, ".default")] = pointwiseHandler(fn, {"self", "other"});
  // igamma(self, other) = P(a = self, x = other); torch.special.gammainc
  // and gammaincc are these.
  for (const char *fn : {"igamma", "igammac"})
    t[absl::StrCat("aten.", fn, ".default")] = pointwiseHandler(fn, {"self", "other"});
  for (const char *overload : {"default", "self_scalar", "other_scalar"})
    t[absl::StrCat("aten.special_zeta.", overload)] = pointwiseHandler("zeta", {"self", "other"});
  for (const char *fn : {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"})
    t[absl::StrCat("aten.special_", fn, ".default")] = pointwiseHandler(fn);
  t["aten.special_modified_bessel_k0.default"] = pointwiseHandler("k0");
  t["aten.special_modified_bessel_k1.default"] = pointwiseHandler("k1");
  // These four name their operand x.
  t["aten.special_scaled_modified_bessel_k0.default"] = pointwiseHandler("k0e", {"x"});
  t["aten.special_scaled_modified_bessel_k1.default"] = pointwiseHandler("k1e", {"x"});
  t["aten.special_spherical_bessel_j0.default"] = pointwiseHandler("spherical_bessel_j0", {"x"});
  t["aten.special_airy_ai.default"] = pointwiseHandler("airy_ai", {"x"});
  for (const char *family : {"chebyshev_polynomial_t", "chebyshev_polynomial_u",
                             "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                             "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                             "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
                             "hermite_polynomial_h", "hermite_polynomial_he",
                             "laguerre_polynomial_l", "legendre_polynomial_p"})
    for (const char *overload : {"default", "x_scalar", "n_scalar"})
      t[absl::StrCat("aten.special_", family, ".", overload)] = pointwiseHandler(family, {"x", "n"});
}

} // namespace kiln
