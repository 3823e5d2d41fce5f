//===- TileAndVectorize.cpp - the kiln-tile-and-vectorize pass ------------===//
//
// This file implements two-level tiling of matmul-like linalg ops (cache tile,
// then register tile with unit K) followed by vectorization of the innermost
// tile, on tensors.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_TILEANDVECTORIZE
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Largest divisor of `extent` that is at most `limit` (at least 1).
int64_t largestDivisorAtMost(int64_t extent, int64_t limit) {
  for (int64_t size = std::min(extent, limit); size > 1; --size)
    if (extent % size == 0)
      return size;
  return 1;
}

/// Largest power of two dividing `extent` that is at most `limit`: vector
/// widths that are not powers of two split into poor code.
int64_t largestPowerOfTwoDivisorAtMost(int64_t extent, int64_t limit) {
  int64_t size = 1;
  while (size * 2 <= limit && extent % (size * 2) == 0)
    size *= 2;
  return size;
}

/// Tiles `op` with `sizes` (one per loop; 0 = untiled) and returns the tiled
/// op, replacing the original's uses.
FailureOr<linalg::LinalgOp> tile(RewriterBase &rewriter, linalg::LinalgOp op,
                                 ArrayRef<int64_t> sizes) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> result = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(result) || result->tiledOps.size() != 1)
    return failure();
  rewriter.replaceOp(op, result->replacements);
  return cast<linalg::LinalgOp>(result->tiledOps.front());
}

struct TileAndVectorizePass
    : kiln::impl::TileAndVectorizeBase<TileAndVectorizePass> {
  using TileAndVectorizeBase::TileAndVectorizeBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> targets;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics() && !op.hasDynamicShape())
        targets.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : targets)
      if (failed(tileAndVectorize(rewriter, op)))
        return signalPassFailure();

    // Fold the vectorized multiply + reduction into vector.contract. Lowering
    // broadcasting transfer_reads to explicit broadcasts first lets the
    // contraction absorb them into its indexing maps (A: MxK, B: KxN).
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }

  LogicalResult tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    bool batched = isa<linalg::BatchMatmulOp>(op);
    // Loops are (m, n, k), with a leading batch loop for batch_matmul.
    size_t m = batched ? 1 : 0, n = m + 1, k = m + 2;
    SmallVector<int64_t> cacheTile(ranges.size(), 0), registerTile(ranges.size(), 0);
    if (batched) {
      cacheTile[0] = 1;
      registerTile[0] = 1;
    }
    cacheTile[m] = largestDivisorAtMost(ranges[m], cacheTileM);
    cacheTile[n] = largestDivisorAtMost(ranges[n], cacheTileN);
    cacheTile[k] = largestDivisorAtMost(ranges[k], cacheTileK);
    registerTile[m] = largestDivisorAtMost(cacheTile[m], registerTileM);
    registerTile[n] = largestPowerOfTwoDivisorAtMost(cacheTile[n], registerTileN);
    registerTile[k] = 1;

    FailureOr<linalg::LinalgOp> cacheTiled = tile(rewriter, op, cacheTile);
    if (failed(cacheTiled))
      return op.emitOpError("cache tiling failed");
    FailureOr<linalg::LinalgOp> registerTiled =
        tile(rewriter, *cacheTiled, registerTile);
    if (failed(registerTiled))
      return cacheTiled->emitOpError("register tiling failed");
    if (failed(linalg::vectorize(rewriter, *registerTiled)))
      return registerTiled->emitOpError("vectorization failed");
    return success();
  }
};

} // namespace
