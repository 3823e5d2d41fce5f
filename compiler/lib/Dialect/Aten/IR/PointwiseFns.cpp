//===- PointwiseFns.cpp - the table behind aten.pointwise -----------------===//
//
// This file implements the signature table of `aten.pointwise` functions.
// Adding a function: one row here, one in the lowering's body table
// (lib/Conversion/AtenToLinalg/PointwiseBodies.cpp), one importer row.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/PointwiseFns.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln::aten {

namespace {
using R = PointwiseResult;
constexpr PointwiseFn kFns[] = {
    // Unary math on floating-point results.
    {"sqrt", 1, 0, R::Float},        {"rsqrt", 1, 0, R::Float},
    {"log", 1, 0, R::Float},         {"log2", 1, 0, R::Float},
    {"log10", 1, 0, R::Float},       {"log1p", 1, 0, R::Float},
    {"exp2", 1, 0, R::Float},        {"expm1", 1, 0, R::Float},
    {"sin", 1, 0, R::Float},         {"cos", 1, 0, R::Float},
    {"tan", 1, 0, R::Float},         {"asin", 1, 0, R::Float},
    {"acos", 1, 0, R::Float},        {"atan", 1, 0, R::Float},
    {"sinh", 1, 0, R::Float},        {"cosh", 1, 0, R::Float},
    {"asinh", 1, 0, R::Float},       {"acosh", 1, 0, R::Float},
    {"atanh", 1, 0, R::Float},       {"erf", 1, 0, R::Float},
    {"reciprocal", 1, 0, R::Float},  {"silu", 1, 0, R::Float},
    {"hardsigmoid", 1, 0, R::Float}, {"hardswish", 1, 0, R::Float},
    {"mish", 1, 0, R::Float},
    // softplus(beta, threshold), elu(alpha, scale, input_scale).
    {"softplus", 1, 2, R::Float},    {"elu", 1, 3, R::Float},
    // Unary, any element type.
    {"abs", 1, 0, R::Any},           {"floor", 1, 0, R::Any},
    {"ceil", 1, 0, R::Any},          {"round", 1, 0, R::Any},
    {"trunc", 1, 0, R::Any},         {"sign", 1, 0, R::Any},
    {"bitwise_not", 1, 0, R::Any},   {"copy", 1, 0, R::Any},
    // clamp/hardtanh(min, max): NaN bounds mean "none".
    {"clamp", 1, 2, R::Any},         {"leaky_relu", 1, 1, R::Any},
    // Unary predicates.
    {"logical_not", 1, 0, R::Bool},  {"isnan", 1, 0, R::Bool},
    {"isinf", 1, 0, R::Bool},
    // u8 carried as i16 inside graphs: zero-extend at inputs, truncate at
    // outputs.
    {"widen_u8", 1, 0, R::Any},      {"narrow_u8", 1, 0, R::Any},
    // Binary math in the result type.
    {"maximum", 2, 0, R::Any},       {"minimum", 2, 0, R::Any},
    {"pow", 2, 0, R::Any},           {"remainder", 2, 0, R::Any},
    {"fmod", 2, 0, R::Any},          {"atan2", 2, 0, R::Float},
    {"div_trunc", 2, 0, R::Any},     {"div_floor", 2, 0, R::Any},
    {"bitwise_and", 2, 0, R::Any},   {"bitwise_or", 2, 0, R::Any},
    {"bitwise_xor", 2, 0, R::Any},
    // Comparisons and logical ops: compared in the promoted operand type.
    {"eq", 2, 0, R::Bool},           {"ne", 2, 0, R::Bool},
    {"lt", 2, 0, R::Bool},           {"le", 2, 0, R::Bool},
    {"gt", 2, 0, R::Bool},           {"ge", 2, 0, R::Bool},
    {"logical_and", 2, 0, R::Bool},  {"logical_or", 2, 0, R::Bool},
    {"logical_xor", 2, 0, R::Bool},
    // where(condition, self, other); clamp_tensor(self, min, max).
    {"where", 3, 0, R::Any},         {"clamp_tensor", 3, 0, R::Any},
    // batch_norm(x, mean, var, weight, bias) with scalars (eps).
    {"batch_norm", 5, 1, R::Float},
};
} // namespace

llvm::ArrayRef<PointwiseFn> pointwiseFns() { return kFns; }

const PointwiseFn *lookupPointwiseFn(llvm::StringRef name) {
  for (const PointwiseFn &fn : kFns)
    if (fn.name == name)
      return &fn;
  return nullptr;
}

} // namespace kiln::aten
