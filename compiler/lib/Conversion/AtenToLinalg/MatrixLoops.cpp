//===- MatrixLoops.cpp - building blocks of the decompositions ------------===//
//
// This file implements the helpers declared in MatrixLoops.h.
//
//===----------------------------------------------------------------------===//
#include "MatrixLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;

namespace kiln::aten {

Value largestMagnitude(OpBuilder &b, Location loc, Value lo, Value hi, const Limits &c,
                       EntryAt entry) {
  return Scalars(b, loc).loop(lo, hi, {c.zero}, [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
    return {Arithmetic(b, l).max(u[0], Arithmetic(b, l).abs(entry(b, l, x)))};
  })[0];
}

Value scaledNorm(OpBuilder &b, Location loc, Value lo, Value hi, const Limits &c, EntryAt entry) {
  Scalars s(b, loc);
  Arithmetic a(b, loc);
  Value largest = largestMagnitude(b, loc, lo, hi, c, entry);
  Value unit = a.select(a.eq(largest, c.zero), c.one, largest);
  Value squares = s.loop(lo, hi, {c.zero}, [&](OpBuilder &b, Location l, Value x, ValueRange u) -> Carried {
    Arithmetic a(b, l);
    Value y = a.div(entry(b, l, x), unit);
    return {a.add(u[0], a.mul(y, y))};
  })[0];
  return a.mul(unit, a.sqrt(squares));
}

Value hypotenuse(OpBuilder &b, Location l, Value x, Value y, const Limits &c) {
  Arithmetic a(b, l);
  Value ax = a.abs(x), ay = a.abs(y);
  Value big = a.max(ax, ay), small = a.min(ax, ay);
  Value none = a.eq(big, c.zero);
  Value ratio = a.div(small, big);
  return a.select(none, c.zero, a.mul(big, a.sqrt(a.add(c.one, a.mul(ratio, ratio)))));
}

Householder householder(OpBuilder &b, Location l, Value alpha, Value tailNorm, const Limits &c) {
  Arithmetic a(b, l);
  Value nothing = a.eq(tailNorm, c.zero);
  Value beta = a.neg(a.copySign(hypotenuse(b, l, alpha, tailNorm, c), alpha));
  return {a.select(nothing, c.zero, a.div(a.sub(beta, alpha), beta)),
          a.select(nothing, alpha, beta),
          a.select(nothing, c.one, a.div(c.one, a.sub(alpha, beta)))};
}

/// Swaps rows i and k of matrix m of the (N, rows, cols) tensor `t`.
Value swapRows(OpBuilder &b, Location loc, Value t, Value m, Value i, Value k) {
  int64_t cols = cast<RankedTensorType>(t.getType()).getDimSize(2);
  return swapEntries(b, loc, t, cols, [&](Value c, int which) {
    return SmallVector<Value>{m, which ? k : i, c};
  });
}

/// Selection sort of row m of the (N, n) tensor `values`, ascending (or
/// descending); the rows of matrix m of each tensor in `vectors` (the
/// vectors, transposed) move with their values. The sorted values, then
/// the vectors.
Carried sortWithVectors(OpBuilder &b, Location loc, Value values, ValueRange vectors, Value m,
                        int64_t n, bool ascending) {
  Scalars s(b, loc);
  Carried init{values};
  init.append(vectors.begin(), vectors.end());
  return s.loop(s.index(0), s.index(n), init,
                [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  Value first = Scalars::at(b, l, u[0], {m, i});
                  auto [index, value] = bestIndex(
                      b, l, plusOne(b, l, i), s.index(n), i, first,
                      ascending ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT,
                      [&](OpBuilder &b, Location l, Value k) -> Value {
                        return Scalars::at(b, l, u[0], {m, k});
                      });
                  Value t = Scalars::put(b, l, first, u[0], {m, index});
                  Carried out{Scalars::put(b, l, value, t, {m, i})};
                  for (Value v : u.drop_front())
                    out.push_back(swapRows(b, l, v, m, i, index));
                  return out;
                });
}

/// (x, y) <- (c x - s y, s x + c y) for x = t[m, p(k)], y = t[m, q(k)] over
/// k in [0, count), where `at(k, which)` gives the index of x (which = 0)
/// or y (which = 1).
Value rotatePairs(OpBuilder &b, Location loc, Value t, int64_t count, Value c, Value s,
                  function_ref<SmallVector<Value>(Value, int)> at) {
  Scalars sc(b, loc);
  return sc.loop(sc.index(0), sc.index(count), {t},
                 [&](OpBuilder &b, Location l, Value k, ValueRange u) -> Carried {
                   SmallVector<Value> xi = at(k, 0), yi = at(k, 1);
                   Value x = Scalars::at(b, l, u[0], xi), y = Scalars::at(b, l, u[0], yi);
                   Value nx = b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, c, x),
                                                     b.create<arith::MulFOp>(l, s, y));
                   Value ny = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, s, x),
                                                     b.create<arith::MulFOp>(l, c, y));
                   Value v = Scalars::put(b, l, nx, u[0], xi);
                   return {Scalars::put(b, l, ny, v, yi)};
                 })[0];
}

/// Rows p and q of matrix m of `t` (N, >= n, cols) rotated by (c, s).
Value rotateRows(OpBuilder &b, Location l, Value t, Value m, Value p, Value q, Value c, Value s) {
  int64_t cols = cast<RankedTensorType>(t.getType()).getDimSize(2);
  return rotatePairs(b, l, t, cols, c, s, [&](Value k, int which) {
    return SmallVector<Value>{m, which ? q : p, k};
  });
}

/// The dot product of rows p and q of matrix m of `t` (N, >= n, cols).
Value rowDot(OpBuilder &b, Location l, Value t, Value m, Value p, Value q) {
  Scalars s(b, l);
  auto type = cast<RankedTensorType>(t.getType());
  return contiguousDot(b, l, t, {m, p}, t, {m, q}, s.index(0), s.index(type.getDimSize(2)),
                       s.number(type.getElementType(), 0.0));
}

/// Loops over the pairs p < q of [0, n) carrying `state`.
Carried forEachPair(OpBuilder &b, Location loc, int64_t n, ValueRange state,
                    function_ref<Carried(OpBuilder &, Location, Value, Value, ValueRange)> body) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(n), state,
                [&](OpBuilder &b, Location l, Value p, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  return s.loop(plusOne(b, l, p), s.index(n), u,
                                [&](OpBuilder &b, Location l, Value q, ValueRange w) -> Carried {
                                  return body(b, l, p, q, w);
                                });
                });
}

/// Matrix m of `t` (rows x cols) divided by its largest |entry| (left as
/// it is when that is 0, NaN or infinite), and that divisor: the
/// decompositions then work on entries of at most 1, whose squares and products cannot
/// overflow, and scale their values back by the divisor.
std::pair<Value, Value> scaledToUnitMax(OpBuilder &b, Location loc, Value t, Value m,
                                        int64_t rows, int64_t cols) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(t.getType()).getElementType();
  auto overEntries = [&](ValueRange init,
                         function_ref<Carried(OpBuilder &, Location, Value, Value, ValueRange)> body) {
    return s.loop(s.index(0), s.index(rows), init,
                  [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                    Scalars s(b, l);
                    return s.loop(s.index(0), s.index(cols), u,
                                  [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
                                    return body(b, l, i, j, w);
                                  });
                  });
  };
  Value largest = overEntries({s.number(element, 0.0)},
                              [&](OpBuilder &b, Location l, Value i, Value j, ValueRange w) -> Carried {
                                Value x = b.create<math::AbsFOp>(l, Scalars::at(b, l, t, {m, i, j}));
                                return {b.create<arith::MaximumFOp>(l, w[0], x)};
                              })[0];
  Value usable = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, largest, s.number(element, 0.0)),
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, largest,
                              s.number(element, std::numeric_limits<double>::infinity())));
  Value divisor = b.create<arith::SelectOp>(loc, usable, largest, s.number(element, 1.0));
  Value scaled = overEntries({t}, [&](OpBuilder &b, Location l, Value i, Value j,
                                      ValueRange w) -> Carried {
    Value x = b.create<arith::DivFOp>(l, Scalars::at(b, l, w[0], {m, i, j}), divisor);
    return {Scalars::put(b, l, x, w[0], {m, i, j})};
  })[0];
  return {scaled, divisor};
}

/// Matrix m of `t` (N, rows, cols) set to the identity's first columns.
Value identityColumns(OpBuilder &b, Location loc, Value t, Value m) {
  Scalars s(b, loc);
  auto type = cast<RankedTensorType>(t.getType());
  Type element = type.getElementType();
  return s.loop(s.index(0), s.index(type.getDimSize(1)), {t},
                [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                  Scalars s(b, l);
                  return s.loop(s.index(0), s.index(type.getDimSize(2)), u,
                                [&](OpBuilder &b, Location l, Value col, ValueRange w) -> Carried {
                                  Scalars s(b, l);
                                  Value diagonal =
                                      b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, i, col);
                                  Value x = b.create<arith::SelectOp>(
                                      l, diagonal, s.number(element, 1.0), s.number(element, 0.0));
                                  return {Scalars::put(b, l, x, w[0], {m, i, col})};
                                });
                })[0];
}


/// `t` (N, r, c) transposed into a fresh (N, c, r) tensor.
Value transposedBatch(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  auto to = RankedTensorType::get({type.getDimSize(0), type.getDimSize(2), type.getDimSize(1)},
                                  type.getElementType());
  return b.create<linalg::TransposeOp>(loc, t, Scalars(b, loc).fresh(to),
                                       ArrayRef<int64_t>{0, 2, 1})
      .getResult()[0];
}

Carried applyReflector(OpBuilder &b, Location l, Value t, Value w, Value m, Value head,
                       int64_t rows, Value from, int64_t width, Value tau,
                       function_ref<Value(OpBuilder &, Location, Value, Value)> vAt) {
  Scalars s(b, l);
  Value below = plusOne(b, l, head), end = s.index(width);
  auto overRow = [&](Value target, function_ref<Value(OpBuilder &, Location, Value, Value)> entry) {
    return s.loop(from, end, {target}, [&](OpBuilder &b, Location l, Value c, ValueRange u) -> Carried {
      return {entry(b, l, u[0], c)};
    })[0];
  };
  w = overRow(w, [&](OpBuilder &b, Location l, Value x, Value c) {
    return Scalars::put(b, l, Scalars::at(b, l, t, {m, head, c}), x, {c});
  });
  w = s.loop(below, s.index(rows), {w},
             [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
               Value vi = vAt(b, l, i, t);
               return {Scalars(b, l).loop(
                   from, end, u, [&](OpBuilder &b, Location l, Value c, ValueRange x) -> Carried {
                     Value sum = b.create<arith::AddFOp>(
                         l, Scalars::at(b, l, x[0], {c}),
                         b.create<arith::MulFOp>(l, vi, Scalars::at(b, l, t, {m, i, c})));
                     return {Scalars::put(b, l, sum, x[0], {c})};
                   })[0]};
             })[0];
  // w <- tau w, then row head and the rows below.
  w = overRow(w, [&](OpBuilder &b, Location l, Value x, Value c) {
    return Scalars::put(b, l, b.create<arith::MulFOp>(l, tau, Scalars::at(b, l, x, {c})), x, {c});
  });
  t = overRow(t, [&](OpBuilder &b, Location l, Value x, Value c) {
    Value top = b.create<arith::SubFOp>(l, Scalars::at(b, l, x, {m, head, c}),
                                        Scalars::at(b, l, w, {c}));
    return Scalars::put(b, l, top, x, {m, head, c});
  });
  t = s.loop(below, s.index(rows), {t},
             [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
               Value vi = vAt(b, l, i, u[0]);
               return {Scalars(b, l).loop(
                   from, end, u, [&](OpBuilder &b, Location l, Value c, ValueRange x) -> Carried {
                     Value update = b.create<arith::MulFOp>(l, Scalars::at(b, l, w, {c}), vi);
                     Value v = b.create<arith::SubFOp>(l, Scalars::at(b, l, x[0], {m, i, c}), update);
                     return {Scalars::put(b, l, v, x[0], {m, i, c})};
                   })[0]};
             })[0];
  return {t, w};
}

} // namespace kiln::aten
