//===- BunchKaufman.cpp - ldl_factor and ldl_solve as LAPACK's dsytf2/dsytrs ===//
//
// This file implements the lowering of aten.ldl_factor and aten.ldl_solve
// to scf loops over each matrix of the batch. ldl_factor is LAPACK's
// dsytf2 on the lower triangle, A = L D L^T with Bunch and Kaufman's
// diagonal pivoting:
//
// - step k takes the largest |entry| below the diagonal in column k
//   (colmax, at row imax, the first of equal ones); a 1 x 1 pivot when
//   |A[k, k]| >= alpha colmax (alpha = (1 + sqrt(17)) / 8) or >= alpha
//   colmax^2 / rowmax (rowmax: the largest |entry| off the diagonal in row
//   and column imax), else A[imax, imax] as a 1 x 1 pivot when it is at
//   least alpha rowmax, else a 2 x 2 pivot of rows (k, imax);
// - the pivot row and column are exchanged into place within the trailing
//   matrix, then the trailing matrix takes the rank-1 (or rank-2) update
//   and column k (and k + 1) become L's multipliers;
// - a zero column (or a NaN on the diagonal) is left as it is and sets info
//   (the first such step, 1-based), as dsytf2 does;
// - pivots are LAPACK's: k + 1 for a 1 x 1 pivot from row kp = k, -(kp + 1)
//   for both steps of a 2 x 2 one.
//
// The lower triangle is kept transposed (W[j, i] = A[i, j], i >= j), so
// that the column updates walk contiguous rows; LD is its transpose with
// the strict upper triangle zero, as eager returns it.
//
// ldl_solve is dsytrs: forward through L D one pivot at a time (its row
// interchange of B, the multipliers below it, then D's 1 x 1 block, or 2 x
// 2 block by dsytrs's scaled formulas), then back through L^T from the
// last pivot (the dot products with the rows below, then the interchange).
// Rows of B are contiguous, so every update is a row operation.
//
//===----------------------------------------------------------------------===//
#include "MatrixLoops.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// Entry (i, j), i >= j, of matrix m's lower triangle kept transposed in w.
struct Lower {
  Value m;

  Value at(OpBuilder &b, Location l, Value w, Value i, Value j) const {
    return Scalars::at(b, l, w, {m, j, i});
  }
  Value put(OpBuilder &b, Location l, Value v, Value w, Value i, Value j) const {
    return Scalars::put(b, l, v, w, {m, j, i});
  }
  /// Entries (i, j) and (p, q) exchanged.
  Value exchange(OpBuilder &b, Location l, Value w, Value i, Value j, Value p, Value q) const {
    Value x = at(b, l, w, i, j), y = at(b, l, w, p, q);
    return put(b, l, x, put(b, l, y, w, i, j), p, q);
  }
};

/// The first index in [lo, hi) with the largest |entry(x)|, and that
/// magnitude; (lo, |entry(lo)|) when the range has one entry.
std::pair<Value, Value> largestIn(OpBuilder &b, Location l, Value lo, Value hi,
                                  function_ref<Value(OpBuilder &, Location, Value)> entry) {
  Arithmetic a(b, l);
  return bestIndex(b, l, plusOne(b, l, lo), hi, lo, a.abs(entry(b, l, lo)), arith::CmpFPredicate::OGT,
                   [&](OpBuilder &b, Location l, Value x) { return Arithmetic(b, l).abs(entry(b, l, x)); });
}

/// One dsytf2 step at k on matrix m (the state: w, pivots, info, k; n the
/// order); returns the next state.
Carried bunchKaufmanStep(OpBuilder &b, Location loc, const Lower &low, ValueRange state, int64_t n) {
  Arithmetic a(b, loc);
  Scalars s(b, loc);
  Value w = state[0], pivots = state[1], info = state[2], k = state[3];
  Type element = cast<RankedTensorType>(w.getType()).getElementType();
  Value zero = s.number(element, 0.0), one = s.number(element, 1.0);
  Value alpha = s.number(element, (1.0 + std::sqrt(17.0)) / 8.0);
  Value last = a.index(n - 1), end = a.index(n);
  Value absakk = a.abs(low.at(b, loc, w, k, k));
  Value inside = a.icmp(arith::CmpIPredicate::slt, k, last);
  Value below = a.smallest(plusOne(b, loc, k), last);
  auto [imax0, colmax0] = largestIn(b, loc, below, end, [&](OpBuilder &b, Location l, Value i) {
    return low.at(b, l, w, i, k);
  });
  Value imax = a.select(inside, imax0, k), colmax = a.select(inside, colmax0, zero);
  Value zeroColumn = a.either(a.eq(a.max(absakk, colmax), zero), a.ne(absakk, absakk));
  auto step = b.create<scf::IfOp>(
      loc, zeroColumn,
      [&](OpBuilder &b, Location l) {
        Arithmetic a(b, l);
        Value first = a.icmp(arith::CmpIPredicate::eq, Scalars::at(b, l, info, {low.m, a.index(0)}),
                             b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)));
        Value k1 = b.create<arith::IndexCastOp>(l, b.getI64Type(), plusOne(b, l, k));
        Value newInfo = Scalars::put(
            b, l, a.select(first, k1, Scalars::at(b, l, info, {low.m, a.index(0)})), info,
            {low.m, a.index(0)});
        Value newPivots = Scalars::put(b, l, k1, pivots, {low.m, k});
        b.create<scf::YieldOp>(l, ValueRange{w, newPivots, newInfo, plusOne(b, l, k)});
      },
      [&](OpBuilder &b, Location l) {
        Arithmetic a(b, l);
        Scalars s(b, l);
        // rowmax: row imax left of the diagonal from column k, and column
        // imax below it.
        auto [jmax, rowLeft] = largestIn(b, l, k, a.largest(imax, plusOne(b, l, k)),
                                         [&](OpBuilder &b, Location l, Value j) {
                                           return low.at(b, l, w, imax, j);
                                         });
        (void)jmax;
        Value belowImax = a.smallest(plusOne(b, l, imax), last);
        auto [jmax2, colBelow] = largestIn(b, l, belowImax, end, [&](OpBuilder &b, Location l, Value i) {
          return low.at(b, l, w, i, imax);
        });
        (void)jmax2;
        Value rowmax = a.select(a.icmp(arith::CmpIPredicate::slt, imax, last), a.max(rowLeft, colBelow),
                                rowLeft);
        Value keepK = a.either(a.ge(absakk, a.mul(alpha, colmax)),
                               a.ge(absakk, a.mul(a.mul(alpha, colmax), a.div(colmax, rowmax))));
        Value singleImax = a.ge(a.abs(low.at(b, l, w, imax, imax)), a.mul(alpha, rowmax));
        Value kp = a.select(keepK, k, imax);
        Value two = a.both(a.negate(keepK), a.negate(singleImax));
        Value kk = a.select(two, plusOne(b, l, k), k);
        // Rows and columns kk and kp exchanged within the trailing matrix
        // (each a no-op when kp = kk).
        Value x = s.loop(plusOne(b, l, kp), end, {w}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
          return {low.exchange(b, l, u[0], i, kk, i, kp)};
        })[0];
        x = s.loop(plusOne(b, l, kk), kp, {x}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
          return {low.exchange(b, l, u[0], i, kk, kp, i)};
        })[0];
        x = low.exchange(b, l, x, kk, kk, kp, kp);
        // A 2 x 2 pivot also exchanges A[k + 1, k] and A[kp, k] (selected
        // values, not tensors: both writes stay in place).
        Value k1 = a.smallest(plusOne(b, l, k), last);
        Value upper = low.at(b, l, x, k1, k), lower = low.at(b, l, x, kp, k);
        x = low.put(b, l, a.select(two, lower, upper), x, k1, k);
        x = low.put(b, l, a.select(two, upper, lower), x, kp, k);
        auto update = b.create<scf::IfOp>(
            l, two,
            [&](OpBuilder &b, Location l) {
              // The rank-2 update with D = [[A[k,k], A[k+1,k]], [A[k+1,k], A[k+1,k+1]]].
              Arithmetic a(b, l);
              Value k1 = plusOne(b, l, k);
              Value d21 = low.at(b, l, x, k1, k);
              Value d11 = a.div(low.at(b, l, x, k1, k1), d21), d22 = a.div(low.at(b, l, x, k, k), d21);
              Value t = a.div(one, a.sub(a.mul(d11, d22), one));
              Value scale = a.div(t, d21);
              Value y = Scalars(b, l).loop(plusOne(b, l, k1), end, {x}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
                Arithmetic a(b, l);
                Value ajk = low.at(b, l, u[0], j, k), ajk1 = low.at(b, l, u[0], j, k1);
                Value wk = a.mul(scale, a.sub(a.mul(d11, ajk), ajk1));
                Value wkp1 = a.mul(scale, a.sub(a.mul(d22, ajk1), ajk));
                Value z = Scalars(b, l).loop(j, a.index(n), u, [&](OpBuilder &b, Location l, Value i, ValueRange v) -> Carried {
                  Arithmetic a(b, l);
                  Value updated = a.sub(low.at(b, l, v[0], i, j),
                                        a.add(a.mul(low.at(b, l, v[0], i, k), wk),
                                              a.mul(low.at(b, l, v[0], i, k1), wkp1)));
                  return {low.put(b, l, updated, v[0], i, j)};
                })[0];
                return {low.put(b, l, wkp1, low.put(b, l, wk, z, j, k), j, k1)};
              })[0];
              Value p = b.create<arith::IndexCastOp>(l, b.getI64Type(), plusOne(b, l, kp));
              Value negative = b.create<arith::SubIOp>(l, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)), p);
              Value piv = Scalars::put(b, l, negative, Scalars::put(b, l, negative, pivots, {low.m, k}),
                                       {low.m, k1});
              b.create<scf::YieldOp>(l, ValueRange{y, piv, a.plus(k, 2)});
            },
            [&](OpBuilder &b, Location l) {
              // The rank-1 update with d11 = 1 / A[k, k]; column k scaled by it.
              Arithmetic a(b, l);
              Value d11 = a.div(one, low.at(b, l, x, k, k));
              Value y = Scalars(b, l).loop(plusOne(b, l, k), end, {x}, [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
                Arithmetic a(b, l);
                Value xj = a.mul(d11, low.at(b, l, u[0], j, k));
                return Scalars(b, l).loop(j, a.index(n), u, [&](OpBuilder &b, Location l, Value i, ValueRange v) -> Carried {
                  Arithmetic a(b, l);
                  Value updated = a.sub(low.at(b, l, v[0], i, j), a.mul(xj, low.at(b, l, v[0], i, k)));
                  return {low.put(b, l, updated, v[0], i, j)};
                });
              })[0];
              y = Scalars(b, l).loop(plusOne(b, l, k), end, {y}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
                return {low.put(b, l, Arithmetic(b, l).mul(low.at(b, l, u[0], i, k), d11), u[0], i, k)};
              })[0];
              Value p = b.create<arith::IndexCastOp>(l, b.getI64Type(), plusOne(b, l, kp));
              b.create<scf::YieldOp>(l, ValueRange{y, Scalars::put(b, l, p, pivots, {low.m, k}),
                                                   plusOne(b, l, k)});
            });
        b.create<scf::YieldOp>(l, ValueRange{update.getResult(0), update.getResult(1), info,
                                             update.getResult(2)});
      });
  return Carried(step.getResults());
}

struct LdlFactorLowering : OpConversionPattern<LdlFactorOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(LdlFactorOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    Value w = transposedBatch(b, loc, adaptor.getSelf());
    Value pivots = s.fresh(cast<RankedTensorType>(op.getPivots().getType()));
    Value info = s.zeros(cast<RankedTensorType>(op.getInfo().getType()));
    Value ld = s.zeros(type);
    Carried out = s.loop(s.index(0), s.index(batch), {w, pivots, info, ld},
                         [&](OpBuilder &b, Location l, Value m, ValueRange t) -> Carried {
                           Lower low{m};
                           Carried done = whileLoop(
                               b, l, {t[0], t[1], t[2], Scalars(b, l).index(0)},
                               [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
                                 Arithmetic a(b, l);
                                 return {a.icmp(arith::CmpIPredicate::slt, u[3], a.index(n)), Carried(u)};
                               },
                               [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
                                 return bunchKaufmanStep(b, l, low, u, n);
                               });
                           // LD: the lower triangle, transposed back.
                           Value result = forEachPair(
                               b, l, n + 1, {t[3]},
                               [&](OpBuilder &b, Location l, Value j, Value i1, ValueRange u) -> Carried {
                                 Value i = Arithmetic(b, l).minus(i1, Arithmetic(b, l).index(1));
                                 return {Scalars::put(b, l, low.at(b, l, done[0], i, j), u[0], {m, i, j})};
                               })[0];
                           return {done[0], done[1], done[2], result};
                         });
    rewriter.replaceOp(op, {out[3], out[1], out[2]});
    return success();
  }
};

/// Row `row` of matrix m of `x` += sum over i in [from, to) of coef(i) x[i].
Value addRows(OpBuilder &b, Location loc, Value x, Value m, Value row, Value from, Value to,
              int64_t width, function_ref<Value(OpBuilder &, Location, Value)> coef) {
  return Scalars(b, loc).loop(from, to, {x}, [&](OpBuilder &b, Location l, Value i, ValueRange u) -> Carried {
    Value f = coef(b, l, i);
    return Scalars(b, l).loop(Scalars(b, l).index(0), Scalars(b, l).index(width), u,
                              [&](OpBuilder &b, Location l, Value c, ValueRange v) -> Carried {
                                Arithmetic a(b, l);
                                Value y = a.add(Scalars::at(b, l, v[0], {m, row, c}),
                                                a.mul(f, Scalars::at(b, l, v[0], {m, i, c})));
                                return {Scalars::put(b, l, y, v[0], {m, row, c})};
                              });
  })[0];
}

/// The 0-based row of a signed 1-based pivot: |p| - 1.
Value pivotRow(OpBuilder &b, Location l, Value p) {
  Value zero = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0));
  Value magnitude = b.create<arith::SelectOp>(
      l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, p, zero),
      b.create<arith::SubIOp>(l, zero, p), p);
  return b.create<arith::IndexCastOp>(
      l, b.getIndexType(),
      b.create<arith::SubIOp>(l, magnitude, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(1))));
}

struct LdlSolveLowering : OpConversionPattern<LdlSolveOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(LdlSolveOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto rhsType = cast<RankedTensorType>(adaptor.getRhs().getType());
    const int64_t batch = rhsType.getDimSize(0), n = rhsType.getDimSize(1), width = rhsType.getDimSize(2);
    Value ld = adaptor.getLd(), pivots = adaptor.getPivots();
    Type element = rhsType.getElementType();
    Value x = s.fresh(rhsType, adaptor.getRhs());
    x = s.loop(s.index(0), s.index(batch), {x}, [&](OpBuilder &b, Location l, Value m, ValueRange t) -> Carried {
      auto lAt = [&](OpBuilder &b, Location l, Value i, Value j) { return Scalars::at(b, l, ld, {m, i, j}); };
      auto isBlock = [&](OpBuilder &b, Location l, Value k) {
        return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, Scalars::at(b, l, pivots, {m, k}),
                                       b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)))
            .getResult();
      };
      Value one = Scalars(b, l).number(element, 1.0);
      // L D X = B, from the first pivot.
      Carried forward = whileLoop(
          b, l, {t[0], Scalars(b, l).index(0)},
          [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
            Arithmetic a(b, l);
            return {a.icmp(arith::CmpIPredicate::slt, u[1], a.index(n)), Carried(u)};
          },
          [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
            Value k = u[1];
            auto step = b.create<scf::IfOp>(
                l, isBlock(b, l, k),
                [&](OpBuilder &b, Location l) {
                  Arithmetic a(b, l);
                  Value k1 = plusOne(b, l, k), k2 = plusOne(b, l, k1);
                  Value y = swapRows(b, l, u[0], m, k1, pivotRow(b, l, Scalars::at(b, l, pivots, {m, k})));
                  // Rows below the block: B[i] -= LD[i, k] B[k] + LD[i, k+1] B[k+1].
                  y = Scalars(b, l).loop(k2, a.index(n), {y}, [&](OpBuilder &b, Location l, Value i, ValueRange v) -> Carried {
                    Arithmetic a(b, l);
                    Value f0 = a.neg(lAt(b, l, i, k)), f1 = a.neg(lAt(b, l, i, k1));
                    Value z = addRows(b, l, v[0], m, i, k, k1, width, [&](OpBuilder &, Location, Value) { return f0; });
                    return {addRows(b, l, z, m, i, k1, k2, width, [&](OpBuilder &, Location, Value) { return f1; })};
                  })[0];
                  Value akm1k = lAt(b, l, k1, k);
                  Value akm1 = a.div(lAt(b, l, k, k), akm1k), ak = a.div(lAt(b, l, k1, k1), akm1k);
                  Value denom = a.sub(a.mul(akm1, ak), one);
                  y = Scalars(b, l).loop(a.index(0), a.index(width), {y}, [&](OpBuilder &b, Location l, Value c, ValueRange v) -> Carried {
                    Arithmetic a(b, l);
                    Value bkm1 = a.div(Scalars::at(b, l, v[0], {m, k, c}), akm1k);
                    Value bk = a.div(Scalars::at(b, l, v[0], {m, k1, c}), akm1k);
                    Value z = Scalars::put(b, l, a.div(a.sub(a.mul(ak, bkm1), bk), denom), v[0], {m, k, c});
                    return {Scalars::put(b, l, a.div(a.sub(a.mul(akm1, bk), bkm1), denom), z, {m, k1, c})};
                  })[0];
                  b.create<scf::YieldOp>(l, ValueRange{y, k2});
                },
                [&](OpBuilder &b, Location l) {
                  Arithmetic a(b, l);
                  Value k1 = plusOne(b, l, k);
                  Value y = swapRows(b, l, u[0], m, k, pivotRow(b, l, Scalars::at(b, l, pivots, {m, k})));
                  y = Scalars(b, l).loop(k1, a.index(n), {y}, [&](OpBuilder &b, Location l, Value i, ValueRange v) -> Carried {
                    Value f = Arithmetic(b, l).neg(lAt(b, l, i, k));
                    return {addRows(b, l, v[0], m, i, k, plusOne(b, l, k), width,
                                    [&](OpBuilder &, Location, Value) { return f; })};
                  })[0];
                  Value d = lAt(b, l, k, k);
                  y = Scalars(b, l).loop(a.index(0), a.index(width), {y}, [&](OpBuilder &b, Location l, Value c, ValueRange v) -> Carried {
                    Value z = Arithmetic(b, l).div(Scalars::at(b, l, v[0], {m, k, c}), d);
                    return {Scalars::put(b, l, z, v[0], {m, k, c})};
                  })[0];
                  b.create<scf::YieldOp>(l, ValueRange{y, k1});
                });
            return Carried(step.getResults());
          });
      // L^T X = B, from the last pivot.
      Carried backward = whileLoop(
          b, l, {forward[0], Scalars(b, l).index(n - 1)},
          [&](OpBuilder &b, Location l, ValueRange u) -> std::pair<Value, Carried> {
            Arithmetic a(b, l);
            return {a.icmp(arith::CmpIPredicate::sge, u[1], a.index(0)), Carried(u)};
          },
          [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
            Arithmetic a(b, l);
            Value k = u[1], k1 = plusOne(b, l, k), end = a.index(n);
            Value block = isBlock(b, l, k);
            // B[k] -= sum over i > k of LD[i, k] B[i] (and row k - 1 with
            // column k - 1 for a 2 x 2 block).
            Value y = addRows(b, l, u[0], m, k, k1, end, width, [&](OpBuilder &b, Location l, Value i) {
              return Arithmetic(b, l).neg(lAt(b, l, i, k));
            });
            auto second = b.create<scf::IfOp>(
                l, block,
                [&](OpBuilder &b, Location l) {
                  Value k0 = Arithmetic(b, l).minus(k, Arithmetic(b, l).index(1));
                  b.create<scf::YieldOp>(l, addRows(b, l, y, m, k0, k1, end, width, [&](OpBuilder &b, Location l, Value i) {
                    return Arithmetic(b, l).neg(lAt(b, l, i, k0));
                  }));
                },
                [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, y); });
            y = swapRows(b, l, second.getResult(0), m, k, pivotRow(b, l, Scalars::at(b, l, pivots, {m, k})));
            return {y, a.select(block, a.minus(k, a.index(2)), a.minus(k, a.index(1)))};
          });
      return {backward[0]};
    })[0];
    rewriter.replaceOp(op, x);
    return success();
  }
};

} // namespace

void kiln::aten::populateBunchKaufmanPatterns(RewritePatternSet &patterns) {
  patterns.add<LdlFactorLowering, LdlSolveLowering>(patterns.getContext());
}
