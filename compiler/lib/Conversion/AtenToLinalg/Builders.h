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
///
/// A dynamic (symbolic) result dimension takes its size from `sizes` when
/// given (one entry per result dimension), else from the first operand
/// whose right-aligned dimension there is dynamic too.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType,
                             mlir::ValueRange operands, ScalarBody body,
                             mlir::Type computeType = {},
                             llvm::ArrayRef<mlir::OpFoldResult> sizes = {});

/// The sizes of `type`'s dimensions: static ones as attributes, dynamic ones
/// read (tensor.dim) from the first of `sources` whose right-aligned
/// dimension there is dynamic. Null entries where no source has one.
llvm::SmallVector<mlir::OpFoldResult>
sizesFrom(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
          mlir::ValueRange sources);

/// tensor.empty of `type`, its dynamic sizes from `sizes` (every entry).
mlir::Value buildEmpty(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::RankedTensorType type,
                       llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// The sizes of the dims of `value`, static ones as attributes.
llvm::SmallVector<mlir::OpFoldResult> sizesOf(mlir::OpBuilder &b, mlir::Location loc,
                                              mlir::Value value);

/// A tensor of `type` filled with `value`.
mlir::Value buildFilled(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type, double value,
                        llvm::ArrayRef<mlir::OpFoldResult> sizes = {});

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

/// buildReductionFrom over `input` beside `kept`, a per-row value of the
/// input's rank whose reduced dims have extent 1 (a mean, as
/// native_layer_norm keeps it) and of `init`'s type: `combine(acc, x, k)`,
/// `x` converted to that type, `k` read as it is (null without `kept`;
/// buildReductionFrom is this without one). Reading the input and the row's value in the
/// reduction itself, nothing of the input's size is written for it (the
/// squared deviations from a mean, without a centred copy).
mlir::Value buildReductionWithKept(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value input, mlir::Value kept,
    const llvm::SmallBitVector &reduced, mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value, mlir::Value, mlir::Value)>
        combine);

/// The offsets of tile `flat` (a flat scf.forall's induction variable) in
/// a row-major grid of `extents` tiles: each coordinate times its dim's
/// `tileSizes` entry. The outermost coordinate is what the divisions leave
/// (the loop's count bounds it).
llvm::SmallVector<mlir::Value> tileOffsets(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value flat,
                                           llvm::ArrayRef<int64_t> extents,
                                           llvm::ArrayRef<int64_t> tileSizes);

/// `acc + x` as a sum reduction's step. Float adds reassociate, so the
/// vectorizer takes partial sums in vector lanes, as eager's CPU kernels
/// sum; in order, each reduced row was one chain of dependent scalar adds.
/// Integer adds are exact either way. Sum reductions use this;
/// combineElements(Combiner::Sum), which scatters and the generated
/// convolutions accumulate with, stays in order (not measured reassociated).
mlir::Value addToSum(mlir::OpBuilder &b, mlir::Location loc, mlir::Value acc,
                     mlir::Value x);

/// Reshapes a tensor to `resultType` (same element count) with
/// collapse_shape/expand_shape. A dynamic result dimension takes its size
/// from `sizes` (one entry per result dimension) when given; otherwise the
/// reshape may only add or drop unit dimensions, and each dynamic dimension
/// keeps the input's. Null when neither gives the sizes.
mlir::Value buildReshape(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value input, mlir::RankedTensorType resultType,
                         llvm::ArrayRef<mlir::OpFoldResult> sizes = {});

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

/// The number of elements `input`'s `reduced` dims hold, as a scalar of
/// floating-point type `type` (computed at run time when one is dynamic).
mlir::Value reducedCount(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                         const llvm::SmallBitVector &reduced, mlir::Type type);

/// Shape of `type` with the dims in `reduced` dropped.
llvm::SmallVector<int64_t> droppedShape(llvm::ArrayRef<int64_t> shape,
                                        const llvm::SmallBitVector &reduced);

/// One step of a linear scan: the slices' elements (one per scanned input)
/// and the carried values in, the next carried values out (`k`, the
/// position along the dim, as i64).
using ScanStep = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::Value k, mlir::ValueRange x,
    mlir::ValueRange carried)>;

/// A scan of the inputs `xs` (one shape) along `dim` as a loop over the dim:
/// carried slabs (that shape with the dim cut to 1), starting at the
/// scalars `initial`, are updated in place by `step` from each slice
/// x[.., k, ..] of every input and written at k into one result per slab
/// (the inputs' shape, the slab's element type). Static inputs of rank 2
/// or more are scanned a tile of lines at a time, the tiles one
/// scf.forall (LinearScan.cpp).
llvm::SmallVector<mlir::Value> buildLinearScan(mlir::OpBuilder &b,
                                               mlir::Location loc, mlir::ValueRange xs,
                                               int64_t dim,
                                               mlir::ValueRange initial,
                                               ScanStep step);

/// How a reduction or an accumulating write merges two elements.
enum class Combiner { Sum, Prod, Max, Min, Any, All };

/// `acc` merged with `x` (same type) by `kind`. Booleans merge as eager's do:
/// sum and max are or, prod and min are and. Float max and min propagate
/// NaN (maximumf/minimumf) and leave the sign of a zero extreme unordered
/// (nsz): eager's own is order-dependent (amax([-0., 0.]) is -0.), and
/// ordering it cost each vector step two more dependent instructions (a
/// sign test and a blend), which made amax(-1) 1.8x eager's time.
mlir::Value combineElements(Combiner kind, mlir::OpBuilder &b, mlir::Location l,
                            mlir::Value acc, mlir::Value x);

/// The identity of max (`lowest`: -inf, the least integer, false) or of min
/// (+inf, the greatest integer, true) for `type`.
mlir::Value extremeConstant(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Type type, bool lowest);

} // namespace kiln::aten
