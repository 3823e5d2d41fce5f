//===- AtenBuilder.h - building aten ops in a rewrite ---------------------===//
//
// This file declares the helper the decompositions of kiln-decompose-aten
// build their aten ops with: constants, pointwise functions, conversions,
// views and broadcasting arithmetic at one location.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::decompose {

inline mlir::RankedTensorType typeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType());
}

/// Builds the aten ops of one decomposition at one location.
class AtenBuilder {
public:
  AtenBuilder(mlir::PatternRewriter &rewriter, mlir::Location loc)
      : r(rewriter), loc(loc) {}

  /// A 0-d constant of `element` (an integer one truncated and clamped).
  mlir::Value constant(mlir::Type element, double value);
  /// A constant tensor of `values` (its type).
  mlir::Value constant(mlir::DenseElementsAttr values);
  /// An i64 constant of `shape` holding 0, 1, ... in row-major order.
  mlir::Value positions(llvm::ArrayRef<int64_t> shape);

  /// An aten.pointwise computing `fn` over `inputs` with `scalars`.
  mlir::Value pointwise(mlir::RankedTensorType type, llvm::StringRef fn,
                        mlir::ValueRange inputs,
                        llvm::ArrayRef<double> scalars = {});

  /// `v` with element type `element` (itself when it has it; a new
  /// constant for a 0-d float constant converted to a float type).
  mlir::Value convert(mlir::Value v, mlir::Type element);

  /// `v` reshaped to `shape` (itself when it has it).
  mlir::Value view(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// `v` with its dims in the order `perm` (itself for the identity).
  mlir::Value permute(mlir::Value v, llvm::ArrayRef<int64_t> perm);

  /// a * b, a + b, a - b and a / b, broadcast, in `element`.
  mlir::Value mul(mlir::Type element, mlir::Value a, mlir::Value b);
  mlir::Value add(mlir::Type element, mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Type element, mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Type element, mlir::Value a, mlir::Value b);

  /// A sum over `dims` (not kept), in `type`.
  mlir::Value sum(mlir::RankedTensorType type, mlir::Value v,
                  llvm::ArrayRef<int64_t> dims);

private:
  mlir::PatternRewriter &r;
  mlir::Location loc;
};

} // namespace kiln::decompose
