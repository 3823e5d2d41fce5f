//===- SoftmaxRows.cpp - softmax over the last dim, a tile of rows at once -===//
//
// This file implements buildRowTiledSoftmax: softmax and log_softmax over
// the last dim of a static tensor as one scf.forall over tiles of rows. Each
// tile takes its rows' maxima, writes exp(x - max) into its part of the
// result, sums them, and divides them in place (log_softmax: writes
// x - max - log(sum) over them), all while its rows are in L1. Lowered over
// the whole tensor instead, softmax made four passes over memory, each of
// which missed the cache once the tensor was past L2: an 8x8x128x128 f32
// attention softmax ran at 2.2x eager's time that way.
//
// The arithmetic is the whole-tensor lowering's; the sum reassociates, as
// every float sum does (addToSum). The maxima and sums are
// per-tile buffers, which kiln-stack-loop-buffers puts on the stack.
//
//===----------------------------------------------------------------------===//
#include "SoftmaxRows.h"
#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using kiln::aten::ScalarBody;

namespace {

/// A tile's elements at most: 32 KiB of f32, inside every x86-64 L1d.
constexpr int64_t kTileElements = 8192;
/// A tile's rows at most: its maxima and sums stay small stack buffers.
constexpr int64_t kTileRows = 256;

/// The most rows a tile of rows of `rowLength` elements takes, dividing
/// `rows` (at least 1).
int64_t rowsPerTile(int64_t rows, int64_t rowLength) {
  int64_t limit =
      std::clamp<int64_t>(kTileElements / rowLength, 1, kTileRows);
  for (int64_t size = std::min(rows, limit); size > 1; --size)
    if (rows % size == 0)
      return size;
  return 1;
}

} // namespace

Value kiln::aten::zeroWhereRowMasked(OpBuilder &b, Location loc, Value rowMax,
                                     Value quotient) {
  auto floatType = cast<FloatType>(rowMax.getType());
  Value negInf = b.create<arith::ConstantOp>(
      loc, b.getFloatAttr(floatType, -std::numeric_limits<double>::infinity()));
  Value masked =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, rowMax, negInf);
  Value zero = b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, 0.0));
  return b.create<arith::SelectOp>(loc, masked, zero, quotient);
}

Value kiln::aten::buildRowTiledSoftmax(OpBuilder &b, Location loc, Value x,
                                       bool isLog, bool zeroMaskedRows) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape() || type.getNumElements() == 0)
    return {};
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return {};
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rowLength = shape.back();
  int64_t tileRows = rowsPerTile(shape[rank - 2], rowLength);
  // Tiles are numbered row-major over the outer dims, the dim before the
  // last counted in tiles: one parallel dim, however the rows are shaped.
  SmallVector<int64_t> tileGrid(shape.drop_back());
  tileGrid.back() /= tileRows;
  int64_t tiles = 1;
  for (int64_t extent : tileGrid)
    tiles *= extent;

  auto loop = b.create<scf::ForallOp>(
      loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tiles)},
      ValueRange{b.create<tensor::EmptyOp>(loc, shape, floatType)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getTerminator());
  SmallVector<int64_t> gridTileSizes(tileGrid.size(), 1);
  gridTileSizes.back() = tileRows;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  for (auto [d, offset] : llvm::enumerate(tileOffsets(
           b, loc, loop.getInductionVars()[0], tileGrid, gridTileSizes)))
    offsets[d] = offset;
  SmallVector<OpFoldResult> sizes(rank, b.getIndexAttr(1));
  sizes[rank - 2] = b.getIndexAttr(tileRows);
  sizes[rank - 1] = b.getIndexAttr(rowLength);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  Value rowsIn =
      b.create<tensor::ExtractSliceOp>(loc, x, offsets, sizes, strides);
  Value tileOut = b.create<tensor::ExtractSliceOp>(
      loc, loop.getRegionIterArgs()[0], offsets, sizes, strides);

  // One value per row of the tile: a small buffer of the iteration's own.
  SmallVector<int64_t> rowShape(shape.drop_back());
  std::fill(rowShape.begin(), rowShape.end() - 1, 1);
  rowShape.back() = tileRows;
  auto perRowOf = [&](double value) -> Value {
    Value empty = b.create<tensor::EmptyOp>(loc, rowShape, floatType);
    Value scalar =
        b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, value));
    return b.create<linalg::FillOp>(loc, scalar, empty).getResult(0);
  };
  AffineMap whole = b.getMultiDimIdentityMap(rank);
  AffineMap perRow = whole.dropResult(rank - 1);
  using Iterator = utils::IteratorType;
  auto generic = [&](ValueRange ins, ArrayRef<AffineMap> maps, Value init,
                     Iterator last, ScalarBody body) -> Value {
    SmallVector<Iterator> iterators(rank, Iterator::parallel);
    iterators.back() = last;
    return b
        .create<linalg::GenericOp>(
            loc, init.getType(), ins, init, maps, iterators,
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
            })
        .getResult(0);
  };

  // max over the row (NaN propagates through maximumf).
  Value max = generic(
      rowsIn, {whole, perRow}, perRowOf(-std::numeric_limits<double>::infinity()),
      Iterator::reduction, [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return combineElements(Combiner::Max, nb, l, args[1], args[0]);
      });
  // exp(x - max) into the result's tile, a vectorizable loop; then their
  // sum.
  Value exps = generic(
      {rowsIn, max}, {whole, perRow, whole}, tileOut, Iterator::parallel,
      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return nb.create<math::ExpOp>(
            l, nb.create<arith::SubFOp>(l, args[0], args[1]));
      });
  Value sum = generic(
      exps, {whole, perRow}, perRowOf(0.0), Iterator::reduction,
      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return addToSum(nb, l, args[1], args[0]);
      });
  Value result;
  if (isLog) {
    result = generic(
        {rowsIn, max, sum}, {whole, perRow, perRow, whole}, exps,
        Iterator::parallel, [](OpBuilder &nb, Location l, ValueRange args) -> Value {
          return nb.create<arith::SubFOp>(
              l, nb.create<arith::SubFOp>(l, args[0], args[1]),
              nb.create<math::LogOp>(l, args[2]));
        });
  } else {
    // The division overwrites the exponentials in place.
    result = generic(
        {sum, max}, {perRow, perRow, whole}, exps, Iterator::parallel,
        [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
          Value quotient = nb.create<arith::DivFOp>(l, args[2], args[0]);
          return zeroMaskedRows ? zeroWhereRowMasked(nb, l, args[1], quotient)
                                : quotient;
        });
  }
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  b.create<tensor::ParallelInsertSliceOp>(loc, result,
                                          loop.getRegionIterArgs()[0], offsets,
                                          sizes, strides);
  return loop.getResult(0);
}
