//===- DecomposeUnique.cpp - aten.unique(_dim) as sorts and two masks -----===//
//
// This file implements the decomposition of aten.unique and
// aten.unique_dim over N rows: self's n elements (flattened) for the
// first, self's slices along `dim` (moved to the front) for the second.
// Each row has M elements (1 for aten.unique):
//   order         = the rows' lexicographic order (NaN last at each element
//                   position); none when consecutive. Rows of up to
//                   kRadixLimit elements: a stable sort by each of the M
//                   element positions, the last first, each applied to the
//                   order so far. Longer rows: prefix doubling. Each
//                   element becomes its dense rank in its position's
//                   column (one sort of all M columns at once; a NaN gets a
//                   rank of its own); then, ceil(log2 M) - 1 times, the
//                   ranks of neighbouring positions 2j and 2j + 1 pair up
//                   into one key (rank_2j * N + rank_2j+1) and the keys are
//                   ranked again; one last pairing leaves one key per row,
//                   whose stable sort is the order. 1 + ceil(log2 M) sorts
//                   in all, against M for the radix.
//   sorted        = the rows in that order
//   first[i]      = i == 0 or row i differs from row i - 1 in some element
//                   (NaN != NaN: a row holding a NaN starts a value of its
//                   own, as in eager)
//   values        = sorted where first (a boolean mask: the data-dependent
//                   count)
//   slot[i]       = (cumulative sum of first)[i] - 1, the value sorted[i] is
//   inverse       = slot scattered back to self's order through `order`
//   counts        = ones summed into their slots, cut to the count by a
//                   mask of the slots below it
// Every op has a static shape but the two boolean masks (and the permute
// that moves aten.unique_dim's values back into place).
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// The three results of a unique over the rows of a (N, ...) tensor.
struct UniqueRows {
  Value values;  // (count, ...): the distinct rows
  Value inverse; // (N): each row's position in values
  Value counts;  // (count)
};

class UniqueRowsBuilder {
public:
  UniqueRowsBuilder(PatternRewriter &r, Location loc) : r(r), loc(loc), b(r, loc) {}

  /// The unique of `rows` (static, at least one element per row), whose
  /// values have type `valuesType` (rows' with a dynamic first dim) and
  /// counts `countsType`.
  UniqueRows build(Value rows, bool consecutive, Type valuesType, Type countsType) {
    RankedTensorType rowsType = typeOf(rows);
    n = rowsType.getDimSize(0);
    m = rowsType.getNumElements() / n;
    Value sorted = rows, order = b.positions({n});
    if (!consecutive) {
      if (m == 1) {
        // One element per row (any rank): one sort of the (n) keys.
        Value flat = keys(rows);
        auto sort = r.create<aten::SortOp>(loc, TypeRange{typeOf(flat), slotsType()}, flat,
                                           r.getI64IntegerAttr(0), r.getBoolAttr(false));
        sorted = b.view(sort.getValues(), rowsType.getShape());
        order = sort.getIndices();
      } else {
        order = m <= kRadixLimit ? radixOrder(keys(rows)) : doublingOrder(keys(rows));
        sorted = r.create<aten::IndexSelectOp>(loc, rowsType, rows, order,
                                               r.getI64IntegerAttr(0));
      }
    }
    Value first = runStarts(keys(sorted));
    Value values = r.create<aten::BooleanMaskOp>(loc, valuesType, sorted, first);
    auto [inverse, counts] = slotsAndCounts(first, order, countsType);
    return {values, inverse, counts};
  }

private:
  RankedTensorType slotsType() { return RankedTensorType::get({n}, r.getI64Type()); }

  /// Rows of more elements than this are ordered by prefix doubling.
  static constexpr int64_t kRadixLimit = 16;

  /// The order that sorts the rows of `keys` (n, m) lexicographically: a
  /// least-significant-first radix of m stable sorts.
  Value radixOrder(Value keys) {
    RankedTensorType keysType = typeOf(keys);
    auto columnType = RankedTensorType::get({n}, keysType.getElementType());
    Value order; // null until the first sort: the identity
    for (int64_t k = m - 1; k >= 0; --k) {
      Value column = r.create<aten::SliceOp>(
          loc, RankedTensorType::get({n, 1}, keysType.getElementType()), keys,
          r.getDenseI64ArrayAttr({0, k}), r.getDenseI64ArrayAttr({1, 1}));
      column = b.view(column, {n});
      if (order)
        column = r.create<aten::IndexSelectOp>(loc, columnType, column, order,
                                               r.getI64IntegerAttr(0));
      auto sort = r.create<aten::SortOp>(loc, TypeRange{columnType, slotsType()}, column,
                                         r.getI64IntegerAttr(0), r.getBoolAttr(false));
      order = order ? r.create<aten::IndexSelectOp>(loc, slotsType(), order, sort.getIndices(),
                                                    r.getI64IntegerAttr(0))
                    : sort.getIndices();
    }
    return order;
  }

  /// The rows as one key each when m == 1 (n), else as (n, m).
  Value keys(Value rows) { return m == 1 ? b.view(rows, {n}) : b.view(rows, {n, m}); }

  /// The order that sorts the rows of `keys` (n, m) lexicographically, by
  /// prefix doubling (see the file comment). It works on the transpose,
  /// (positions, n), so that every sort is along the last dim.
  Value doublingOrder(Value keys) {
    Value ranks = denseRanks(b.permute(keys, {1, 0}));
    while (typeOf(ranks).getDimSize(0) > 2)
      ranks = denseRanks(pairedRanks(ranks));
    Value key = b.view(pairedRanks(ranks), {n});
    auto sort = r.create<aten::SortOp>(loc, TypeRange{slotsType(), slotsType()}, key,
                                       r.getI64IntegerAttr(0), r.getBoolAttr(false));
    return sort.getIndices();
  }

  /// Each element of `columns` (w, n) as its dense rank within its row:
  /// 0 for the smallest value, equal values sharing one, each NaN one of
  /// its own after every number (w, n) of i64.
  Value denseRanks(Value columns) {
    Type i64 = r.getI64Type();
    RankedTensorType columnsType = typeOf(columns);
    auto ranksType = RankedTensorType::get(columnsType.getShape(), i64);
    auto sort = r.create<aten::SortOp>(loc, TypeRange{columnsType, ranksType}, columns,
                                       r.getI64IntegerAttr(1), r.getBoolAttr(false));
    Value starts = b.convert(startsAlong(sort.getValues(), 1), i64);
    Value rising = r.create<aten::CumsumOp>(loc, ranksType, starts, r.getI64IntegerAttr(1),
                                            r.getBoolAttr(false));
    Value sortedRanks = b.sub(i64, rising, b.constant(i64, 1.0));
    Value zeros = b.constant(DenseElementsAttr::get(ranksType, r.getI64IntegerAttr(0)));
    return r.create<aten::ScatterOp>(loc, ranksType, zeros, sort.getIndices(), sortedRanks,
                                     r.getI64IntegerAttr(1), r.getStringAttr("none"));
  }

  /// Ranks (w, n), each below n, paired by position: row j of the result
  /// (ceil(w / 2), n) is ranks[2j] * n + ranks[2j + 1] (ranks[2j] * n for
  /// an odd w's last row), which orders as the pair does.
  Value pairedRanks(Value ranks) {
    Type i64 = r.getI64Type();
    const int64_t w = typeOf(ranks).getDimSize(0), half = (w + 1) / 2;
    auto rowsType = [&](int64_t rows) { return RankedTensorType::get({rows, n}, i64); };
    auto everyOther = [&](int64_t from, int64_t rows) -> Value {
      return r.create<aten::SliceOp>(loc, rowsType(rows), ranks,
                                     r.getDenseI64ArrayAttr({from, 0}),
                                     r.getDenseI64ArrayAttr({2, 1}));
    };
    Value high = everyOther(0, half), low = everyOther(1, w / 2);
    if (w % 2 == 1) {
      Value zeros = b.constant(DenseElementsAttr::get(rowsType(1), r.getI64IntegerAttr(0)));
      low = r.create<aten::CatOp>(loc, rowsType(half), ValueRange{low, zeros},
                                  r.getI64IntegerAttr(0));
    }
    return b.add(i64, b.mul(i64, high, b.constant(i64, static_cast<double>(n))), low);
  }

  /// Whether each element of `keys` starts a run along `dim`: it is the
  /// first, or differs from the one before it (NaN differs from all).
  Value startsAlong(Value keys, int64_t dim) {
    RankedTensorType keysType = typeOf(keys);
    const int64_t length = keysType.getDimSize(dim), rank = keysType.getRank();
    auto flagsType = [&](int64_t size) {
      SmallVector<int64_t> shape(keysType.getShape());
      shape[dim] = size;
      return RankedTensorType::get(shape, r.getI1Type());
    };
    Value first = b.constant(DenseElementsAttr::get(flagsType(1), true));
    if (length == 1)
      return first;
    auto from = [&](int64_t offset) -> Value {
      SmallVector<int64_t> offsets(rank, 0), shape(keysType.getShape());
      offsets[dim] = offset;
      shape[dim] = length - 1;
      return r.create<aten::SliceOp>(loc, keysType.clone(shape), keys,
                                     r.getDenseI64ArrayAttr(offsets),
                                     r.getDenseI64ArrayAttr(SmallVector<int64_t>(rank, 1)));
    };
    Value differs = b.pointwise(flagsType(length - 1), "ne", {from(1), from(0)});
    return r.create<aten::CatOp>(loc, flagsType(length), ValueRange{first, differs},
                                 r.getI64IntegerAttr(dim));
  }

  /// first[i]: i == 0, or row i of `keys` (see keys()) differs from row
  /// i - 1 in some element.
  Value runStarts(Value keys) {
    Value starts = startsAlong(keys, 0);
    if (m == 1)
      return starts;
    return r.create<aten::AnyOp>(loc, RankedTensorType::get({n}, r.getI1Type()), starts,
                                 r.getDenseI64ArrayAttr({1}), r.getBoolAttr(false));
  }

  /// Each sorted row's slot scattered back through `order` (the inverse),
  /// and each slot's row count cut to the number of slots (the counts).
  std::pair<Value, Value> slotsAndCounts(Value first, Value order, Type countsType) {
    Type i64 = r.getI64Type();
    Value starts = b.convert(first, i64);
    Value runningCount = r.create<aten::CumsumOp>(loc, slotsType(), starts,
                                                  r.getI64IntegerAttr(0), r.getBoolAttr(false));
    Value slots = b.sub(i64, runningCount, b.constant(i64, 1.0));
    Value zeros = b.constant(DenseElementsAttr::get(slotsType(), r.getI64IntegerAttr(0)));
    Value inverse = r.create<aten::ScatterOp>(loc, slotsType(), zeros, order, slots,
                                              r.getI64IntegerAttr(0), r.getStringAttr("none"));
    Value ones = b.constant(DenseElementsAttr::get(slotsType(), r.getI64IntegerAttr(1)));
    Value perSlot = r.create<aten::ScatterOp>(loc, slotsType(), zeros, slots, ones,
                                              r.getI64IntegerAttr(0), r.getStringAttr("sum"));
    Value count = b.sum(RankedTensorType::get({}, i64), starts, {0});
    Value live = b.pointwise(RankedTensorType::get({n}, r.getI1Type()), "lt",
                             {b.positions({n}), count});
    Value counts = r.create<aten::BooleanMaskOp>(loc, countsType, perSlot, live);
    return {inverse, counts};
  }

  PatternRewriter &r;
  Location loc;
  AtenBuilder b;
  int64_t n = 0, m = 0;
};

struct DecomposeUniqueOp : OpRewritePattern<aten::UniqueOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::UniqueOp op, PatternRewriter &r) const override {
    AtenBuilder b(r, op.getLoc());
    RankedTensorType selfType = typeOf(op.getSelf());
    UniqueRows unique = UniqueRowsBuilder(r, op.getLoc())
                            .build(b.view(op.getSelf(), {selfType.getNumElements()}),
                                   op.getConsecutive(), op.getValues().getType(),
                                   op.getCounts().getType());
    r.replaceOp(op, {unique.values, b.view(unique.inverse, selfType.getShape()),
                     unique.counts});
    return success();
  }
};

struct DecomposeUniqueDimOp : OpRewritePattern<aten::UniqueDimOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::UniqueDimOp op, PatternRewriter &r) const override {
    AtenBuilder b(r, op.getLoc());
    const int64_t rank = typeOf(op.getSelf()).getRank(), dim = op.getDim();
    // The slices along dim become rows: dim first, the others in order.
    SmallVector<int64_t> toFront = {dim}, fromFront;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim)
        toFront.push_back(d);
    for (int64_t d = 0; d < rank; ++d)
      fromFront.push_back(d == dim ? 0 : d < dim ? d + 1 : d);
    Value rows = b.permute(op.getSelf(), toFront);
    SmallVector<int64_t> valuesShape(typeOf(rows).getShape());
    valuesShape[0] = ShapedType::kDynamic;
    UniqueRows unique =
        UniqueRowsBuilder(r, op.getLoc())
            .build(rows, op.getConsecutive(),
                   RankedTensorType::get(valuesShape, typeOf(rows).getElementType()),
                   op.getCounts().getType());
    r.replaceOp(op, {b.permute(unique.values, fromFront), unique.inverse, unique.counts});
    return success();
  }
};

} // namespace

void kiln::populateUniqueDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeUniqueOp, DecomposeUniqueDimOp>(patterns.getContext());
}
