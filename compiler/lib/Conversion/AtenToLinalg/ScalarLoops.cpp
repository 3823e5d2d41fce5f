//===- ScalarLoops.cpp - scalar loops over tensors for the factorisations -===//
//
// This file implements the builder declared in ScalarLoops.h.
//
//===----------------------------------------------------------------------===//
#include "ScalarLoops.h"

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::aten {

Value Scalars::index(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }

Value Scalars::number(Type element, double v) { return scalarConstant(b, loc, element, v); }

Carried Scalars::loop(Value lo, Value hi, ValueRange carried, LoopBody body) {
  auto op = b.create<scf::ForOp>(loc, lo, hi, index(1), carried,
                                 [&](OpBuilder &nb, Location l, Value iv, ValueRange values) {
                                   nb.create<scf::YieldOp>(l, body(nb, l, iv, values));
                                 });
  return Carried(op.getResults());
}

Value Scalars::at(OpBuilder &b, Location l, Value t, ValueRange at) {
  return b.create<tensor::ExtractOp>(l, t, at);
}

Value Scalars::put(OpBuilder &b, Location l, Value v, Value t, ValueRange at) {
  return b.create<tensor::InsertOp>(l, v, t, at);
}

Value Scalars::fresh(RankedTensorType type, Value copy) {
  return b.create<bufferization::AllocTensorOp>(loc, type, ValueRange{}, copy);
}

Value Scalars::zeros(RankedTensorType type) {
  return b.create<linalg::FillOp>(loc, number(type.getElementType(), 0.0), fresh(type))
      .getResult(0);
}

Carried whileLoop(
    OpBuilder &b, Location l, ValueRange init,
    function_ref<std::pair<Value, Carried>(OpBuilder &, Location, ValueRange)> test,
    function_ref<Carried(OpBuilder &, Location, ValueRange)> body) {
  auto op = b.create<scf::WhileOp>(
      l, init.getTypes(), init,
      [&](OpBuilder &nb, Location nl, ValueRange values) {
        auto [condition, passed] = test(nb, nl, values);
        nb.create<scf::ConditionOp>(nl, condition, passed);
      },
      [&](OpBuilder &nb, Location nl, ValueRange values) {
        nb.create<scf::YieldOp>(nl, body(nb, nl, values));
      });
  return Carried(op.getResults());
}

Value plusOne(OpBuilder &b, Location l, Value i) {
  return b.create<arith::AddIOp>(l, i, b.create<arith::ConstantIndexOp>(l, 1));
}

/// The vector width contiguousDot reads in, in bits (an AVX-512 register;
/// LLVM splits it on narrower targets, which keeps independent sums).
constexpr int64_t kDotBits = 512;

Value contiguousDot(OpBuilder &b, Location l, Value x, ValueRange xAt, Value y, ValueRange yAt,
                    Value from, Value to, Value first) {
  Scalars s(b, l);
  Type element = first.getType();
  const int64_t lanes = kDotBits / element.getIntOrFloatBitWidth();
  auto vectorType = VectorType::get({lanes}, element);
  auto indices = [](ValueRange prefix, Value k) {
    SmallVector<Value> at(prefix);
    at.push_back(k);
    return at;
  };
  // [from, end) in whole vectors, then the rest.
  Value chunks = b.create<arith::DivSIOp>(l, b.create<arith::SubIOp>(l, to, from), s.index(lanes));
  Value end = b.create<arith::AddIOp>(l, from, b.create<arith::MulIOp>(l, chunks, s.index(lanes)));
  Value zeros = b.create<arith::ConstantOp>(l, vectorType, b.getZeroAttr(vectorType));
  SmallVector<bool> inBounds{true};
  auto vectors = b.create<scf::ForOp>(
      l, from, end, s.index(lanes), ValueRange{zeros},
      [&](OpBuilder &b, Location l, Value k, ValueRange acc) {
        Value vx = b.create<vector::TransferReadOp>(l, vectorType, x, indices(xAt, k), inBounds);
        Value vy = b.create<vector::TransferReadOp>(l, vectorType, y, indices(yAt, k), inBounds);
        // Contractible: one fused multiply-add where the CPU has it, a
        // product and a sum where it does not (vector.fma would become
        // libm calls there).
        auto contract = arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::contract);
        Value product = b.create<arith::MulFOp>(l, vx, vy, contract);
        b.create<scf::YieldOp>(l, ValueRange{b.create<arith::AddFOp>(l, acc[0], product, contract)});
      });
  Value sum = b.create<vector::ReductionOp>(l, vector::CombiningKind::ADD, vectors.getResult(0));
  sum = s.loop(end, to, {sum}, [&](OpBuilder &b, Location l, Value k, ValueRange acc) -> Carried {
    Value product = b.create<arith::MulFOp>(l, Scalars::at(b, l, x, indices(xAt, k)),
                                            Scalars::at(b, l, y, indices(yAt, k)));
    return {b.create<arith::AddFOp>(l, acc[0], product)};
  })[0];
  return b.create<arith::AddFOp>(l, first, sum);
}

std::pair<Value, Value> bestIndex(OpBuilder &b, Location l, Value lo, Value hi, Value start,
                                  Value startValue, arith::CmpFPredicate better,
                                  function_ref<Value(OpBuilder &, Location, Value)> valueAt) {
  Carried best = Scalars(b, l).loop(
      lo, hi, {start, startValue}, [&](OpBuilder &b, Location l, Value i, ValueRange c) -> Carried {
        Value v = valueAt(b, l, i);
        Value wins = b.create<arith::CmpFOp>(l, better, v, c[1]);
        return {b.create<arith::SelectOp>(l, wins, i, c[0]),
                b.create<arith::SelectOp>(l, wins, v, c[1])};
      });
  return {best[0], best[1]};
}

Value swapEntries(OpBuilder &b, Location l, Value t, int64_t count,
                  function_ref<SmallVector<Value>(Value, int)> at) {
  Scalars s(b, l);
  return s.loop(s.index(0), s.index(count), {t},
                [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
                  SmallVector<Value> xi = at(k, 0), yi = at(k, 1);
                  Value x = Scalars::at(b, l, u[0], xi), y = Scalars::at(b, l, u[0], yi);
                  return {Scalars::put(b, l, x, Scalars::put(b, l, y, u[0], xi), yi)};
                })[0];
}

Value epsilonOf(OpBuilder &b, Location l, Type element) {
  double eps = element.isF32() ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  return b.create<arith::ConstantOp>(l, element, b.getFloatAttr(element, eps));
}

} // namespace kiln::aten
