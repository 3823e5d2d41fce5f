//===- ComplexSingularVectors.cpp - complex singular vectors --------------===//
//
// This file implements the lowering of aten.complex_singular_vectors: for
// each matrix of the batch, the real embedding's singular vector pairs
// (p, q) as complex columns (u; v) = (p_top + i p_bottom; q_top +
// i q_bottom) of one working tensor (m + n rows), then three passes of
// complex Gram-Schmidt with column pivoting (ComplexGramSchmidt.h):
//
// 1. Over all m + n rows, on the pairs whose value is over the tolerance
//    max(m, n) eps s_max, as many steps as A has such values: u and v get
//    the same coefficients, so A v = s u holds for the vectors taken (in a
//    block of equal values A^H / s maps its u's isometrically onto its v's,
//    so they stay orthonormal together). Their u and v parts are then
//    normalised apart.
// 2. Over the u rows, every column not taken a candidate (once its taken
//    columns are projected out): U's columns left (values at or under the
//    tolerance, and those past n of complete vectors), the pairs' first.
// 3. The same over the v rows for V's columns left, the columns pass 2
//    took first, so that a small value's u and v come from one pair.
//
// Below the tolerance u and v are chosen apart: A v and s u are both at
// most about the tolerance there. Taken columns are written in column
// order, pass 1's first, so columns j of U and V belong to s_j.
//
//===----------------------------------------------------------------------===//
#include "ComplexGramSchmidt.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Transforms/DialectConversion.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// Marks of the passes in a column's state.
constexpr double kTogether = 1.0, kApart = 2.0;

/// `into` (columns) with each column's state `markOf(col)`.
Value markColumns(OpBuilder &b, Location loc, Value into, int64_t columns,
                  function_ref<Value(OpBuilder &, Location, Value)> markOf) {
  Scalars s(b, loc);
  return s.loop(s.index(0), s.index(columns), {into},
                [&](OpBuilder &b, Location l, Value col, ValueRange t) -> Carried {
                  return {Scalars::put(b, l, markOf(b, l, col), t[0], {col})};
                })[0];
}

struct ComplexSingularVectorsLowering : OpConversionPattern<ComplexSingularVectorsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ComplexSingularVectorsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    Value u = adaptor.getU(), values = adaptor.getS(), v = adaptor.getV();
    auto uType = cast<RankedTensorType>(u.getType());
    Type element = uType.getElementType();
    const int64_t batch = uType.getDimSize(0), m = uType.getDimSize(1) / 2;
    const int64_t n = cast<RankedTensorType>(v.getType()).getDimSize(1) / 2;
    // The embedding's columns: 2n, or 2m for complete vectors.
    const int64_t columns = uType.getDimSize(2), k = columns / 2;
    ComplexColumns stacked(0, m + n, element);
    ComplexColumns left = stacked.rows(0, m), right = stacked.rows(m, m + n);
    auto leftType = cast<RankedTensorType>(op.getLeft().getType());
    auto rightType = cast<RankedTensorType>(op.getRight().getType());
    auto workType = RankedTensorType::get({m + n, columns, 2}, element);
    auto stateType = RankedTensorType::get({columns}, element);
    Carried init{s.zeros(leftType), s.zeros(rightType)};
    Carried done = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value mat, ValueRange c) -> Carried {
          Scalars s(b, l);
          Arithmetic a(b, l);
          Value work = loadEmbeddingColumns(b, l, s.zeros(workType), u, mat, 0, m, columns);
          work = loadEmbeddingColumns(b, l, work, v, mat, m, n, 2 * n);
          // The tolerance and how many of A's n values are over it.
          Value largest = Scalars::at(b, l, values, {mat, s.index(0)});
          Value tolerance =
              a.mul(a.mul(largest, epsilonOf(b, l, element)),
                    s.number(element, static_cast<double>(std::max(m, n))));
          auto over = [&](OpBuilder &b, Location l, Value col) {
            Arithmetic a(b, l);
            Value inRange = a.icmp(arith::CmpIPredicate::slt, col, a.index(2 * n));
            Value clamped = a.smallest(col, a.index(2 * n - 1));
            return a.both(inRange, a.gt(Scalars::at(b, l, values, {mat, clamped}), tolerance));
          };
          Value together = s.loop(
              s.index(0), s.index(n), {s.index(0)},
              [&](OpBuilder &b, Location l, Value j, ValueRange count) -> Carried {
                Arithmetic a(b, l);
                Value col = a.plus(j, j);
                return {a.select(over(b, l, col), a.plus(count[0], 1), count[0])};
              })[0];
          // Pass 1: the pairs over the tolerance, u and v together.
          Value state = markColumns(b, l, s.fresh(stateType), columns,
                                    [&](OpBuilder &b, Location l, Value col) {
                                      Scalars s(b, l);
                                      return Arithmetic(b, l).select(over(b, l, col),
                                                                     s.number(element, 0.0),
                                                                     s.number(element, -1.0));
                                    });
          std::tie(work, state) =
              pivotedGramSchmidt(b, l, stacked, work, state, columns, together, kTogether);
          work = normaliseTaken(b, l, right, normaliseTaken(b, l, left, work, state, columns),
                                state, columns);
          // Every column not taken a candidate for the passes apart (V's
          // only within the 2n that have a v part).
          auto reopened = [&](int64_t within) {
            return markColumns(b, l, s.fresh(stateType), columns,
                               [&](OpBuilder &b, Location l, Value col) {
                                 Arithmetic a(b, l);
                                 Scalars s(b, l);
                                 Value inside =
                                     a.icmp(arith::CmpIPredicate::slt, col, a.index(within));
                                 return a.select(isTaken(b, l, state, col),
                                                 s.number(element, kTogether),
                                                 a.select(inside, s.number(element, 0.0),
                                                          s.number(element, -1.0)));
                               });
          };
          Value leftState = reopened(columns), rightState = reopened(2 * n);
          // Passes 2 and 3: U's and V's columns left, apart. U's takes the
          // pairs of values (columns < 2n) before a complete U's columns
          // past them, and V's the pairs U's took, while they have over
          // half left: a small value that the SVD still has accurately
          // (A graded, say) keeps u and v of one pair, and their phase.
          work = projectOutTaken(b, l, left, work, leftState, columns);
          std::tie(work, leftState) = pivotedGramSchmidt(
              b, l, left, work, leftState, columns, a.minus(s.index(k), together), kApart,
              [&](OpBuilder &b, Location l, Value col) {
                Arithmetic a(b, l);
                return a.icmp(arith::CmpIPredicate::slt, col, a.index(2 * n));
              });
          work = projectOutTaken(b, l, right, work, rightState, columns);
          std::tie(work, rightState) = pivotedGramSchmidt(
              b, l, right, work, rightState, columns, a.minus(s.index(n), together), kApart,
              [&](OpBuilder &b, Location l, Value col) {
                Scalars s(b, l);
                return Arithmetic(b, l).eq(Scalars::at(b, l, leftState, {col}),
                                           s.number(element, kApart));
              });
          // Each result: pass 1's columns, then its own pass's.
          auto written = [&](Value out, Value taken, int64_t first, int64_t rows) {
            auto [result, at] = writeMarked(b, l, work, taken, columns, kTogether, out, mat,
                                            s.index(0), first, rows);
            return writeMarked(b, l, work, taken, columns, kApart, result, mat, at, first, rows)
                .first;
          };
          return {written(c[0], leftState, 0, m), written(c[1], rightState, m, n)};
        });
    rewriter.replaceOp(op, {done[0], done[1]});
    return success();
  }
};

} // namespace

void kiln::aten::populateComplexSingularVectorPatterns(RewritePatternSet &patterns) {
  patterns.add<ComplexSingularVectorsLowering>(patterns.getContext());
}
