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

Value plusOne(OpBuilder &b, Location l, Value i) {
  return b.create<arith::AddIOp>(l, i, b.create<arith::ConstantIndexOp>(l, 1));
}

/// The partial sums sumOfProducts keeps.
constexpr int64_t kPartialSums = 4;

Value sumOfProducts(OpBuilder &b, Location l, Value from, Value to, Value first,
                    function_ref<std::pair<Value, Value>(OpBuilder &, Location, Value)> factors) {
  Scalars s(b, l);
  Type element = first.getType();
  auto addProduct = [&](OpBuilder &b, Location l, Value acc, Value k) -> Value {
    auto [x, y] = factors(b, l, k);
    return b.create<arith::AddFOp>(l, acc, b.create<arith::MulFOp>(l, x, y));
  };
  // [from, end) in whole groups of kPartialSums, then the rest.
  Value groups = b.create<arith::DivSIOp>(l, b.create<arith::SubIOp>(l, to, from),
                                          s.index(kPartialSums));
  Value end = b.create<arith::AddIOp>(l, from,
                                      b.create<arith::MulIOp>(l, groups, s.index(kPartialSums)));
  SmallVector<Value> zeros(kPartialSums, s.number(element, 0.0));
  auto grouped = b.create<scf::ForOp>(
      l, from, end, s.index(kPartialSums), zeros,
      [&](OpBuilder &b, Location l, Value k, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t r = 0; r < kPartialSums; ++r) {
          Value kr = r ? b.create<arith::AddIOp>(l, k, Scalars(b, l).index(r)).getResult() : k;
          next.push_back(addProduct(b, l, acc[r], kr));
        }
        b.create<scf::YieldOp>(l, next);
      });
  SmallVector<Value> partial(grouped.getResults());
  partial[0] = s.loop(end, to, {partial[0]},
                      [&](OpBuilder &b, Location l, Value k, ValueRange acc) -> Carried {
                        return {addProduct(b, l, acc[0], k)};
                      })[0];
  for (int64_t width = kPartialSums; width > 1; width /= 2)
    for (int64_t r = 0; r < width / 2; ++r)
      partial[r] = b.create<arith::AddFOp>(l, partial[2 * r], partial[2 * r + 1]);
  return b.create<arith::AddFOp>(l, first, partial[0]);
}

Value columnProduct(OpBuilder &b, Location l, Value v, Value t, Value m, Value from,
                    int64_t rows, Value c1, Value c2, Value first) {
  return sumOfProducts(b, l, from, Scalars(b, l).index(rows), first,
                       [&](OpBuilder &b, Location l, Value i) -> std::pair<Value, Value> {
                         return {Scalars::at(b, l, v, {m, i, c1}), Scalars::at(b, l, t, {m, i, c2})};
                       });
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
