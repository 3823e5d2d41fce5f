//===- SoftmaxRows.h - softmax over the last dim, a tile of rows at once --===//
//
// This file declares buildRowTiledSoftmax and the masked-row rule both
// softmax lowerings share (SoftmaxRows.cpp).
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

/// _safe_softmax's rule for one element: zero where its row's maximum
/// `rowMax` is -inf (a row of -inf only; a NaN anywhere makes the maximum
/// NaN), `quotient` elsewhere.
mlir::Value zeroWhereRowMasked(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value rowMax, mlir::Value quotient);

} // namespace kiln::aten
