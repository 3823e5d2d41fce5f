//===- LinearScan.cpp - scans along a dim as a loop carrying the lines ----===//
//
// This file implements buildLinearScan: a scan (cumsum, cumprod, cummax,
// logcumsumexp's steps ...) along one dim as a loop over that dim, each
// step updating carried slabs from one slice of each input (a complex
// scan reads two: the real and imaginary parts). A static tensor
// is scanned as one scf.forall over tiles of its lines, each tile scanned
// whole while it is in L1: swept over the whole tensor instead, each of
// the dim's steps touched every line, one element (and one cache line) of
// each, and a 256x1024 f32 cumsum over its last dim ran at 6x eager's time
// on one thread and no faster on two (each step its own small parallel
// loop).
//
//===----------------------------------------------------------------------===//
#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;

namespace kiln::aten {
namespace {

/// Lines a tile takes at most when the scan runs along the last dim: each
/// step reads one element of each line and writes one of each result's, so
/// a tile keeps twice this many cache lines in flight (more with more
/// results). Lines 4 KiB apart share one L1 set, 8-way on Zen 4: 16 lines
/// (32 in flight) thrashed it, and a 256x1024 f32 cumsum took 3x eager's
/// time with 16 independent add chains in registers; 4 lines fit.
constexpr int64_t kLastDimTileLines = 4;
/// Elements of the contiguous dim a tile takes at most when the scan runs
/// along another dim: each step reads that many in a row.
constexpr int64_t kInnerTileElements = 512;

/// The largest divisor of `extent` that is at most `limit` (at least 1).
int64_t tileExtent(int64_t extent, int64_t limit) {
  for (int64_t size = std::min(extent, limit); size > 1; --size)
    if (extent % size == 0)
      return size;
  return 1;
}

/// The scan of the inputs `xs` along `dim` as a loop over the dim, its
/// results written into `dests` (the inputs' shape, one per initial value)
/// or, without them, into fresh tensors.
SmallVector<Value> scanLines(OpBuilder &b, Location loc, ValueRange xs, int64_t dim,
                             ValueRange initial, ScanStep step,
                             ValueRange dests) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(xs.front().getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> slabShape(type.getShape());
  slabShape[dim] = 1;
  // Every loop-carried tensor from its own alloc_tensor, not tensor.empty:
  // CSE would fold equal empties (and equal fills of them) into one value,
  // and two carried tensors would then be written through one buffer.
  SmallVector<Value> state;
  for (Value init : initial) {
    Value slab = b.create<bufferization::AllocTensorOp>(
        loc, RankedTensorType::get(slabShape, init.getType()), ValueRange{});
    state.push_back(b.create<linalg::FillOp>(loc, init, slab).getResult(0));
  }
  if (dests.empty()) {
    for (Value init : initial)
      state.push_back(b.create<bufferization::AllocTensorOp>(
          loc, type.clone(init.getType()), ValueRange{}));
  } else {
    state.append(dests.begin(), dests.end());
  }
  size_t slabs = initial.size();
  auto cst = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  SmallVector<AffineMap> maps(slabs + xs.size(), AffineMap::getMultiDimIdentityMap(rank, ctx));
  auto loop = b.create<scf::ForOp>(
      loc, cst(0), cst(type.getDimSize(dim)), cst(1), state,
      [&](OpBuilder &b, Location l, Value k, ValueRange carried) {
        SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
            strides(rank, b.getIndexAttr(1));
        for (int64_t s : slabShape)
          sizes.push_back(b.getIndexAttr(s));
        offsets[dim] = k;
        SmallVector<Value> slices;
        for (Value x : xs)
          slices.push_back(b.create<tensor::ExtractSliceOp>(
              l, RankedTensorType::get(slabShape, type.getElementType()), x,
              offsets, sizes, strides));
        Value position = b.create<arith::IndexCastOp>(l, b.getI64Type(), k);
        ValueRange running = carried.take_front(slabs);
        size_t inputs = xs.size();
        auto next = b.create<linalg::GenericOp>(
            l, running.getTypes(), slices, running, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              b.create<linalg::YieldOp>(
                  l, step(b, l, position, args.take_front(inputs),
                          args.drop_front(inputs)));
            });
        SmallVector<Value> yielded(next.getResults());
        for (size_t i = 0; i < slabs; ++i)
          yielded.push_back(b.create<tensor::InsertSliceOp>(
              l, next.getResult(i), carried[slabs + i], offsets, sizes, strides));
        b.create<scf::YieldOp>(l, yielded);
      });
  return SmallVector<Value>(loop.getResults().drop_front(slabs));
}

} // namespace

SmallVector<Value> buildLinearScan(OpBuilder &b, Location loc, ValueRange xs,
                                   int64_t dim, ValueRange initial,
                                   ScanStep step) {
  auto type = cast<RankedTensorType>(xs.front().getType());
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape() || type.getNumElements() == 0)
    return scanLines(b, loc, xs, dim, initial, step, {});
  ArrayRef<int64_t> shape = type.getShape();
  // The lines are tiled along one other dim: the one before a last scanned
  // dim, else the last (contiguous) one. Every other dim but the scanned
  // one is split into single lines.
  int64_t tiled = dim == rank - 1 ? rank - 2 : rank - 1;
  int64_t tileSize = tileExtent(
      shape[tiled], dim == rank - 1 ? kLastDimTileLines : kInnerTileElements);
  // Tiles numbered row-major over the dims other than the scanned one.
  SmallVector<int64_t> gridDims, gridExtents;
  int64_t tiles = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == dim)
      continue;
    gridDims.push_back(d);
    gridExtents.push_back(d == tiled ? shape[d] / tileSize : shape[d]);
    tiles *= gridExtents.back();
  }
  SmallVector<Value> shared;
  for (Value init : initial)
    shared.push_back(b.create<tensor::EmptyOp>(loc, shape, init.getType()));
  auto loop = b.create<scf::ForallOp>(
      loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tiles)}, shared, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getTerminator());
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  sizes[dim] = b.getIndexAttr(shape[dim]);
  sizes[tiled] = b.getIndexAttr(tileSize);
  SmallVector<int64_t> gridTileSizes;
  for (int64_t d : gridDims)
    gridTileSizes.push_back(d == tiled ? tileSize : 1);
  for (auto [d, offset] :
       llvm::zip(gridDims, tileOffsets(b, loc, loop.getInductionVars()[0],
                                       gridExtents, gridTileSizes)))
    offsets[d] = offset;
  SmallVector<Value> tileIn;
  for (Value x : xs)
    tileIn.push_back(b.create<tensor::ExtractSliceOp>(loc, x, offsets, sizes, strides));
  SmallVector<Value> tileOut;
  for (Value out : loop.getRegionIterArgs())
    tileOut.push_back(
        b.create<tensor::ExtractSliceOp>(loc, out, offsets, sizes, strides));
  SmallVector<Value> results = scanLines(b, loc, tileIn, dim, initial, step, tileOut);
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  for (auto [result, out] : llvm::zip(results, loop.getRegionIterArgs()))
    b.create<tensor::ParallelInsertSliceOp>(loc, result, out, offsets, sizes, strides);
  return SmallVector<Value>(loop.getResults());
}

} // namespace kiln::aten
