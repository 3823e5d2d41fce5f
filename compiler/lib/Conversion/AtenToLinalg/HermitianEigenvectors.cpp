//===- HermitianEigenvectors.cpp - complex eigenvectors from the embedding ===//
//
// This file implements the lowering of aten.hermitian_eigenvectors: for each
// matrix of the batch, the 2n eigenvector columns (u; v) of the real
// embedding as complex vectors z = u + iv (a working copy), then n steps of
// complex Gram-Schmidt with column pivoting: the column not yet taken with
// the largest squared norm is taken, made orthogonal once more to those
// taken before (<q, z> = sum conj(q_i) z_i; z -= <q, z> q), normalised, and
// projected out of every column not taken. Last, the taken columns are
// written in the order of their columns, which is the eigenvalues' order.
//
// Why pivoting: the columns of distinct eigenvalues are orthogonal, also as
// complex vectors, and an eigenvalue of multiplicity k owns 2k columns that
// span its k complex dimensions; once it has given k vectors its columns
// have nothing left. So the largest leftover always belongs to an
// eigenvalue still owed a vector (at least 2/(k+2) of a column for a k-fold
// one, against rounding for the others), and each gets exactly its k. An
// order-bound rule (keep a column when over half of it is left) can skip
// the last vectors of a 4-fold or larger eigenvalue.
//
//===----------------------------------------------------------------------===//
#include "MatrixLoops.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// Complex columns (n, 2n, 2) of one matrix in scalar loops.
class Columns {
public:
  Columns(int64_t n, Type element) : n(n), element(element) {}

  Value part(OpBuilder &b, Location l, Value z, Value i, Value c, int64_t which) const {
    return Scalars::at(b, l, z, {i, c, b.create<arith::ConstantIndexOp>(l, which)});
  }
  Value put(OpBuilder &b, Location l, Value v, Value z, Value i, Value c, int64_t which) const {
    return Scalars::put(b, l, v, z, {i, c, b.create<arith::ConstantIndexOp>(l, which)});
  }

  /// sum |z_c|^2.
  Value norm2(OpBuilder &b, Location loc, Value z, Value c) const {
    Scalars s(b, loc);
    return s.loop(s.index(0), s.index(n), {s.number(element, 0.0)},
                  [&](OpBuilder &b, Location l, Value i, ValueRange acc) -> Carried {
                    Arithmetic a(b, l);
                    Value re = part(b, l, z, i, c, 0), im = part(b, l, z, i, c, 1);
                    return {a.add(acc[0], a.add(a.mul(re, re), a.mul(im, im)))};
                  })[0];
  }

  /// z_c -= <z_q, z_c> z_q.
  Value project(OpBuilder &b, Location loc, Value z, Value q, Value c) const {
    Scalars s(b, loc);
    Value zero = s.number(element, 0.0);
    Carried dot = s.loop(s.index(0), s.index(n), {zero, zero},
                         [&](OpBuilder &b, Location l, Value i, ValueRange acc) -> Carried {
                           Arithmetic a(b, l);
                           Value qr = part(b, l, z, i, q, 0), qi = part(b, l, z, i, q, 1);
                           Value xr = part(b, l, z, i, c, 0), xi = part(b, l, z, i, c, 1);
                           return {a.add(acc[0], a.add(a.mul(qr, xr), a.mul(qi, xi))),
                                   a.add(acc[1], a.sub(a.mul(qr, xi), a.mul(qi, xr)))};
                         });
    return s.loop(s.index(0), s.index(n), {z},
                  [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                    Arithmetic a(b, l);
                    Value qr = part(b, l, w[0], i, q, 0), qi = part(b, l, w[0], i, q, 1);
                    Value cr = dot[0], ci = dot[1];
                    Value xr = a.sub(part(b, l, w[0], i, c, 0), a.sub(a.mul(cr, qr), a.mul(ci, qi)));
                    Value xi = a.sub(part(b, l, w[0], i, c, 1), a.add(a.mul(cr, qi), a.mul(ci, qr)));
                    return {put(b, l, xi, put(b, l, xr, w[0], i, c, 0), i, c, 1)};
                  })[0];
  }

  /// z_c * scale.
  Value scale(OpBuilder &b, Location loc, Value z, Value c, Value factor) const {
    Scalars s(b, loc);
    return s.loop(s.index(0), s.index(n), {z},
                  [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                    Arithmetic a(b, l);
                    Value re = a.mul(part(b, l, w[0], i, c, 0), factor);
                    Value im = a.mul(part(b, l, w[0], i, c, 1), factor);
                    return {put(b, l, im, put(b, l, re, w[0], i, c, 0), i, c, 1)};
                  })[0];
  }

private:
  int64_t n;
  Type element;
};

/// `z` with each column c for which `selected(c)` holds updated by `update`.
Value forColumns(OpBuilder &b, Location loc, Value z, int64_t count,
                 function_ref<Value(OpBuilder &, Location, Value)> selected,
                 function_ref<Value(OpBuilder &, Location, Value, Value)> update) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(count), {z},
                [&](OpBuilder &b, Location l, Value c, ValueRange w) -> Carried {
                  auto branch = b.create<scf::IfOp>(
                      l, selected(b, l, c),
                      [&](OpBuilder &b, Location l) {
                        b.create<scf::YieldOp>(l, update(b, l, w[0], c));
                      },
                      [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, w[0]); });
                  return {branch.getResult(0)};
                })[0];
}

struct HermitianEigenvectorsLowering : OpConversionPattern<HermitianEigenvectorsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HermitianEigenvectorsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    Value vectors = adaptor.getSelf();
    auto type = cast<RankedTensorType>(vectors.getType());
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1) / 2;
    Columns cols(n, element);
    auto outType = cast<RankedTensorType>(op.getType());
    auto workType = RankedTensorType::get({n, 2 * n, 2}, element);
    auto takenType = RankedTensorType::get({2 * n}, element);
    Carried init{s.zeros(outType), s.fresh(workType), s.fresh(takenType)};
    Carried done = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Scalars s(b, l);
          Value zero = s.number(element, 0.0), one = s.number(element, 1.0);
          // The working columns z_c = u + iv, none taken.
          Value z = s.loop(s.index(0), s.index(n), {c[1]},
                           [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                             Scalars s(b, l);
                             Value below = Arithmetic(b, l).plus(i, n);
                             return {s.loop(
                                 s.index(0), s.index(2 * n), {w[0]},
                                 [&](OpBuilder &b, Location l, Value col, ValueRange v) -> Carried {
                                   Value re = Scalars::at(b, l, vectors, {m, i, col});
                                   Value im = Scalars::at(b, l, vectors, {m, below, col});
                                   return {cols.put(b, l, im, cols.put(b, l, re, v[0], i, col, 0),
                                                    i, col, 1)};
                                 })[0]};
                           })[0];
          Value taken = b.create<linalg::FillOp>(l, zero, c[2]).getResult(0);
          auto isTaken = [&](OpBuilder &b, Location l, Value t, Value col) {
            return Arithmetic(b, l).gt(Scalars::at(b, l, t, {col}), zero);
          };
          Carried steps = s.loop(
              s.index(0), s.index(n), {z, taken},
              [&](OpBuilder &b, Location l, Value, ValueRange u) -> Carried {
                Scalars s(b, l);
                Arithmetic a(b, l);
                Value work = u[0], t = u[1];
                // The column not taken with the most left; a NaN one
                // first (as +inf), so that a taken column is never picked
                // and a NaN input gives NaN vectors, not zeros.
                Value pivot = bestIndex(
                    b, l, s.index(0), s.index(2 * n), s.index(0), s.number(element, -1.0),
                    arith::CmpFPredicate::OGT, [&](OpBuilder &b, Location l, Value col) {
                      Arithmetic a(b, l);
                      Value left = cols.norm2(b, l, work, col);
                      Value nan = a.cmp(arith::CmpFPredicate::UNO, left, left);
                      Value inf = Scalars(b, l).number(element, std::numeric_limits<double>::infinity());
                      return a.select(isTaken(b, l, t, col), Scalars(b, l).number(element, -1.0),
                                      a.select(nan, inf, left));
                    }).first;
                // Orthogonal once more to those taken, then normalised.
                work = forColumns(
                    b, l, work, 2 * n,
                    [&](OpBuilder &b, Location l, Value col) { return isTaken(b, l, t, col); },
                    [&](OpBuilder &b, Location l, Value w, Value col) {
                      return cols.project(b, l, w, col, pivot);
                    });
                Value norm2 = cols.norm2(b, l, work, pivot);
                Value factor = a.select(a.gt(norm2, zero), a.div(one, a.sqrt(norm2)), zero);
                work = cols.scale(b, l, work, pivot, factor);
                t = Scalars::put(b, l, one, t, {pivot});
                // Projected out of every column not taken.
                work = forColumns(
                    b, l, work, 2 * n,
                    [&](OpBuilder &b, Location l, Value col) {
                      return Arithmetic(b, l).negate(isTaken(b, l, t, col));
                    },
                    [&](OpBuilder &b, Location l, Value w, Value col) {
                      return cols.project(b, l, w, pivot, col);
                    });
                return {work, t};
              });
          // The taken columns, in column (eigenvalue) order.
          Carried written = s.loop(
              s.index(0), s.index(2 * n), {c[0], s.index(0)},
              [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
                auto branch = b.create<scf::IfOp>(
                    l, isTaken(b, l, steps[1], col),
                    [&](OpBuilder &b, Location l) {
                      Scalars s(b, l);
                      Value out = s.loop(
                          s.index(0), s.index(n), {u[0]},
                          [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                            Value re = cols.part(b, l, steps[0], i, col, 0);
                            Value im = cols.part(b, l, steps[0], i, col, 1);
                            Value zeroIndex = b.create<arith::ConstantIndexOp>(l, 0);
                            Value oneIndex = b.create<arith::ConstantIndexOp>(l, 1);
                            Value x = Scalars::put(b, l, re, w[0], {m, i, u[1], zeroIndex});
                            return {Scalars::put(b, l, im, x, {m, i, u[1], oneIndex})};
                          })[0];
                      b.create<scf::YieldOp>(l, ValueRange{out, Arithmetic(b, l).plus(u[1], 1)});
                    },
                    [&](OpBuilder &b, Location l) {
                      b.create<scf::YieldOp>(l, ValueRange{u[0], u[1]});
                    });
                return {branch.getResult(0), branch.getResult(1)};
              });
          return {written[0], steps[0], steps[1]};
        });
    rewriter.replaceOp(op, done[0]);
    return success();
  }
};

} // namespace

void kiln::aten::populateHermitianEigenvectorPatterns(RewritePatternSet &patterns) {
  patterns.add<HermitianEigenvectorsLowering>(patterns.getContext());
}
