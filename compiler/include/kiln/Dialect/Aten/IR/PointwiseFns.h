//===- PointwiseFns.h - the table behind aten.pointwise -------------------===//
//
// This file declares the signature table of `aten.pointwise` functions: how
// many tensor operands and number arguments each takes and what element kind
// its result has. The verifier checks ops against it; the lowering keeps its
// own name -> scalar-body table for the same names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::aten {

/// What the result element type of a pointwise function may be.
enum class PointwiseResult {
  Any,   ///< Any element type (the promoted type of the operands).
  Float, ///< A floating-point type.
  Bool,  ///< i1.
};

/// The element type the function computes in.
enum class ComputeIn {
  Result,   ///< The result element type (math in the promoted type).
  Promoted, ///< The promoted operand type (comparisons, predicates).
  Bool,     ///< i1 (logical ops).
  Where,    ///< Operand 0 as i1, the others in the result type.
};

/// Which compute element types the function is defined on.
enum class Domain {
  Any,
  Float,
  NotBool,
  IntOrBool,
  Int,   ///< Integers, not bool.
  Int64, ///< i64 only (the random functions' counters and seeds).
};

/// One row of the table.
struct PointwiseFn {
  llvm::StringLiteral name;
  unsigned arity;      ///< Tensor operands.
  unsigned numScalars; ///< Entries of the `scalars` attribute.
  PointwiseResult result;
  ComputeIn computeIn;
  Domain domain;
};

/// PyTorch's result_type over tensors of these types: 0-d operands only
/// count when they raise the category (bool < int < float).
mlir::Type promotedElementType(mlir::TypeRange operandTypes);

/// The element type `fn` computes in for these operands and result (before
/// f16/bf16 widen to f32), or null when outside the function's domain.
mlir::Type pointwiseComputeType(const PointwiseFn &fn,
                                mlir::TypeRange operandTypes,
                                mlir::Type resultElement);

/// Every pointwise function, in table order.
llvm::ArrayRef<PointwiseFn> pointwiseFns();

/// The row named `name`, or null.
const PointwiseFn *lookupPointwiseFn(llvm::StringRef name);

} // namespace kiln::aten
