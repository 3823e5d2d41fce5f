//===- PointwiseTable.h - scalar bodies of aten.pointwise functions -------===//
//
// This file declares the lowering side of the pointwise table: for each
// function name, the builder of its scalar body (the dialect's PointwiseFns
// table says which element type it computes in).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Builders.h"

namespace kiln::aten {

/// Builds the scalar result from operands already in the compute type.
using PointwiseBody = mlir::Value (*)(mlir::OpBuilder &, mlir::Location,
                                      mlir::ValueRange, llvm::ArrayRef<double>);

struct PointwiseLowering {
  llvm::StringLiteral name;
  PointwiseBody body;
  /// The libm functions (double -> double) the body calls by name, which
  /// kiln-declare-libm-calls declares in the module first.
  llvm::ArrayRef<llvm::StringLiteral> libmCalls = {};
  /// The body computes f16/bf16 in their own type (it reads their bits),
  /// where other bodies get them widened to f32.
  bool halfInOwnType = false;
};

/// The lowering row of `name`, or null.
const PointwiseLowering *lookupPointwiseLowering(llvm::StringRef name);

} // namespace kiln::aten
