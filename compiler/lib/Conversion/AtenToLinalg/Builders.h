//===- Builders.h - IR builders shared by the ATen lowering patterns ------===//
//
// This file declares helpers that build linalg.generic ops for broadcasting
// elementwise maps and reductions, and scalar conversions between element
// types following PyTorch's casting.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallBitVector.h"

namespace kiln::aten {

/// Converts a scalar to `to` (int/float/bool, PyTorch casting semantics).
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       mlir::Type to);

/// The type a product or sum of `element` values accumulates in: f32 for
/// f16/bf16 (rounded once at the end, as PyTorch's CPU kernels do), else
/// `element` itself.
mlir::Type accumulatorType(mlir::OpBuilder &b, mlir::Type element);

/// A scalar constant of element type `type` holding `value`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// The indexing map reading `operand` broadcast to a result of `resultRank`
/// dims with extents `resultShape` (PyTorch broadcasting, right-aligned).
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx,
                             llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> resultShape);

/// Body of an elementwise map: scalars already converted to the computation
/// element type in, one result scalar out.
using ScalarBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A parallel linalg.generic producing `resultType` from `operands`, each
/// broadcast to the result shape and converted to `computeType` (defaults to
/// the result element type) before `body` runs; the body's value is converted
/// to the result element type.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType,
                             mlir::ValueRange operands, ScalarBody body,
                             mlir::Type computeType = {});

/// A tensor of `type` filled with `value`.
mlir::Value buildFilled(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type, double value);

/// Reduces `input` over the dims set in `reduced` into a keepdim-free tensor
/// of element type `accType`, starting from `init`; `combine(acc, x)`.
/// Values are converted to `accType` first.
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value input, const llvm::SmallBitVector &reduced,
                           mlir::Type accType, double init,
                           llvm::function_ref<mlir::Value(mlir::OpBuilder &,
                                                          mlir::Location,
                                                          mlir::Value,
                                                          mlir::Value)>
                               combine);

/// buildReduction starting from the scalar `init` (of type `accType`).
mlir::Value buildReductionFrom(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
    const llvm::SmallBitVector &reduced, mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value, mlir::Value)>
        combine);

/// Reshapes a static tensor to `resultType` (same element count) with
/// collapse_shape/expand_shape.
mlir::Value buildReshape(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value input, mlir::RankedTensorType resultType);

/// `input` placed into a tensor filled with `padValue`: element i of dim d
/// lands at low[d] + i * strides[d] (strides > 1 dilate, as transposed
/// convolution needs), with high[d] more elements after the last.
mlir::Value buildPadded(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value input, llvm::ArrayRef<int64_t> low,
                        llvm::ArrayRef<int64_t> high,
                        llvm::ArrayRef<int64_t> strides, mlir::Value padValue);

/// Converts a tensor to element type `element` when it differs.
mlir::Value castTensor(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value value, mlir::Type element);

/// The dims an aten reduction's `dims` attribute names, of `rank`; all of
/// them when `dims` is empty (PyTorch's "reduce everything").
llvm::SmallBitVector reducedDims(int64_t rank, llvm::ArrayRef<int64_t> dims);

/// Shape of `type` with the dims in `reduced` dropped.
llvm::SmallVector<int64_t> droppedShape(llvm::ArrayRef<int64_t> shape,
                                        const llvm::SmallBitVector &reduced);

} // namespace kiln::aten
