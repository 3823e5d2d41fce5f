//===- SoftmaxRows.h - softmax over the last dim, a tile of rows at once --===//
//
// This file declares buildRowTiledSoftmax (SoftmaxRows.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Builders.h"

namespace kiln::aten {

/// softmax (log_softmax with `isLog`) of `x` over its last dim, one
/// scf.forall over tiles of rows that each fit L1; `zeroMaskedRows` gives
/// zeros for a row of -inf only (_safe_softmax). Null when `x` is not a
/// static floating-point tensor of rank 2 or more with elements.
mlir::Value buildRowTiledSoftmax(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value x, bool isLog,
                                 bool zeroMaskedRows);

} // namespace kiln::aten
