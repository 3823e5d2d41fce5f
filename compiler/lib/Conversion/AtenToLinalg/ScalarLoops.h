//===- ScalarLoops.h - scalar loops over tensors for the factorisations ---===//
//
// This file declares the small builder the factorisation lowerings
// (Factorisations.cpp, SymmetricEigen.cpp, Jacobi.cpp, MatrixLoops.cpp)
// write their LAPACK-style loops with: scf.for loops carrying tensors,
// element reads and writes, fresh buffers, vectorised dot products along a
// contiguous row, the best index of a range and swaps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace kiln::aten {

using Carried = llvm::SmallVector<mlir::Value>;
using LoopBody =
    llvm::function_ref<Carried(mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::ValueRange)>;

/// Scalar code on tensors at one location: loops carrying tensors, and
/// element reads and writes.
class Scalars {
public:
  Scalars(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::Value index(int64_t v);
  mlir::Value number(mlir::Type element, double v);

  /// scf.for over [lo, hi) carrying `carried`; the loop's results.
  Carried loop(mlir::Value lo, mlir::Value hi, mlir::ValueRange carried, LoopBody body);

  static mlir::Value at(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::ValueRange at);
  static mlir::Value put(mlir::OpBuilder &b, mlir::Location l, mlir::Value v, mlir::Value t,
                         mlir::ValueRange at);

  /// A fresh tensor of `type` (its own buffer: CSE never merges it with
  /// another), a copy of `copy` when given.
  mlir::Value fresh(mlir::RankedTensorType type, mlir::Value copy = {});
  mlir::Value zeros(mlir::RankedTensorType type);

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// i + 1 (index).
mlir::Value plusOne(mlir::OpBuilder &b, mlir::Location l, mlir::Value i);

/// first + the sum over k in [from, to) of x[xAt..., k] * y[yAt..., k]:
/// both tensors' last index runs along k, so the whole chunks of 512 bits
/// are read as vectors (vector.transfer_read) and multiplied into one
/// vector of partial sums (contractible products and sums: fused where the
/// CPU has FMA), whose lanes vector.reduction adds;
/// the rest one at a time. A running scalar sum would wait on each
/// addition's latency and use one lane. Rounding differs from the
/// sequential sum's in the last bits, as BLAS's dot products' does.
mlir::Value contiguousDot(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                          mlir::ValueRange xAt, mlir::Value y, mlir::ValueRange yAt,
                          mlir::Value from, mlir::Value to, mlir::Value first);

/// The index in [lo, hi) whose value (`valueAt`) compares `better` than
/// every one before it, starting from index `start` with `startValue`
/// (the first of equal values wins; a NaN never does for an ordered
/// predicate): an scf.for carrying (index, value).
std::pair<mlir::Value, mlir::Value>
bestIndex(mlir::OpBuilder &b, mlir::Location l, mlir::Value lo, mlir::Value hi, mlir::Value start,
          mlir::Value startValue, mlir::arith::CmpFPredicate better,
          llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)> valueAt);

/// t with t[at(k, 0)] and t[at(k, 1)] swapped for each k in [0, count).
mlir::Value swapEntries(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, int64_t count,
                        llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value, int)> at);

/// The machine epsilon of f32 or f64 as a constant of that type.
mlir::Value epsilonOf(mlir::OpBuilder &b, mlir::Location l, mlir::Type element);

} // namespace kiln::aten
