//===- ScalarLoops.h - scalar loops over tensors for the factorisations ---===//
//
// This file declares the small builder the factorisation lowerings
// (Factorisations.cpp, SymmetricEigen.cpp, GeneralEigen.cpp, FrancisQr.cpp,
// BunchKaufman.cpp, Jacobi.cpp, MatrixLoops.cpp) write their LAPACK-style
// loops with (the special functions and gcd take their scf.while loops
// and Arithmetic from it too): scf.for and scf.while loops carrying
// tensors, element reads and writes, fresh buffers, scalar arithmetic
// (Arithmetic), vectorised dot products along a contiguous row, the best
// index of a range and swaps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
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

/// Scalar float, index and i1 arithmetic at one location, for the long
/// formulas of the iterative decompositions (GeneralEigen.cpp). Float
/// comparisons are ordered (false with a NaN), except `ne` (true with a
/// NaN, as C's !=).
class Arithmetic {
public:
  Arithmetic(mlir::OpBuilder &b, mlir::Location l) : b(b), l(l) {}

  mlir::Value add(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::AddFOp>(l, x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::SubFOp>(l, x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::MulFOp>(l, x, y); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::DivFOp>(l, x, y); }
  mlir::Value neg(mlir::Value x) { return b.create<mlir::arith::NegFOp>(l, x); }
  mlir::Value abs(mlir::Value x) { return b.create<mlir::math::AbsFOp>(l, x); }
  mlir::Value sqrt(mlir::Value x) { return b.create<mlir::math::SqrtOp>(l, x); }
  mlir::Value max(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::MaximumFOp>(l, x, y); }
  mlir::Value min(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::MinimumFOp>(l, x, y); }
  /// |x| with y's sign (Fortran's SIGN(x, y) for y != -0).
  mlir::Value copySign(mlir::Value x, mlir::Value y) { return b.create<mlir::math::CopySignOp>(l, x, y); }
  mlir::Value cmp(mlir::arith::CmpFPredicate p, mlir::Value x, mlir::Value y) {
    return b.create<mlir::arith::CmpFOp>(l, p, x, y);
  }
  mlir::Value lt(mlir::Value x, mlir::Value y) { return cmp(mlir::arith::CmpFPredicate::OLT, x, y); }
  mlir::Value le(mlir::Value x, mlir::Value y) { return cmp(mlir::arith::CmpFPredicate::OLE, x, y); }
  mlir::Value gt(mlir::Value x, mlir::Value y) { return cmp(mlir::arith::CmpFPredicate::OGT, x, y); }
  mlir::Value ge(mlir::Value x, mlir::Value y) { return cmp(mlir::arith::CmpFPredicate::OGE, x, y); }
  mlir::Value eq(mlir::Value x, mlir::Value y) { return cmp(mlir::arith::CmpFPredicate::OEQ, x, y); }
  mlir::Value ne(mlir::Value x, mlir::Value y) { return cmp(mlir::arith::CmpFPredicate::UNE, x, y); }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return b.create<mlir::arith::SelectOp>(l, c, x, y);
  }

  mlir::Value index(int64_t v) { return b.create<mlir::arith::ConstantIndexOp>(l, v); }
  mlir::Value plus(mlir::Value i, int64_t v) { return b.create<mlir::arith::AddIOp>(l, i, index(v)); }
  mlir::Value plus(mlir::Value i, mlir::Value j) { return b.create<mlir::arith::AddIOp>(l, i, j); }
  mlir::Value minus(mlir::Value i, mlir::Value j) { return b.create<mlir::arith::SubIOp>(l, i, j); }
  mlir::Value smallest(mlir::Value i, mlir::Value j) { return b.create<mlir::arith::MinSIOp>(l, i, j); }
  mlir::Value largest(mlir::Value i, mlir::Value j) { return b.create<mlir::arith::MaxSIOp>(l, i, j); }
  mlir::Value icmp(mlir::arith::CmpIPredicate p, mlir::Value i, mlir::Value j) {
    return b.create<mlir::arith::CmpIOp>(l, p, i, j);
  }
  mlir::Value remainder(mlir::Value i, int64_t v) { return b.create<mlir::arith::RemSIOp>(l, i, index(v)); }

  mlir::Value truth(bool v) { return b.create<mlir::arith::ConstantOp>(l, b.getBoolAttr(v)); }
  mlir::Value both(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::AndIOp>(l, x, y); }
  mlir::Value either(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::OrIOp>(l, x, y); }
  mlir::Value negate(mlir::Value x) { return b.create<mlir::arith::XOrIOp>(l, x, truth(true)); }

private:
  mlir::OpBuilder &b;
  mlir::Location l;
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

/// scf.while over `init`: `test` gives the condition and the values it
/// passes on (of `init`'s types) from the carried ones; `body` the next
/// carried values from those. Returns the values `test` passed on when the
/// condition failed.
Carried whileLoop(
    mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange init,
    llvm::function_ref<std::pair<mlir::Value, Carried>(mlir::OpBuilder &, mlir::Location,
                                                       mlir::ValueRange)>
        test,
    llvm::function_ref<Carried(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body);

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
