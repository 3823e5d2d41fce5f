//===- Sorting.cpp - aten.sort to linalg ----------------------------------===//
//
// This file implements a stable sort along one dimension (moved last by a
// transpose when it is another), two ways:
// - rows of up to kQuadraticSortLimit elements: two quadratic
//   linalg.generic reductions, each element's rank (how many elements
//   precede it), then, per output position, the element of that rank. They
//   vectorise and run in parallel over rows, the common case of
//   topk/argsort over a model's short rows;
// - longer rows: a bottom-up merge sort in scf loops, O(n log n) per row,
//   ping-ponging between the values/indices and a scratch pair.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// a sorts before b (ascending, NaN largest; `descending` flips).
Value before(OpBuilder &b, Location l, Value a, Value c, bool descending) {
  if (descending)
    std::swap(a, c);
  if (isa<FloatType>(a.getType())) {
    Value aNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, a, a);
    Value cNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, c, c);
    Value less = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, a, c);
    Value notANan = b.create<arith::XOrIOp>(
        l, aNan, b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
    return b.create<arith::AndIOp>(l, notANan, b.create<arith::OrIOp>(l, cNan, less));
  }
  return b.create<arith::CmpIOp>(
      l, a.getType().isInteger(1) ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt,
      a, c);
}

/// Rows longer than this sort by merging; shorter ones by rank counting.
constexpr int64_t kQuadraticSortLimit = 256;

/// (values, indices) of `x` sorted along its last dim by counting ranks.
std::pair<Value, Value> rankCountingSort(OpBuilder &rewriter, Location loc,
                                         Value x, bool descending) {
  MLIRContext *ctx = rewriter.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), last = rank - 1;
  Type i64 = rewriter.getI64Type();
  auto indexType = RankedTensorType::get(type.getShape(), i64);
  // Loops (lead..., i, j): maps reading x at i, at j, and the output at i.
  SmallVector<AffineExpr> atI, atJ;
  for (int64_t d = 0; d < last; ++d) {
    atI.push_back(getAffineDimExpr(d, ctx));
    atJ.push_back(getAffineDimExpr(d, ctx));
  }
  atI.push_back(getAffineDimExpr(last, ctx));
  atJ.push_back(getAffineDimExpr(rank, ctx));
  AffineMap mapI = AffineMap::get(rank + 1, 0, atI, ctx);
  AffineMap mapJ = AffineMap::get(rank + 1, 0, atJ, ctx);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  // rank[i] = #{j : x[j] before x[i], or equal and j < i}.
  Value ranks =
      rewriter
          .create<linalg::GenericOp>(
              loc, indexType, ValueRange{x, x},
              buildFilled(rewriter, loc, indexType, 0.0),
              ArrayRef<AffineMap>{mapI, mapJ, mapI}, iterators,
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value xi = args[0], xj = args[1];
                Value jFirst = before(b, l, xj, xi, descending);
                Value iFirst = before(b, l, xi, xj, descending);
                Value tie = b.create<arith::XOrIOp>(
                    l, b.create<arith::OrIOp>(l, jFirst, iFirst),
                    b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
                Value jLower = b.create<arith::CmpIOp>(
                    l, arith::CmpIPredicate::ult, b.create<linalg::IndexOp>(l, rank),
                    b.create<linalg::IndexOp>(l, last));
                Value counts = b.create<arith::OrIOp>(
                    l, jFirst, b.create<arith::AndIOp>(l, tie, jLower));
                Value one = b.create<arith::ExtUIOp>(l, i64, counts);
                b.create<linalg::YieldOp>(
                    l, b.create<arith::AddIOp>(l, args[2], one).getResult());
              })
          .getResult(0);
  // out[p] = x[i] where rank[i] == p (loops (lead..., p, i)).
  Value valuesInit = buildFilled(rewriter, loc, type, 0.0);
  auto generic = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{type, indexType}, ValueRange{x, ranks},
      ValueRange{valuesInit, buildFilled(rewriter, loc, indexType, 0.0)},
      ArrayRef<AffineMap>{mapJ, mapJ, mapI, mapI}, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value p = b.create<arith::IndexCastOp>(l, i64,
                                               b.create<linalg::IndexOp>(l, last));
        Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, args[1], p);
        Value i = b.create<arith::IndexCastOp>(l, i64,
                                               b.create<linalg::IndexOp>(l, rank));
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::SelectOp>(l, hit, args[0], args[2]),
                          b.create<arith::SelectOp>(l, hit, i, args[3])});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// The merge sort's working set for one row: values and indices read from
/// (`fromValues`, `fromIndices`) and written to (`toValues`, `toIndices`),
/// all of shape (rows, n).
struct MergeStep {
  Value row, fromValues, fromIndices, toValues, toIndices;
};

/// One bottom-up pass over row `step.row`: merges each pair of sorted runs
/// of `width` elements of the "from" tensors into the "to" tensors, taking
/// from the left run unless the right's head sorts strictly before it (so
/// the merge is stable). Returns the written (values, indices).
std::pair<Value, Value> mergePass(OpBuilder &b, Location l, const MergeStep &step,
                                  Value width, int64_t n, bool descending) {
  auto cst = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); };
  Value zero = cst(0), one = cst(1), size = cst(n), lastIndex = cst(n - 1);
  Value runStep = b.create<arith::MulIOp>(l, width, cst(2));
  auto runs = b.create<scf::ForOp>(
      l, zero, size, runStep, ValueRange{step.toValues, step.toIndices},
      [&](OpBuilder &b, Location l, Value lo, ValueRange into) {
        Value mid = b.create<arith::MinSIOp>(l, b.create<arith::AddIOp>(l, lo, width), size);
        Value hi = b.create<arith::MinSIOp>(l, b.create<arith::AddIOp>(l, lo, runStep), size);
        auto merge = b.create<scf::ForOp>(
            l, lo, hi, one, ValueRange{lo, mid, into[0], into[1]},
            [&](OpBuilder &b, Location l, Value k, ValueRange state) {
              Value i = state[0], j = state[1];
              Value iAt = b.create<arith::MinSIOp>(l, i, lastIndex);
              Value jAt = b.create<arith::MinSIOp>(l, j, lastIndex);
              auto read = [&](Value from, Value at) -> Value {
                return b.create<tensor::ExtractOp>(l, from, ValueRange{step.row, at});
              };
              Value left = read(step.fromValues, iAt), right = read(step.fromValues, jAt);
              Value leftLive = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, i, mid);
              Value rightLive = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, j, hi);
              Value rightFirst = b.create<arith::AndIOp>(
                  l, rightLive, before(b, l, right, left, descending));
              Value takeLeft = b.create<arith::AndIOp>(
                  l, leftLive,
                  b.create<arith::XOrIOp>(
                      l, rightFirst, b.create<arith::ConstantOp>(l, b.getBoolAttr(true))));
              Value value = b.create<arith::SelectOp>(l, takeLeft, left, right);
              Value index = b.create<arith::SelectOp>(l, takeLeft,
                                                      read(step.fromIndices, iAt),
                                                      read(step.fromIndices, jAt));
              Value values = b.create<tensor::InsertOp>(l, value, state[2],
                                                        ValueRange{step.row, k});
              Value indices = b.create<tensor::InsertOp>(l, index, state[3],
                                                         ValueRange{step.row, k});
              Value nextI = b.create<arith::SelectOp>(
                  l, takeLeft, b.create<arith::AddIOp>(l, i, one), i);
              Value nextJ = b.create<arith::SelectOp>(
                  l, takeLeft, j, b.create<arith::AddIOp>(l, j, one));
              b.create<scf::YieldOp>(l, ValueRange{nextI, nextJ, values, indices});
            });
        b.create<scf::YieldOp>(l, ValueRange{merge.getResult(2), merge.getResult(3)});
      });
  return {runs.getResult(0), runs.getResult(1)};
}

/// (values, indices) of `x` sorted along its last dim by a bottom-up merge
/// sort per row. Passes go in pairs (values -> scratch at width w, scratch
/// -> values at 2w) so each loop yields its tensors where it took them and
/// bufferizes in place; a pair's second pass past the row length only copies.
std::pair<Value, Value> mergeSort(OpBuilder &b, Location l, Value x,
                                  bool descending) {
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t n = shape.back(), rows = type.getNumElements() / n;
  auto rowsType = RankedTensorType::get({rows, n}, type.getElementType());
  auto indexRowsType = RankedTensorType::get({rows, n}, b.getI64Type());
  Value values = buildReshape(b, l, x, rowsType);
  Value indices = buildElementwise(
      b, l, indexRowsType, ValueRange{},
      [](OpBuilder &b, Location l, ValueRange) -> Value {
        return b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                            b.create<linalg::IndexOp>(l, 1));
      });
  // Scratch from alloc_tensor, not tensor.empty: CSE would fold two equal
  // empties (and the iota's) into one value, and the loops below would then
  // write the indices and the scratch through one buffer.
  Value scratchValues =
      b.create<bufferization::AllocTensorOp>(l, rowsType, ValueRange{});
  Value scratchIndices =
      b.create<bufferization::AllocTensorOp>(l, indexRowsType, ValueRange{});
  int64_t pairs = (llvm::Log2_64_Ceil(n) + 1) / 2;
  auto cst = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); };
  auto overRows = b.create<scf::ForOp>(
      l, cst(0), cst(rows), cst(1),
      ValueRange{values, indices, scratchValues, scratchIndices},
      [&](OpBuilder &b, Location l, Value row, ValueRange rowState) {
        auto overPairs = b.create<scf::ForOp>(
            l, cst(0), cst(pairs), cst(1), rowState,
            [&](OpBuilder &b, Location l, Value pair, ValueRange s) {
              // width = 4^pair
              Value width = b.create<arith::ShLIOp>(
                  l, cst(1), b.create<arith::MulIOp>(l, pair, cst(2)));
              auto [toValues, toIndices] = mergePass(
                  b, l, MergeStep{row, s[0], s[1], s[2], s[3]}, width, n, descending);
              Value doubled = b.create<arith::MulIOp>(l, width, cst(2));
              auto [backValues, backIndices] =
                  mergePass(b, l, MergeStep{row, toValues, toIndices, s[0], s[1]},
                            doubled, n, descending);
              b.create<scf::YieldOp>(
                  l, ValueRange{backValues, backIndices, toValues, toIndices});
            });
        b.create<scf::YieldOp>(l, overPairs.getResults());
      });
  auto indexType = RankedTensorType::get(shape, b.getI64Type());
  return {buildReshape(b, l, overRows.getResult(0), type),
          buildReshape(b, l, overRows.getResult(1), indexType)};
}

/// `x` with dims `a` and `b` swapped (itself when they are one dim).
Value swapDims(OpBuilder &b, Location loc, Value x, int64_t first, int64_t second) {
  if (first == second)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> perm(type.getRank()), shape(type.getShape());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[first], perm[second]);
  std::swap(shape[first], shape[second]);
  Value init = b.create<tensor::EmptyOp>(loc, shape, type.getElementType());
  return b.create<linalg::TransposeOp>(loc, x, init, perm)->getResult(0);
}

struct SortLowering : OpConversionPattern<SortOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SortOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getRank() == 0) { // its own sort, index 0
      rewriter.replaceOp(op, ValueRange{x, buildFilled(rewriter, loc,
                                                       op.getIndices().getType(), 0.0)});
      return success();
    }
    int64_t dim = op.getDim(), last = type.getRank() - 1;
    bool descending = op.getDescending();
    Value moved = swapDims(rewriter, loc, x, dim, last);
    auto movedType = cast<RankedTensorType>(moved.getType());
    auto [values, indices] =
        movedType.getShape().back() > kQuadraticSortLimit && movedType.getNumElements() > 0
            ? mergeSort(rewriter, loc, moved, descending)
            : rankCountingSort(rewriter, loc, moved, descending);
    rewriter.replaceOp(op, ValueRange{swapDims(rewriter, loc, values, dim, last),
                                      swapDims(rewriter, loc, indices, dim, last)});
    return success();
  }
};

} // namespace

void kiln::aten::populateSortingPatterns(RewritePatternSet &patterns) {
  patterns.add<SortLowering>(patterns.getContext());
}
