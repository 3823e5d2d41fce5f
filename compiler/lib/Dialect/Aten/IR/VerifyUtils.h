//===- VerifyUtils.h - checks shared by the aten op verifiers -------------===//
//
// This file declares the shape checks every aten verifier file uses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace kiln::aten {

/// Shape arithmetic on attributes and extents a client declared: 128 bits,
/// so that no product or sum of two int64 values overflows (a wrapped value
/// could otherwise pass a bounds check).
using WideInt = __int128;

/// `value` for a diagnostic: the number, or "out of range" past int64.
std::string formatWide(WideInt value);

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
}

/// Checks that `operand` broadcasts to `result` by PyTorch's rules: aligned
/// from the right, each operand extent equals the result's or is 1.
mlir::LogicalResult verifyBroadcastsTo(mlir::Operation *op, mlir::Value operand,
                                       llvm::ArrayRef<int64_t> result,
                                       llvm::StringRef what);

/// softmax and log_softmax: `dim` is in range for `type` (a 0-d tensor has
/// dim 0) and the elements are floating point.
mlir::LogicalResult verifySoftmaxLike(mlir::Operation *op, int64_t dim,
                                      mlir::RankedTensorType type);

/// Checks that every dim is in [0, rank) and appears once.
mlir::LogicalResult verifyDimList(mlir::Operation *op,
                                  llvm::ArrayRef<int64_t> dims, int64_t rank);

} // namespace kiln::aten
