//===- Jacobi.cpp - singular value decompositions by one-sided Jacobi -----===//
//
// This file implements the lowering of aten.svdvals and aten.svd to scf.for
// loops over each matrix of the batch, by one-sided (Hestenes) Jacobi
// rotations on A^T, whose rows are A's columns:
//
// - Each sweep rotates every pair of columns whose cosine exceeds sqrt(m)
//   eps (dgesvj's test) so that they become orthogonal, until a sweep
//   rotates none (at most 60 sweeps; Jacobi converges quadratically, a
//   handful is the rule), on the matrix divided by its largest |entry| (no
//   square overflows; the values are scaled back).
// - The singular values are the column norms; svd also applies each
//   rotation to V, so that the rotated matrix is A V, and U's column j is
//   its column j over that norm. The columns of U no singular value
//   defines (a column whose squared norm is below the smallest normal
//   number, and those past n for a complete U) complete it to an
//   orthonormal basis: the unit vector e_i with the least weight in the
//   columns so far (sum_c U[i, c]^2, so at least 1/m of it lies outside
//   their span), orthogonalised against them twice (Gram-Schmidt; twice
//   is enough) and normalised.
// - The values are sorted descending by a selection sort that moves each
//   vector with its value.
//
// The vectors (V, U and the rotated columns) are kept transposed, one per
// row, and transposed once at the end: the rotations, dot products and
// swaps then walk contiguous rows (LAPACK's column-major columns), which
// vectorise, where strided columns were gathers and scatters. A vector's
// sign is the rotations' choice and not LAPACK's; PyTorch leaves it
// unspecified. The code is O(m n^2) scalar work per sweep and its size
// does not grow with the matrix.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"
#include "MatrixLoops.h"
#include "ScalarLoops.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// The most Jacobi sweeps; each stops early once converged.
constexpr int64_t kMaxSweeps = 60;

/// The rotation (c, s) with t = sign(x) / (|x| + sqrt(x^2 + 1)), the
/// identity where `skip`.
std::pair<Value, Value> rotation(OpBuilder &b, Location l, Value x, Value skip) {
  Type element = x.getType();
  Value one = b.create<arith::ConstantOp>(l, element, b.getFloatAttr(element, 1.0));
  Value zero = b.create<arith::ConstantOp>(l, element, b.getFloatAttr(element, 0.0));
  Value root = b.create<math::SqrtOp>(
      l, b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, x), one));
  Value t = b.create<arith::DivFOp>(l, b.create<math::CopySignOp>(l, one, x),
                                    b.create<arith::AddFOp>(l, b.create<math::AbsFOp>(l, x), root));
  t = b.create<arith::SelectOp>(l, skip, zero, t);
  Value c = b.create<arith::DivFOp>(
      l, one, b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, t, t), one)));
  return {c, b.create<arith::MulFOp>(l, c, t)};
}

/// Up to kMaxSweeps runs of `sweep` over `state`, which returns the new
/// state and whether it has converged; none after it has.
Carried sweepUntilConverged(OpBuilder &b, Location loc, ValueRange state,
                            function_ref<Carried(OpBuilder &, Location, ValueRange)> sweep) {
  Scalars s(b, loc);
  SmallVector<Value> init(state);
  init.push_back(b.create<arith::ConstantOp>(loc, b.getBoolAttr(false)));
  Carried out = s.loop(
      s.index(0), s.index(kMaxSweeps), init,
      [&](OpBuilder &b, Location l, Value, ValueRange u) -> Carried {
        auto branch = b.create<scf::IfOp>(
            l, u.back(),
            [&](OpBuilder &tb, Location tl) { tb.create<scf::YieldOp>(tl, u); },
            [&](OpBuilder &eb, Location el) {
              eb.create<scf::YieldOp>(el, sweep(eb, el, u.drop_back()));
            });
        return Carried(branch.getResults());
      });
  out.pop_back();
  return out;
}

/// One-sided Jacobi on matrix m of `work` (N, n, rows), A's transpose, in
/// place: its rows are A's columns, so that the dot products and rotations
/// walk contiguous memory (LAPACK's columns). Row m of `values` gets the
/// singular values, descending, and (when `vectorsT`, the identity on
/// entry, is given) matrix m of vectorsT gets V^T, and work's rows move
/// with their values. Returns work, values and (when given) vectorsT;
/// work's rows are then (A V)^T scaled by 1 / max |A|.
Carried singularOne(OpBuilder &b, Location l, Value work, Value values, Value vectorsT, Value m,
                    int64_t rows, int64_t n) {
  Scalars s(b, l);
  Type element = cast<RankedTensorType>(work.getType()).getElementType();
  Value two = s.number(element, 2.0);
  Value rootRowsEps = b.create<arith::MulFOp>(
      l, epsilonOf(b, l, element), s.number(element, std::sqrt(static_cast<double>(rows))));
  auto [unit, divisor] = scaledToUnitMax(b, l, work, m, n, rows);
  Carried state{unit};
  if (vectorsT)
    state.push_back(vectorsT);
  Carried converged = sweepUntilConverged(
      b, l, state, [&](OpBuilder &b, Location l, ValueRange u) -> Carried {
        Carried init(u);
        init.push_back(b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
        return forEachPair(
            b, l, n, init, [&](OpBuilder &b, Location l, Value p, Value q, ValueRange w) -> Carried {
              Value t = w[0];
              Value alpha = rowDot(b, l, t, m, p, p);
              Value beta = rowDot(b, l, t, m, q, q);
              Value gamma = rowDot(b, l, t, m, p, q);
              // dgesvj's test: |gamma| > sqrt(m) eps |p| |q| (the norms
              // apart, so that their product cannot overflow).
              Value bound = b.create<arith::MulFOp>(
                  l, b.create<arith::MulFOp>(l, rootRowsEps, b.create<math::SqrtOp>(l, alpha)),
                  b.create<math::SqrtOp>(l, beta));
              Value rotate = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT,
                                                     b.create<math::AbsFOp>(l, gamma), bound);
              Value skip = b.create<arith::XOrIOp>(
                  l, rotate, b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
              Value zeta = b.create<arith::DivFOp>(l, b.create<arith::SubFOp>(l, beta, alpha),
                                                   b.create<arith::MulFOp>(l, two, gamma));
              auto [cos, sin] = rotation(b, l, zeta, skip);
              Carried next{rotateRows(b, l, t, m, p, q, cos, sin)};
              if (w.size() > 2) // (V J)^T
                next.push_back(rotateRows(b, l, w[1], m, p, q, cos, sin));
              next.push_back(b.create<arith::AndIOp>(l, w.back(), skip));
              return next;
            });
      });
  Value norms = s.loop(s.index(0), s.index(n), {values},
                       [&](OpBuilder &b, Location l, Value j, ValueRange u) -> Carried {
                         Value squares = rowDot(b, l, converged[0], m, j, j);
                         Value norm =
                             b.create<arith::MulFOp>(l, b.create<math::SqrtOp>(l, squares), divisor);
                         return {Scalars::put(b, l, norm, u[0], {m, j})};
                       })[0];
  Carried moved;
  if (vectorsT)
    moved = {converged[1], converged[0]};
  Carried sorted =
      sortWithVectors(b, l, norms, moved, m, n, /*ascending=*/false);
  if (!vectorsT)
    return {converged[0], sorted[0]};
  return {sorted[2], sorted[0], sorted[1]};
}

/// Row j of matrix m of `u` (N, k, rows) made orthogonal to the other rows
/// (which are orthonormal or zero), twice.
Value orthogonalise(OpBuilder &b, Location loc, Value u, Value m, Value j, int64_t rows, int64_t k) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(u.getType()).getElementType();
  Value zero = s.number(element, 0.0);
  for (int pass = 0; pass < 2; ++pass)
    u = s.loop(s.index(0), s.index(k), {u},
               [&](OpBuilder &b, Location l, Value c, ValueRange w) -> Carried {
                 Scalars s(b, l);
                 Value dot = rowDot(b, l, w[0], m, c, j);
                 Value other = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, c, j);
                 Value d = b.create<arith::SelectOp>(l, other, dot, zero);
                 return s.loop(s.index(0), s.index(rows), w,
                               [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                                 Value x = b.create<arith::SubFOp>(
                                     l, Scalars::at(b, l, t[0], {m, j, i}),
                                     b.create<arith::MulFOp>(l, d, Scalars::at(b, l, t[0], {m, c, i})));
                                 return {Scalars::put(b, l, x, t[0], {m, j, i})};
                               });
               })[0];
  return u;
}

/// Row j of matrix m of `u` (N, k, rows) divided by `norm`.
Value scaleRow(OpBuilder &b, Location loc, Value u, Value m, Value j, int64_t rows, Value norm) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(rows), {u},
                [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                  Value x = b.create<arith::DivFOp>(l, Scalars::at(b, l, t[0], {m, j, i}), norm);
                  return {Scalars::put(b, l, x, t[0], {m, j, i})};
                })[0];
}

/// Matrix m of `ut` (N, k, rows, zeros on entry) filled with U^T, the left
/// singular vectors of `work` ((A V)^T scaled, its rows in the values'
/// order) in its rows: each row of work over its norm, then the rows no
/// value defines completed to an orthonormal basis.
Value leftVectors(OpBuilder &b, Location loc, Value work, Value ut, Value m, int64_t rows,
                  int64_t n, int64_t k) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(ut.getType()).getElementType();
  Value zero = s.number(element, 0.0), one = s.number(element, 1.0);
  Value smallest = s.number(element, element.isF32()
                                         ? double(std::numeric_limits<float>::min())
                                         : std::numeric_limits<double>::min());
  ut = s.loop(s.index(0), s.index(n), {ut},
              [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
                Value squares = rowDot(b, l, work, m, j, j);
                // Unordered: a NaN row stays NaN, as eager's would.
                Value defined =
                    b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UGE, squares, smallest);
                Value norm = b.create<math::SqrtOp>(l, squares);
                Scalars s(b, l);
                return s.loop(s.index(0), s.index(rows), w,
                              [&](OpBuilder &b, Location l, Value i, ValueRange t) -> Carried {
                                Value x = b.create<arith::DivFOp>(
                                    l, Scalars::at(b, l, work, {m, j, i}), norm);
                                x = b.create<arith::SelectOp>(l, defined, x, zero);
                                return {Scalars::put(b, l, x, t[0], {m, j, i})};
                              });
              })[0];
  return s.loop(
      s.index(0), s.index(k), {ut}, [&](OpBuilder &b, Location l, Value j, ValueRange w) -> Carried {
        Value empty = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                              rowDot(b, l, w[0], m, j, j), zero);
        auto fill = b.create<scf::IfOp>(
            l, empty,
            [&](OpBuilder &b, Location l) {
              Scalars s(b, l);
              // The unit vector with the least weight in the rows so far.
              Value lightest =
                  bestIndex(b, l, s.index(0), s.index(rows), s.index(0),
                            s.number(element, std::numeric_limits<double>::infinity()),
                            arith::CmpFPredicate::OLT,
                            [&](OpBuilder &b, Location l, Value i) -> Value {
                              Scalars s(b, l);
                              return s.loop(s.index(0), s.index(k), {zero},
                                            [&](OpBuilder &b, Location l, Value row,
                                                ValueRange acc) -> Carried {
                                              Value x = Scalars::at(b, l, w[0], {m, row, i});
                                              return {b.create<arith::AddFOp>(
                                                  l, acc[0], b.create<arith::MulFOp>(l, x, x))};
                                            })[0];
                            })
                      .first;
              Value t = Scalars::put(b, l, one, w[0], {m, j, lightest});
              t = orthogonalise(b, l, t, m, j, rows, k);
              Value norm = b.create<math::SqrtOp>(l, rowDot(b, l, t, m, j, j));
              b.create<scf::YieldOp>(l, scaleRow(b, l, t, m, j, rows, norm));
            },
            [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, w[0]); });
        return Carried(fill.getResults());
      })[0];
}

template <typename Op>
struct SingularLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  static constexpr bool kVectors = std::is_same_v<Op, SvdOp>;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    auto type = cast<RankedTensorType>(adaptor.getSelf().getType());
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), rows = type.getDimSize(1), n = type.getDimSize(2);
    // A^T: its rows are A's columns.
    Carried init{transposedBatch(b, loc, adaptor.getSelf()),
                 s.fresh(RankedTensorType::get({batch, n}, element))};
    int64_t k = n;
    if constexpr (kVectors) {
      k = op.getComplete() ? rows : n;
      init.push_back(s.fresh(RankedTensorType::get({batch, n, n}, element)));
      init.push_back(s.zeros(RankedTensorType::get({batch, k, rows}, element)));
    }
    Carried out = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Value vectorsT = kVectors ? identityColumns(b, l, c[2], m) : Value();
          Carried one = singularOne(b, l, c[0], c[1], vectorsT, m, rows, n);
          if (kVectors)
            one.push_back(leftVectors(b, l, one[0], c[3], m, rows, n, k));
          return one;
        });
    if (kVectors)
      rewriter.replaceOp(op, {transposedBatch(b, loc, out[3]), out[1],
                              transposedBatch(b, loc, out[2])});
    else
      rewriter.replaceOp(op, out[1]);
    return success();
  }
};

} // namespace

void kiln::aten::populateJacobiPatterns(RewritePatternSet &patterns) {
  patterns.add<SingularLowering<SvdvalsOp>, SingularLowering<SvdOp>>(patterns.getContext());
}
