//===- PointwiseTable.h - scalar bodies of aten.pointwise functions -------===//
//
// This file declares the lowering side of the pointwise table: for each
// function name, the element type its operands are converted to and the
// builder of its scalar body.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Builders.h"

namespace kiln::aten {

/// The element type the body computes in.
enum class ComputeIn {
  Result,   ///< The result element type (math in the promoted type).
  Promoted, ///< The promoted operand type (comparisons, predicates).
  Bool,     ///< i1 (logical ops).
  Where,    ///< Operand 0 as i1, the others in the result type.
};

/// Which compute element types the body supports.
enum class Domain { Any, Float, NotBool, IntOrBool };

/// Builds the scalar result from operands already in the compute type.
using PointwiseBody = mlir::Value (*)(mlir::OpBuilder &, mlir::Location,
                                      mlir::ValueRange, llvm::ArrayRef<double>);

struct PointwiseLowering {
  llvm::StringLiteral name;
  ComputeIn computeIn;
  Domain domain;
  PointwiseBody body;
};

/// The lowering row of `name`, or null.
const PointwiseLowering *lookupPointwiseLowering(llvm::StringRef name);

} // namespace kiln::aten
