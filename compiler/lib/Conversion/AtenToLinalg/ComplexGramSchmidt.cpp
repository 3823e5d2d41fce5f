//===- ComplexGramSchmidt.cpp - pivoted Gram-Schmidt on complex columns ---===//
//
// This file implements the complex column loops ComplexGramSchmidt.h
// declares.
//
//===----------------------------------------------------------------------===//
#include "ComplexGramSchmidt.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;

namespace kiln::aten {

Value ComplexColumns::part(OpBuilder &b, Location l, Value z, Value i, Value c,
                           int64_t which) const {
  return Scalars::at(b, l, z, {i, c, b.create<arith::ConstantIndexOp>(l, which)});
}

Value ComplexColumns::put(OpBuilder &b, Location l, Value v, Value z, Value i, Value c,
                          int64_t which) const {
  return Scalars::put(b, l, v, z, {i, c, b.create<arith::ConstantIndexOp>(l, which)});
}

Value ComplexColumns::norm2(OpBuilder &b, Location loc, Value z, Value c) const {
  Scalars s(b, loc);
  return s.loop(s.index(begin), s.index(end), {s.number(element, 0.0)},
                [&](OpBuilder &b, Location l, Value i, ValueRange acc) -> Carried {
                  Arithmetic a(b, l);
                  Value re = part(b, l, z, i, c, 0), im = part(b, l, z, i, c, 1);
                  return {a.add(acc[0], a.add(a.mul(re, re), a.mul(im, im)))};
                })[0];
}

Value ComplexColumns::project(OpBuilder &b, Location loc, Value z, Value q, Value c,
                              Value when) const {
  Scalars s(b, loc);
  Value zero = s.number(element, 0.0);
  Carried dot = s.loop(s.index(begin), s.index(end), {zero, zero},
                       [&](OpBuilder &b, Location l, Value i, ValueRange acc) -> Carried {
                         Arithmetic a(b, l);
                         Value qr = part(b, l, z, i, q, 0), qi = part(b, l, z, i, q, 1);
                         Value xr = part(b, l, z, i, c, 0), xi = part(b, l, z, i, c, 1);
                         return {a.add(acc[0], a.add(a.mul(qr, xr), a.mul(qi, xi))),
                                 a.add(acc[1], a.sub(a.mul(qr, xi), a.mul(qi, xr)))};
                       });
  if (when) {
    Arithmetic a(b, loc);
    dot = {a.select(when, dot[0], zero), a.select(when, dot[1], zero)};
  }
  return s.loop(s.index(begin), s.index(end), {z},
                [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                  Arithmetic a(b, l);
                  Value qr = part(b, l, w[0], i, q, 0), qi = part(b, l, w[0], i, q, 1);
                  Value cr = dot[0], ci = dot[1];
                  Value xr = a.sub(part(b, l, w[0], i, c, 0), a.sub(a.mul(cr, qr), a.mul(ci, qi)));
                  Value xi = a.sub(part(b, l, w[0], i, c, 1), a.add(a.mul(cr, qi), a.mul(ci, qr)));
                  return {put(b, l, xi, put(b, l, xr, w[0], i, c, 0), i, c, 1)};
                })[0];
}

Value ComplexColumns::scale(OpBuilder &b, Location loc, Value z, Value c, Value factor) const {
  Scalars s(b, loc);
  return s.loop(s.index(begin), s.index(end), {z},
                [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                  Arithmetic a(b, l);
                  Value re = a.mul(part(b, l, w[0], i, c, 0), factor);
                  Value im = a.mul(part(b, l, w[0], i, c, 1), factor);
                  return {put(b, l, im, put(b, l, re, w[0], i, c, 0), i, c, 1)};
                })[0];
}

Value ComplexColumns::normalise(OpBuilder &b, Location l, Value z, Value c, Value when) const {
  Arithmetic a(b, l);
  Scalars s(b, l);
  Value zero = s.number(element, 0.0), one = s.number(element, 1.0);
  Value norm2 = this->norm2(b, l, z, c);
  Value factor = a.select(a.gt(norm2, zero), a.div(one, a.sqrt(norm2)), zero);
  return scale(b, l, z, c, when ? a.select(when, factor, one) : factor);
}

Value loadEmbeddingColumns(OpBuilder &b, Location loc, Value work, Value real, Value m,
                           int64_t first, int64_t rows, int64_t count) {
  Scalars s(b, loc);
  return s.loop(
      s.index(0), s.index(rows), {work},
      [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
        Scalars s(b, l);
        Arithmetic a(b, l);
        Value row = a.plus(i, first), below = a.plus(i, rows);
        Value re0 = s.index(0), im1 = s.index(1);
        return {s.loop(s.index(0), s.index(count), {w[0]},
                       [&](OpBuilder &b, Location l, Value col, ValueRange v) -> Carried {
                         Value re = Scalars::at(b, l, real, {m, i, col});
                         Value im = Scalars::at(b, l, real, {m, below, col});
                         Value x = Scalars::put(b, l, re, v[0], {row, col, re0});
                         return {Scalars::put(b, l, im, x, {row, col, im1})};
                       })[0]};
      })[0];
}

Value isTaken(OpBuilder &b, Location l, Value state, Value c) {
  Type element = cast<RankedTensorType>(state.getType()).getElementType();
  return Arithmetic(b, l).gt(Scalars::at(b, l, state, {c}), Scalars(b, l).number(element, 0.0));
}

Value isCandidate(OpBuilder &b, Location l, Value state, Value c) {
  Type element = cast<RankedTensorType>(state.getType()).getElementType();
  return Arithmetic(b, l).eq(Scalars::at(b, l, state, {c}), Scalars(b, l).number(element, 0.0));
}

Value forColumns(OpBuilder &b, Location loc, Value z, int64_t count,
                 function_ref<Value(OpBuilder &, Location, Value, Value)> update) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(count), {z},
                [&](OpBuilder &b, Location l, Value c, ValueRange w) -> Carried {
                  return {update(b, l, w[0], c)};
                })[0];
}

Value normaliseTaken(OpBuilder &b, Location l, const ComplexColumns &cols, Value z, Value state,
                     int64_t columns) {
  return forColumns(b, l, z, columns, [&](OpBuilder &b, Location l, Value w, Value c) {
    return cols.normalise(b, l, w, c, isTaken(b, l, state, c));
  });
}

Value projectOutTaken(OpBuilder &b, Location loc, const ComplexColumns &cols, Value work,
                      Value state, int64_t columns) {
  return forColumns(b, loc, work, columns, [&](OpBuilder &b, Location l, Value w, Value c) {
    Value candidate = isCandidate(b, l, state, c);
    return forColumns(b, l, w, columns, [&](OpBuilder &b, Location l, Value v, Value q) {
      Value when = Arithmetic(b, l).both(candidate, isTaken(b, l, state, q));
      return cols.project(b, l, v, q, c, when);
    });
  });
}

std::pair<Value, Value> pivotedGramSchmidt(OpBuilder &b, Location loc, const ComplexColumns &cols,
                                           Value work, Value state, int64_t columns, Value steps,
                                           double mark, ColumnTest preferred) {
  Scalars s(b, loc);
  Type element = cols.elementType();
  Carried done = s.loop(
      s.index(0), steps, {work, state},
      [&](OpBuilder &b, Location l, Value, ValueRange u) -> Carried {
        Scalars s(b, l);
        Value work = u[0], t = u[1];
        // The candidate with the most left; a NaN one first (as +inf), so
        // that a taken column is never picked and a NaN input gives NaN
        // vectors, not zeros.
        Value pivot = bestIndex(
            b, l, s.index(0), s.index(columns), s.index(0), s.number(element, -1.0),
            arith::CmpFPredicate::OGT, [&](OpBuilder &b, Location l, Value col) {
              Arithmetic a(b, l);
              Scalars s(b, l);
              Value left = cols.norm2(b, l, work, col);
              Value nan = a.cmp(arith::CmpFPredicate::UNO, left, left);
              Value inf = s.number(element, std::numeric_limits<double>::infinity());
              Value score = a.select(nan, inf, left);
              if (preferred) {
                Value first = a.both(preferred(b, l, col), a.gt(left, s.number(element, 0.5)));
                score = a.select(first, a.add(score, s.number(element, 1.0)), score);
              }
              return a.select(isCandidate(b, l, t, col), score, s.number(element, -1.0));
            }).first;
        // Orthogonal once more to those taken, then normalised.
        work = forColumns(b, l, work, columns, [&](OpBuilder &b, Location l, Value w, Value col) {
          return cols.project(b, l, w, col, pivot, isTaken(b, l, t, col));
        });
        work = cols.normalise(b, l, work, pivot);
        t = Scalars::put(b, l, s.number(element, mark), t, {pivot});
        // Projected out of the candidates left.
        work = forColumns(b, l, work, columns, [&](OpBuilder &b, Location l, Value w, Value col) {
          return cols.project(b, l, w, pivot, col, isCandidate(b, l, t, col));
        });
        return {work, t};
      });
  return {done[0], done[1]};
}

std::pair<Value, Value> writeMarked(OpBuilder &b, Location loc, Value work, Value state,
                                    int64_t columns, double mark, Value out, Value m, Value at,
                                    int64_t first, int64_t rows) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(state.getType()).getElementType();
  Carried written = s.loop(
      s.index(0), s.index(columns), {out, at},
      [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
        Arithmetic a(b, l);
        Value marked = a.eq(Scalars::at(b, l, state, {col}), Scalars(b, l).number(element, mark));
        auto branch = b.create<scf::IfOp>(
            l, marked,
            [&](OpBuilder &b, Location l) {
              Scalars s(b, l);
              Value zeroIndex = s.index(0), oneIndex = s.index(1);
              Value result = s.loop(
                  s.index(0), s.index(rows), {u[0]},
                  [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                    Value row = Arithmetic(b, l).plus(i, first);
                    Value re = Scalars::at(b, l, work, {row, col, zeroIndex});
                    Value im = Scalars::at(b, l, work, {row, col, oneIndex});
                    Value x = Scalars::put(b, l, re, w[0], {m, i, u[1], zeroIndex});
                    return {Scalars::put(b, l, im, x, {m, i, u[1], oneIndex})};
                  })[0];
              b.create<scf::YieldOp>(l, ValueRange{result, Arithmetic(b, l).plus(u[1], 1)});
            },
            [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, ValueRange{u[0], u[1]}); });
        return {branch.getResult(0), branch.getResult(1)};
      });
  return {written[0], written[1]};
}

} // namespace kiln::aten
