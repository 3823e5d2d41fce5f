//===- Factorisations.cpp - LU, solves and Cholesky as scalar loops -------===//
//
// This file implements the lowering of aten.lu_factor, aten.linalg_solve
// and aten.cholesky to scf.for loops over each matrix of the (N, n, n)
// batch, written in place into one copy of the input, as LAPACK's
// unblocked routines compute them:
//
// - lu_factor is dgetf2: step k takes the first row p >= k whose column-k
//   entry has the largest magnitude (a NaN never wins, as idamax's strict
//   compare), swaps rows k and p, stores the multipliers below the pivot
//   (0 under a zero pivot: the matrix is singular, and info says so) and
//   subtracts their multiples of row k from the trailing rows.
// - linalg_solve is dgetrs after dgetf2: rhs's rows interchanged as the
//   pivots say, then forward substitution with the unit lower L and back
//   substitution with U (a zero pivot divides: infinities or NaN, as
//   eager's).
// - cholesky is dpotf2 (lower, left-looking): column j's pivot is
//   a[j, j] - sum l[j, p]^2 over p < j; its square root is l[j, j], and
//   the entries below are (a[i, j] - sum l[i, p] l[j, p]) / l[j, j]. A
//   pivot that is not > 0 (or NaN) sets info to j + 1 (the first such j);
//   the NaN its square root gives then runs through the later columns,
//   where LAPACK leaves unspecified values. The upper triangle is zeroed.
//
// The code is O(n^3) scalar work per matrix and its size does not grow
// with n. Rounding differs from LAPACK's blocked updates in the last bits.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

using Carried = SmallVector<Value>;
using LoopBody = function_ref<Carried(OpBuilder &, Location, Value, ValueRange)>;

/// Scalar code on tensors at one location: loops carrying tensors, and
/// element reads and writes.
class Scalars {
public:
  Scalars(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value number(Type element, double v) {
    return b.create<arith::ConstantOp>(loc, element, b.getFloatAttr(element, v));
  }

  /// scf.for over [lo, hi) carrying `carried`; the loop's results.
  Carried loop(Value lo, Value hi, ValueRange carried, LoopBody body) {
    auto op = b.create<scf::ForOp>(
        loc, lo, hi, index(1), carried,
        [&](OpBuilder &nb, Location l, Value iv, ValueRange values) {
          nb.create<scf::YieldOp>(l, body(nb, l, iv, values));
        });
    return Carried(op.getResults());
  }

  static Value at(OpBuilder &b, Location l, Value t, ValueRange at) {
    return b.create<tensor::ExtractOp>(l, t, at);
  }
  static Value put(OpBuilder &b, Location l, Value v, Value t, ValueRange at) {
    return b.create<tensor::InsertOp>(l, v, t, at);
  }

  /// A fresh tensor of `type` (its own buffer: CSE never merges it with
  /// another), a copy of `copy` when given.
  Value fresh(RankedTensorType type, Value copy = {}) {
    return b.create<bufferization::AllocTensorOp>(loc, type, ValueRange{}, copy);
  }
  Value zeros(RankedTensorType type) {
    Value zero = isa<FloatType>(type.getElementType())
                     ? number(type.getElementType(), 0.0)
                     : b.create<arith::ConstantOp>(loc, type.getElementType(),
                                                   b.getIntegerAttr(type.getElementType(), 0))
                           .getResult();
    return b.create<linalg::FillOp>(loc, zero, fresh(type)).getResult(0);
  }

private:
  OpBuilder &b;
  Location loc;
};

Value plusOne(OpBuilder &b, Location l, Value i) {
  return b.create<arith::AddIOp>(l, i, b.create<arith::ConstantIndexOp>(l, 1));
}

/// dgetf2 on matrix `m` of the (N, n, n) batch `lu`, in place; the row
/// swapped with each step's row goes to pivots[m, k] (i64) and the parity
/// of the swaps to odd[m, 0] (i1, false on entry).
Carried factorOne(OpBuilder &b, Location loc, Value lu, Value pivots, Value odd, Value m,
                  int64_t n) {
  Scalars s(b, loc);
  Value zero = s.index(0), end = s.index(n);
  return s.loop(zero, end, {lu, pivots, odd}, [&](OpBuilder &b, Location l, Value k,
                                                   ValueRange c) -> Carried {
    Scalars s(b, l);
    Value lu = c[0];
    Value below = plusOne(b, l, k);
    Value first = b.create<math::AbsFOp>(l, Scalars::at(b, l, lu, {m, k, k}));
    Carried best = s.loop(below, s.index(n), {k, first},
                          [&](OpBuilder &b, Location l, Value i, ValueRange c) -> Carried {
                            Value v = b.create<math::AbsFOp>(l, Scalars::at(b, l, lu, {m, i, k}));
                            Value larger =
                                b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v, c[1]);
                            return {b.create<arith::SelectOp>(l, larger, i, c[0]),
                                    b.create<arith::SelectOp>(l, larger, v, c[1])};
                          });
    Value p = best[0];
    lu = s.loop(s.index(0), s.index(n), {lu},
                [&](OpBuilder &b, Location l, Value j, ValueRange c) -> Carried {
                  Value rowK = Scalars::at(b, l, c[0], {m, k, j});
                  Value rowP = Scalars::at(b, l, c[0], {m, p, j});
                  Value t = Scalars::put(b, l, rowP, c[0], {m, k, j});
                  return {Scalars::put(b, l, rowK, t, {m, p, j})};
                })[0];
    Value pivotsOut = Scalars::put(b, l, b.create<arith::IndexCastOp>(l, b.getI64Type(), p),
                                   c[1], {m, k});
    Value swapped = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, p, k);
    Value parity = b.create<arith::XOrIOp>(l, Scalars::at(b, l, c[2], {m, s.index(0)}), swapped);
    Value oddOut = Scalars::put(b, l, parity, c[2], {m, s.index(0)});
    Value pivot = Scalars::at(b, l, lu, {m, k, k});
    Type element = pivot.getType();
    Value zeroPivot = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, pivot,
                                              s.number(element, 0.0));
    lu = s.loop(below, s.index(n), {lu},
                [&](OpBuilder &b, Location l, Value i, ValueRange c) -> Carried {
                  Scalars s(b, l);
                  Value ratio = b.create<arith::DivFOp>(l, Scalars::at(b, l, c[0], {m, i, k}),
                                                        pivot);
                  Value multiplier =
                      b.create<arith::SelectOp>(l, zeroPivot, s.number(element, 0.0), ratio);
                  Value t = Scalars::put(b, l, multiplier, c[0], {m, i, k});
                  return s.loop(below, s.index(n), {t},
                                [&](OpBuilder &b, Location l, Value j, ValueRange c) -> Carried {
                                  Value update = b.create<arith::MulFOp>(
                                      l, multiplier, Scalars::at(b, l, c[0], {m, k, j}));
                                  Value v = b.create<arith::SubFOp>(
                                      l, Scalars::at(b, l, c[0], {m, i, j}), update);
                                  return {Scalars::put(b, l, v, c[0], {m, i, j})};
                                });
                })[0];
    return {lu, pivotsOut, oddOut};
  });
}

/// The batch `a` (N, n, n) factorised: (lu, pivots (N, n) i64, odd (N, 1) i1).
Carried factorBatch(OpBuilder &b, Location loc, Value a) {
  Scalars s(b, loc);
  auto type = cast<RankedTensorType>(a.getType());
  int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
  Value lu = s.fresh(type, a);
  Value pivots = s.fresh(RankedTensorType::get({batch, n}, b.getI64Type()));
  Value odd = s.zeros(RankedTensorType::get({batch, 1}, b.getI1Type()));
  return s.loop(s.index(0), s.index(batch), {lu, pivots, odd},
                [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
                  return factorOne(b, l, c[0], c[1], c[2], m, n);
                });
}

struct LuFactorLowering : OpConversionPattern<LuFactorOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LuFactorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, factorBatch(rewriter, op.getLoc(), adaptor.getSelf()));
    return success();
  }
};

/// x[m, i, :] -= factor * x[m, j, :] over the `width` columns.
Value subtractRow(OpBuilder &b, Location l, Value x, Value m, Value i, Value j, Value factor,
                  int64_t width) {
  Scalars s(b, l);
  return s.loop(s.index(0), s.index(width), {x},
                [&](OpBuilder &b, Location l, Value c, ValueRange t) -> Carried {
                  Value update = b.create<arith::MulFOp>(l, factor, Scalars::at(b, l, t[0], {m, j, c}));
                  Value v = b.create<arith::SubFOp>(l, Scalars::at(b, l, t[0], {m, i, c}), update);
                  return {Scalars::put(b, l, v, t[0], {m, i, c})};
                })[0];
}

struct LinalgSolveLowering : OpConversionPattern<LinalgSolveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LinalgSolveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    RankedTensorType type = op.getType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1), width = type.getDimSize(2);
    Carried lu = factorBatch(b, loc, adaptor.getA());
    Value x = s.fresh(type, adaptor.getRhs());
    x = s.loop(s.index(0), s.index(batch), {x},
               [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
                 Scalars s(b, l);
                 Value x = c[0];
                 // The row interchanges, in order.
                 x = s.loop(s.index(0), s.index(n), {x},
                            [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                              Scalars s(b, l);
                              Value p = b.create<arith::IndexCastOp>(
                                  l, b.getIndexType(), Scalars::at(b, l, lu[1], {m, i}));
                              return s.loop(s.index(0), s.index(width), {t[0]},
                                            [&](OpBuilder &b, Location l, Value col,
                                                ValueRange u) -> Carried {
                                              Value xi = Scalars::at(b, l, u[0], {m, i, col});
                                              Value xp = Scalars::at(b, l, u[0], {m, p, col});
                                              Value w = Scalars::put(b, l, xp, u[0], {m, i, col});
                                              return {Scalars::put(b, l, xi, w, {m, p, col})};
                                            });
                            })[0];
                 // L y = P b, L unit lower.
                 x = s.loop(s.index(0), s.index(n), {x},
                            [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                              Scalars s(b, l);
                              return s.loop(s.index(0), i, {t[0]},
                                            [&](OpBuilder &b, Location l, Value j,
                                                ValueRange u) -> Carried {
                                              Value factor = Scalars::at(b, l, lu[0], {m, i, j});
                                              return {subtractRow(b, l, u[0], m, i, j, factor, width)};
                                            });
                            })[0];
                 // U x = y, from the last row up.
                 return s.loop(s.index(0), s.index(n), {x},
                               [&](OpBuilder &b, Location l, Value r, ValueRange t) -> Carried {
                                 Scalars s(b, l);
                                 Value i = b.create<arith::SubIOp>(l, s.index(n - 1), r);
                                 Value y = s.loop(plusOne(b, l, i), s.index(n), {t[0]},
                                                  [&](OpBuilder &b, Location l, Value j,
                                                      ValueRange u) -> Carried {
                                                    Value factor =
                                                        Scalars::at(b, l, lu[0], {m, i, j});
                                                    return {subtractRow(b, l, u[0], m, i, j,
                                                                        factor, width)};
                                                  })[0];
                                 Value pivot = Scalars::at(b, l, lu[0], {m, i, i});
                                 return s.loop(s.index(0), s.index(width), {y},
                                               [&](OpBuilder &b, Location l, Value col,
                                                   ValueRange u) -> Carried {
                                                 Value v = b.create<arith::DivFOp>(
                                                     l, Scalars::at(b, l, u[0], {m, i, col}),
                                                     pivot);
                                                 return {Scalars::put(b, l, v, u[0], {m, i, col})};
                                               });
                               });
               })[0];
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// sum over p < j of t[m, i, p] * t[m, j, p], in the element type.
Value rowProduct(OpBuilder &b, Location l, Value t, Value m, Value i, Value j, Type element) {
  Scalars s(b, l);
  return s.loop(s.index(0), j, {s.number(element, 0.0)},
                [&](OpBuilder &b, Location l, Value p, ValueRange acc) -> Carried {
                  Value product = b.create<arith::MulFOp>(l, Scalars::at(b, l, t, {m, i, p}),
                                                          Scalars::at(b, l, t, {m, j, p}));
                  return {b.create<arith::AddFOp>(l, acc[0], product)};
                })[0];
}

struct CholeskyLowering : OpConversionPattern<CholeskyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CholeskyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1);
    Type i64 = b.getI64Type();
    Value l = s.fresh(type, adaptor.getSelf());
    Value info = s.fresh(RankedTensorType::get({batch, 1}, i64));
    Carried out = s.loop(
        s.index(0), s.index(batch), {l, info},
        [&](OpBuilder &b, Location loc, Value m, ValueRange c) -> Carried {
          Scalars s(b, loc);
          Value noFailure = b.create<arith::ConstantOp>(loc, i64, b.getI64IntegerAttr(0));
          Carried column = s.loop(
              s.index(0), s.index(n), {c[0], noFailure},
              [&](OpBuilder &b, Location loc, Value j, ValueRange t) -> Carried {
                Scalars s(b, loc);
                Value l = t[0];
                Value pivot = b.create<arith::SubFOp>(
                    loc, Scalars::at(b, loc, l, {m, j, j}),
                    rowProduct(b, loc, l, m, j, j, element));
                Value positive = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, pivot,
                                                         s.number(element, 0.0));
                Value firstFailure = b.create<arith::AndIOp>(
                    loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t[1], noFailure),
                    b.create<arith::XOrIOp>(
                        loc, positive,
                        b.create<arith::ConstantOp>(loc, b.getI1Type(), b.getBoolAttr(true))));
                Value order = b.create<arith::IndexCastOp>(loc, i64, plusOne(b, loc, j));
                Value failure = b.create<arith::SelectOp>(loc, firstFailure, order, t[1]);
                Value root = b.create<math::SqrtOp>(loc, pivot);
                l = Scalars::put(b, loc, root, l, {m, j, j});
                // Above the diagonal: 0.
                l = s.loop(s.index(0), j, {l},
                           [&](OpBuilder &b, Location loc, Value i, ValueRange u) -> Carried {
                             Scalars s(b, loc);
                             return {Scalars::put(b, loc, s.number(element, 0.0), u[0], {m, i, j})};
                           })[0];
                l = s.loop(plusOne(b, loc, j), s.index(n), {l},
                           [&](OpBuilder &b, Location loc, Value i, ValueRange u) -> Carried {
                             Value v = b.create<arith::SubFOp>(
                                 loc, Scalars::at(b, loc, u[0], {m, i, j}),
                                 rowProduct(b, loc, u[0], m, i, j, element));
                             v = b.create<arith::DivFOp>(loc, v, root);
                             return {Scalars::put(b, loc, v, u[0], {m, i, j})};
                           })[0];
                return {l, failure};
              });
          Value infoOut = Scalars::put(b, loc, column[1], c[1], {m, s.index(0)});
          return {column[0], infoOut};
        });
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void kiln::aten::populateFactorisationPatterns(RewritePatternSet &patterns) {
  patterns.add<LuFactorLowering, LinalgSolveLowering, CholeskyLowering>(
      patterns.getContext());
}
