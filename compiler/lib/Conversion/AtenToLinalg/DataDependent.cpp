//===- DataDependent.cpp - ops whose result size depends on the values ----===//
//
// This file implements the lowering of aten.nonzero, aten.boolean_mask,
// aten.repeat_interleave and aten.bincount, whose row count the run
// computes: a first scf.for counts the selected positions (sums the
// repeats, finds the largest value), a tensor.empty of that many rows takes
// the result, and a second scf.for writes the rows (adds the counts) in
// order.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

int64_t product(ArrayRef<int64_t> shape) { return ShapedType::getNumElements(shape); }

/// `input` (static shape) as a 1-D tensor of its elements.
Value flattened(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  auto flat = RankedTensorType::get({product(type.getShape())}, type.getElementType());
  return buildReshape(b, loc, input, flat);
}

/// True (i1) when scalar `v` is not zero: NaN is, -0.0 is not (PyTorch's
/// bool conversion).
Value isNonZero(OpBuilder &b, Location loc, Value v) {
  return castScalar(b, loc, v, b.getI1Type());
}

/// The number of positions of 1-D `flat` (of `count` elements) that are
/// nonzero, as an index.
Value countSelected(OpBuilder &b, Location loc, Value flat, int64_t count) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value end = b.create<arith::ConstantIndexOp>(loc, count);
  auto loop = b.create<scf::ForOp>(
      loc, zero, end, one, ValueRange{zero},
      [&](OpBuilder &nb, Location l, Value i, ValueRange carried) {
        Value v = nb.create<tensor::ExtractOp>(l, flat, i);
        Value step = nb.create<arith::SelectOp>(l, isNonZero(nb, l, v), one, zero);
        nb.create<scf::YieldOp>(l, ValueRange{nb.create<arith::AddIOp>(l, carried[0], step)});
      });
  return loop.getResult(0);
}

/// Loops over the `count` positions of 1-D `flat` carrying (result, next
/// row); at each nonzero one, `write(position, result, row)` returns the
/// result with that row written. The final result.
Value writeSelectedRows(
    OpBuilder &b, Location loc, Value flat, int64_t count, Value init,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)> write) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value end = b.create<arith::ConstantIndexOp>(loc, count);
  auto loop = b.create<scf::ForOp>(
      loc, zero, end, one, ValueRange{init, zero},
      [&](OpBuilder &nb, Location l, Value i, ValueRange carried) {
        Value v = nb.create<tensor::ExtractOp>(l, flat, i);
        auto branch = nb.create<scf::IfOp>(
            l, isNonZero(nb, l, v),
            [&](OpBuilder &tb, Location tl) {
              Value written = write(tb, tl, i, carried[0], carried[1]);
              Value next = tb.create<arith::AddIOp>(tl, carried[1], one);
              tb.create<scf::YieldOp>(tl, ValueRange{written, next});
            },
            [&](OpBuilder &eb, Location el) {
              eb.create<scf::YieldOp>(el, carried);
            });
        nb.create<scf::YieldOp>(l, branch.getResults());
      });
  return loop.getResult(0);
}

struct NonzeroLowering : OpConversionPattern<NonzeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NonzeroOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto selfType = cast<RankedTensorType>(adaptor.getSelf().getType());
    ArrayRef<int64_t> shape = selfType.getShape();
    int64_t count = product(shape), rank = selfType.getRank();
    Value flat = flattened(rewriter, loc, adaptor.getSelf());
    if (!flat)
      return rewriter.notifyMatchFailure(op, "cannot flatten self");
    Value rows = countSelected(rewriter, loc, flat, count);
    Value init = rewriter.create<tensor::EmptyOp>(
        loc, op.getType().getShape(), op.getType().getElementType(), ValueRange{rows});
    // Row k: the coordinates of flat position i, (i / stride[d]) % shape[d]
    // (no division for the last dim, no remainder for the first).
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    Value result = writeSelectedRows(
        rewriter, loc, flat, count, init,
        [&](OpBuilder &b, Location l, Value i, Value into, Value row) {
          for (int64_t d = 0; d < rank; ++d) {
            Value coordinate = i;
            if (strides[d] != 1)
              coordinate = b.create<arith::DivUIOp>(
                  l, coordinate, b.create<arith::ConstantIndexOp>(l, strides[d]));
            if (d != 0)
              coordinate = b.create<arith::RemUIOp>(
                  l, coordinate, b.create<arith::ConstantIndexOp>(l, shape[d]));
            Value value = b.create<arith::IndexCastOp>(l, b.getI64Type(), coordinate);
            Value column = b.create<arith::ConstantIndexOp>(l, d);
            into = b.create<tensor::InsertOp>(l, value, into, ValueRange{row, column});
          }
          return into;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct BooleanMaskLowering : OpConversionPattern<BooleanMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BooleanMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto selfType = cast<RankedTensorType>(adaptor.getSelf().getType());
    auto maskType = cast<RankedTensorType>(adaptor.getMask().getType());
    RankedTensorType type = op.getType();
    int64_t positions = product(maskType.getShape());
    int64_t width = product(selfType.getShape().drop_front(maskType.getRank()));
    Type element = selfType.getElementType();
    // Self as (positions, width) rows; the result as (count, width).
    Value table = buildReshape(
        rewriter, loc, adaptor.getSelf(),
        RankedTensorType::get({positions, width}, element));
    Value flatMask = flattened(rewriter, loc, adaptor.getMask());
    if (!table || !flatMask)
      return rewriter.notifyMatchFailure(op, "cannot flatten self or mask");
    Value rows = countSelected(rewriter, loc, flatMask, positions);
    auto rowsType = RankedTensorType::get({ShapedType::kDynamic, width}, element);
    Value init = rewriter.create<tensor::EmptyOp>(loc, rowsType.getShape(), element,
                                                  ValueRange{rows});
    Value result = writeSelectedRows(
        rewriter, loc, flatMask, positions, init,
        [&](OpBuilder &b, Location l, Value i, Value into, Value row) {
          SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(width)};
          SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1)};
          Value piece = b.create<tensor::ExtractSliceOp>(
              l, table, SmallVector<OpFoldResult>{i, b.getIndexAttr(0)}, sizes, strides);
          return b.create<tensor::InsertSliceOp>(
              l, piece, into, SmallVector<OpFoldResult>{row, b.getIndexAttr(0)},
              sizes, strides).getResult();
        });
    SmallVector<OpFoldResult> sizes = {OpFoldResult(rows)};
    for (int64_t d = 1; d < type.getRank(); ++d)
      sizes.push_back(rewriter.getIndexAttr(type.getDimSize(d)));
    Value reshaped = buildReshape(rewriter, loc, result, type, sizes);
    if (!reshaped)
      return rewriter.notifyMatchFailure(op, "cannot shape the rows");
    rewriter.replaceOp(op, reshaped);
    return success();
  }
};

/// j, repeats[j] times, for each j in order. A dynamic result holds the
/// repeats' sum, saturated at capacity + 1 (a sum past the declared max,
/// which the agent refuses, never sizes a buffer past it); a static one
/// holds capacity elements, 0 past the sum. A negative repeat counts 0.
struct RepeatInterleaveLowering : OpConversionPattern<RepeatInterleaveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RepeatInterleaveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    Value repeats = adaptor.getRepeats();
    int64_t count = cast<RankedTensorType>(repeats.getType()).getDimSize(0);
    OpBuilder &b = rewriter;
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    Value end = b.create<arith::ConstantIndexOp>(loc, count);
    const bool dynamic = type.isDynamicDim(0);
    // The most elements written: no sum below overflows, as each step is
    // cut to it first.
    Value limit = b.create<arith::ConstantIndexOp>(
        loc, dynamic ? op.getCapacity() + 1 : op.getCapacity());
    // repeats[j] as an index in [0, limit].
    auto repeatAt = [&](OpBuilder &nb, Location l, Value j) -> Value {
      Value r = nb.create<tensor::ExtractOp>(l, repeats, j);
      r = nb.create<arith::MaxSIOp>(
          l, r, nb.create<arith::ConstantOp>(l, nb.getZeroAttr(element)));
      Value steps = nb.create<arith::IndexCastOp>(l, nb.getIndexType(), r);
      return nb.create<arith::MinUIOp>(l, steps, limit);
    };
    Value rows = limit;
    if (dynamic)
      rows = b.create<scf::ForOp>(
                  loc, zero, end, one, ValueRange{zero},
                  [&](OpBuilder &nb, Location l, Value j, ValueRange carried) {
                    Value sum = nb.create<arith::AddIOp>(l, carried[0], repeatAt(nb, l, j));
                    nb.create<scf::YieldOp>(
                        l, ValueRange{nb.create<arith::MinUIOp>(l, sum, limit)});
                  })
                 .getResult(0);
    Value init = b.create<tensor::EmptyOp>(loc, type.getShape(), element,
                                           dynamic ? ValueRange{rows} : ValueRange{});
    Value filled =
        b.create<linalg::FillOp>(loc, ValueRange{b.create<arith::ConstantOp>(
                                          loc, b.getZeroAttr(element))},
                                 ValueRange{init})
            .getResult(0);
    // Positions [start, start + repeats[j]) (cut at rows) hold j.
    auto loop = b.create<scf::ForOp>(
        loc, zero, end, one, ValueRange{filled, zero},
        [&](OpBuilder &nb, Location l, Value j, ValueRange carried) {
          Value start = carried[1];
          Value stop = nb.create<arith::MinUIOp>(
              l, nb.create<arith::AddIOp>(l, start, repeatAt(nb, l, j)), rows);
          Value value = nb.create<arith::IndexCastOp>(l, element, j);
          auto run = nb.create<scf::ForOp>(
              l, start, stop, one, ValueRange{carried[0]},
              [&](OpBuilder &ib, Location il, Value k, ValueRange into) {
                ib.create<scf::YieldOp>(
                    il, ValueRange{ib.create<tensor::InsertOp>(il, value, into[0], k)});
              });
          nb.create<scf::YieldOp>(l, ValueRange{run.getResult(0), stop});
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct BincountLowering : OpConversionPattern<BincountOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BincountOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = op.getType().getElementType();
    Value self = adaptor.getSelf(), weights = adaptor.getWeights();
    int64_t count = cast<RankedTensorType>(self.getType()).getDimSize(0);
    OpBuilder &b = rewriter;
    Type i64 = b.getI64Type();
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    Value end = b.create<arith::ConstantIndexOp>(loc, count);
    auto constant = [&](OpBuilder &nb, Location l, int64_t v) -> Value {
      return nb.create<arith::ConstantOp>(l, nb.getI64IntegerAttr(v));
    };
    auto valueAt = [&](OpBuilder &nb, Location l, Value i) -> Value {
      Value v = nb.create<tensor::ExtractOp>(l, self, i);
      return v.getType() == i64 ? v : nb.create<arith::ExtSIOp>(l, i64, v).getResult();
    };
    // The length, max(minlength, max(self) + 1), cut at capacity + 1 (each
    // element cut first, so nothing overflows).
    Value length =
        b.create<scf::ForOp>(loc, zero, end, one,
                             ValueRange{constant(b, loc, op.getMinlength())},
                             [&](OpBuilder &nb, Location l, Value i, ValueRange longest) {
                               Value cut = nb.create<arith::MinSIOp>(
                                   l, valueAt(nb, l, i), constant(nb, l, op.getCapacity()));
                               Value past = nb.create<arith::AddIOp>(l, cut, constant(nb, l, 1));
                               nb.create<scf::YieldOp>(
                                   l, ValueRange{nb.create<arith::MaxSIOp>(l, longest[0], past)});
                             })
            .getResult(0);
    Value init = b.create<tensor::EmptyOp>(
        loc, op.getType().getShape(), element,
        ValueRange{b.create<arith::IndexCastOp>(loc, b.getIndexType(), length)});
    Value filled = b.create<linalg::FillOp>(
                        loc, ValueRange{b.create<arith::ConstantOp>(loc, b.getZeroAttr(element))},
                        ValueRange{init})
                       .getResult(0);
    // In self's order: each element in [0, length) adds its weight (or 1)
    // to its bin; a negative one counts nowhere.
    auto loop = b.create<scf::ForOp>(
        loc, zero, end, one, ValueRange{filled},
        [&](OpBuilder &nb, Location l, Value i, ValueRange bins) {
          Value v = valueAt(nb, l, i);
          Value inRange = nb.create<arith::AndIOp>(
              l, nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, v, constant(nb, l, 0)),
              nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, v, length));
          auto added = nb.create<scf::IfOp>(
              l, inRange,
              [&](OpBuilder &tb, Location tl) {
                Value bin = tb.create<arith::IndexCastOp>(tl, tb.getIndexType(), v);
                Value old = tb.create<tensor::ExtractOp>(tl, bins[0], bin);
                Value sum =
                    weights ? tb.create<arith::AddFOp>(
                                    tl, old, tb.create<tensor::ExtractOp>(tl, weights, i))
                                  .getResult()
                            : tb.create<arith::AddIOp>(tl, old, constant(tb, tl, 1)).getResult();
                tb.create<scf::YieldOp>(
                    tl, ValueRange{tb.create<tensor::InsertOp>(tl, sum, bins[0], bin)});
              },
              [&](OpBuilder &eb, Location el) { eb.create<scf::YieldOp>(el, bins[0]); });
          nb.create<scf::YieldOp>(l, added.getResults());
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

} // namespace

void kiln::aten::populateDataDependentPatterns(RewritePatternSet &patterns) {
  patterns.add<NonzeroLowering, BooleanMaskLowering, RepeatInterleaveLowering,
               BincountLowering>(
      patterns.getContext());
}
