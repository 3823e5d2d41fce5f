//===- TileAndVectorize.cpp - the kiln-tile-and-vectorize pass ------------===//
//
// This file implements two-level tiling of matmul-like linalg ops (cache tile,
// then register tile with unit K) followed by vectorization of the innermost
// tile, on tensors.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
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

/// The cache tile of a dim: the largest divisor of `extent` at most `limit`
/// that the largest possible register tile (up to `registerTile`; only
/// powers of two when `powerOfTwo`, as vector widths are) divides. The
/// largest divisor alone can leave no room for a register tile: N = 1000
/// gave 125-column panels, hence scalar code, and M = 196 49-row blocks,
/// hence one-row tiles with AVX2's 6-row register tile.
int64_t cacheTileFor(int64_t extent, int64_t limit, int64_t registerTile,
                     bool powerOfTwo) {
  for (int64_t quantum = registerTile; quantum > 1;
       quantum = powerOfTwo ? quantum / 2 : quantum - 1)
    for (int64_t size = std::min(extent, limit) / quantum * quantum; size > 0;
         size -= quantum)
      if (extent % size == 0)
        return size;
  return largestDivisorAtMost(extent, limit);
}

/// Largest power of two dividing `extent` that is at most `limit`: vector
/// widths that are not powers of two split into poor code.
int64_t largestPowerOfTwoDivisorAtMost(int64_t extent, int64_t limit) {
  int64_t size = 1;
  while (size * 2 <= limit && extent % (size * 2) == 0)
    size *= 2;
  return size;
}

/// How a tiling's loops may run: one after another (scf.for), or as
/// independent iterations (scf.forall: only for parallel dimensions).
enum class TileLoops { Serial, Independent };

/// Tiles `op` with `sizes` (one per loop; 0 = untiled) and returns the tiled
/// op, replacing the original's uses.
FailureOr<linalg::LinalgOp> tile(RewriterBase &rewriter, linalg::LinalgOp op,
                                 ArrayRef<int64_t> sizes,
                                 ArrayRef<int64_t> interchange = {},
                                 TileLoops loops = TileLoops::Serial) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  if (!interchange.empty())
    options.setInterchange(interchange);
  if (loops == TileLoops::Independent)
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
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
      // An empty iteration space has nothing to tile (and tiling it breaks).
      bool empty = llvm::any_of(op.getStaticLoopRanges(),
                                [](int64_t extent) { return extent == 0; });
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics() && !empty)
        targets.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : targets)
      if (failed(tileAndVectorize(rewriter, op)))
        return signalPassFailure();

    // Transposes of the two innermost dims (nn.Linear and convolution
    // weights, the panels packed above, spatial-major outputs) as square
    // blocks of vector registers: rows in, a register transpose, rows out,
    // instead of a gather per element.
    if (transposeTile > 1) {
      SmallVector<linalg::TransposeOp> transposes;
      getOperation().walk([&](linalg::TransposeOp op) {
        if (isBlockTransposable(op))
          transposes.push_back(op);
      });
      for (linalg::TransposeOp op : transposes)
        if (failed(tileAndVectorizeTranspose(rewriter, op)))
          return signalPassFailure();
    }

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

  /// Canonicalizes the ops inside `loops` (peeled bounds folded into the
  /// slices, so that a full step's tiles become static).
  void canonicalizeInside(ArrayRef<scf::ForOp> loops) {
    SmallVector<Operation *> nested;
    for (scf::ForOp loop : loops)
      if (loop)
        loop.walk([&](Operation *inner) { nested.push_back(inner); });
    if (!canonicalization) {
      // Every registered op's patterns: gathered once per pass run.
      RewritePatternSet patterns(&getContext());
      for (Dialect *dialect : getContext().getLoadedDialects())
        dialect->getCanonicalizationPatterns(patterns);
      for (RegisteredOperationName name : getContext().getRegisteredOperations())
        name.getCanonicalizationPatterns(patterns, &getContext());
      canonicalization = std::make_shared<FrozenRewritePatternSet>(std::move(patterns));
    }
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    (void)applyOpPatternsAndFold(nested, *canonicalization, config);
  }

  std::shared_ptr<const FrozenRewritePatternSet> canonicalization;

  static SmallVector<linalg::LinalgOp> productsIn(scf::ForOp loop) {
    SmallVector<linalg::LinalgOp> products;
    if (loop)
      loop.walk([&](linalg::LinalgOp op) {
        if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
          products.push_back(op);
      });
    return products;
  }

  /// Tiles loop `dim` of `op` (of symbolic extent) in steps of `step`, peels
  /// the loop so that its full steps have a static extent there, and goes
  /// one at a time through the partial step; appends the products made to
  /// `out`, each static in `dim`.
  LogicalResult peeledTile(RewriterBase &rewriter, linalg::LinalgOp op,
                           size_t dim, int64_t step,
                           SmallVector<linalg::LinalgOp> &out) {
    SmallVector<int64_t> sizes(op.getNumLoops(), 0);
    sizes[dim] = step;
    FailureOr<linalg::LinalgOp> tiled = tile(rewriter, op, sizes);
    if (failed(tiled))
      return op.emitOpError("tiling a symbolic extent failed");
    auto loop = (*tiled)->getParentOfType<scf::ForOp>();
    if (!loop)
      return tiled->emitOpError("tiling a symbolic extent made no loop");
    scf::ForOp partial;
    rewriter.setInsertionPoint(loop);
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial);
    canonicalizeInside({loop, partial});
    SmallVector<linalg::LinalgOp> rest = productsIn(partial);
    for (linalg::LinalgOp product : productsIn(loop)) {
      if (ShapedType::isDynamic(product.getStaticLoopRanges()[dim]))
        rest.push_back(product); // not peeled: one at a time too
      else
        out.push_back(product);
    }
    for (linalg::LinalgOp product : rest) {
      SmallVector<int64_t> ones(product.getNumLoops(), 0);
      ones[dim] = 1;
      FailureOr<linalg::LinalgOp> single = tile(rewriter, product, ones);
      if (failed(single))
        return product.emitOpError("tiling a symbolic extent by 1 failed");
      out.push_back(*single);
    }
    return success();
  }

  /// The register tiling and vectorization of `panel`, a product with
  /// symbolic sizes inside its (N, K) panel: its rows and then its columns,
  /// where symbolic, in steps of the register tile with the loop peeled
  /// (full steps static, the partial step one at a time); a symbolic depth
  /// needs nothing, as the register tile has unit depth. Every product left
  /// is static but for its depth, and vectorizes as a static one does.
  LogicalResult tileDynamicProduct(RewriterBase &rewriter, linalg::LinalgOp panel,
                                   int64_t registerN) {
    bool batched = isa<linalg::BatchMatmulOp>(panel);
    size_t m = batched ? 1 : 0, n = m + 1;
    SmallVector<linalg::LinalgOp> products = {panel};
    for (auto [dim, step] : {std::pair<size_t, int64_t>{m, registerTileM},
                             std::pair<size_t, int64_t>{n, registerN}}) {
      SmallVector<linalg::LinalgOp> next;
      for (linalg::LinalgOp product : products) {
        if (!ShapedType::isDynamic(product.getStaticLoopRanges()[dim]))
          next.push_back(product);
        else if (failed(peeledTile(rewriter, product, dim, step, next)))
          return failure();
      }
      products = std::move(next);
    }
    SmallVector<int64_t> columnsFirst =
        batched ? SmallVector<int64_t>{0, 2, 1, 3} : SmallVector<int64_t>{1, 0, 2};
    for (linalg::LinalgOp product : products) {
      SmallVector<int64_t> ranges = product.getStaticLoopRanges();
      SmallVector<int64_t> sizes(ranges.size(), 0);
      if (batched)
        sizes[0] = 1;
      sizes[m] = largestDivisorAtMost(ranges[m], registerTileM);
      sizes[n] = largestPowerOfTwoDivisorAtMost(ranges[n], registerTileN);
      sizes[n + 1] = 1;
      FailureOr<linalg::LinalgOp> registerTiled = tile(rewriter, product, sizes, columnsFirst);
      if (failed(registerTiled))
        return product.emitOpError("register tiling failed");
      if (registerTiled->hasDynamicShape())
        continue; // left to scalar code
      if (failed(linalg::vectorize(rewriter, *registerTiled)))
        return registerTiled->emitOpError("vectorization failed");
    }
    return success();
  }

  LogicalResult tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    // Read before tiling: each tile() replaces (and frees) the op it tiles.
    bool transposedB = isTransposed(op.getDpsInputOperand(1)->get());
    bool batched = isa<linalg::BatchMatmulOp>(op);
    // Loops are (m, n, k), with a leading batch loop for batch_matmul.
    size_t m = batched ? 1 : 0, n = m + 1, k = m + 2;
    auto sizes = [&](int64_t mSize, int64_t nSize, int64_t kSize) {
      SmallVector<int64_t> tile(ranges.size(), 0);
      if (batched)
        tile[0] = 1;
      tile[m] = mSize;
      tile[n] = nSize;
      tile[k] = kSize;
      return tile;
    };
    // A symbolic (dynamic) extent is not cache-tiled: 0 leaves it whole.
    bool dynamic = op.hasDynamicShape();
    int64_t cacheN = ShapedType::isDynamic(ranges[n])
                         ? 0
                         : cacheTileFor(ranges[n], cacheTileN, registerTileN,
                                        /*powerOfTwo=*/true);
    int64_t cacheK = ShapedType::isDynamic(ranges[k])
                         ? 0
                         : largestDivisorAtMost(ranges[k], cacheTileK);
    int64_t cacheM = ShapedType::isDynamic(ranges[m])
                         ? registerTileM
                         : cacheTileFor(ranges[m], cacheTileM, registerTileM,
                                        /*powerOfTwo=*/false);
    int64_t registerM = largestDivisorAtMost(cacheM, registerTileM);
    int64_t registerN = cacheN ? largestPowerOfTwoDivisorAtMost(cacheN, registerTileN)
                               : registerTileN;

    // 1. Column panels of C (and batches), independent of each other: the
    // outer loop the thread pool splits. Then an (N, K) panel of B per
    // iteration of a serial loop over K...
    FailureOr<linalg::LinalgOp> columns = op;
    if (batched || cacheN)
      columns = tile(rewriter, op, sizes(0, cacheN, 0), {}, TileLoops::Independent);
    if (failed(columns))
      return op.emitOpError("column-panel tiling failed");
    FailureOr<linalg::LinalgOp> panel = *columns;
    if (cacheK)
      panel = tile(rewriter, *columns, sizes(0, 0, cacheK));
    if (failed(panel))
      return columns->emitOpError("panel tiling failed");
    if ((cacheN && cacheN < ranges[n]) || transposedB)
      packRhs(rewriter, *panel);
    if (dynamic)
      return tileDynamicProduct(rewriter, *panel, registerN);
    // 3. Row blocks of A, then the register tile with unit K, columns
    // outermost: one NR-wide strip of the panel stays in L1 while every row
    // tile of the block streams past it.
    // (Independent too: the pool splits them when there are few panels.)
    FailureOr<linalg::LinalgOp> block = tile(
        rewriter, *panel, sizes(cacheM, 0, 0), {}, TileLoops::Independent);
    if (failed(block))
      return panel->emitOpError("row-block tiling failed");
    SmallVector<int64_t> columnsFirst =
        batched ? SmallVector<int64_t>{0, 2, 1, 3} : SmallVector<int64_t>{1, 0, 2};
    FailureOr<linalg::LinalgOp> registerTiled =
        tile(rewriter, *block, sizes(registerM, registerN, 1), columnsFirst);
    if (failed(registerTiled))
      return block->emitOpError("register tiling failed");
    if (failed(linalg::vectorize(rewriter, *registerTiled)))
      return registerTiled->emitOpError("vectorization failed");
    return success();
  }

  /// A static transpose of 32-bit elements that swaps the two innermost
  /// dims (leading dims in place), both multiples of the block.
  bool isBlockTransposable(linalg::TransposeOp op) const {
    auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
    ArrayRef<int64_t> perm = op.getPermutation();
    int64_t rank = static_cast<int64_t>(perm.size());
    if (!type || !type.hasStaticShape() || rank < 2 ||
        !op.hasPureTensorSemantics() || !type.getElementType().isIntOrFloat() ||
        type.getElementType().getIntOrFloatBitWidth() != 32 ||
        type.getNumElements() == 0)
      return false;
    for (int64_t i = 0; i < rank - 2; ++i)
      if (perm[i] != i)
        return false;
    ArrayRef<int64_t> shape = type.getShape();
    return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2 &&
           shape[rank - 1] % transposeTile == 0 &&
           shape[rank - 2] % transposeTile == 0;
  }

  /// Tiles `op` into transposeTile x transposeTile blocks (one per leading
  /// index) and vectorizes each block.
  LogicalResult tileAndVectorizeTranspose(RewriterBase &rewriter,
                                          linalg::TransposeOp op) {
    auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
    SmallVector<int64_t> sizes(linalgOp.getNumLoops(), 1);
    sizes[sizes.size() - 1] = transposeTile;
    sizes[sizes.size() - 2] = transposeTile;
    FailureOr<linalg::LinalgOp> block =
        tile(rewriter, linalgOp, sizes, {}, TileLoops::Independent);
    if (failed(block))
      return op.emitOpError("transpose tiling failed");
    if (failed(linalg::vectorize(rewriter, *block)))
      return block->emitOpError("transpose vectorization failed");
    return success();
  }

  static bool isTransposed(Value value) {
    return value.getDefiningOp<linalg::TransposeOp>() != nullptr;
  }

  /// Replaces the right-hand operand of `op` (a slice of B) by a dense copy
  /// of it; when B is a linalg.transpose, by the transpose of the matching
  /// slice of its input instead.
  void packRhs(RewriterBase &rewriter, linalg::LinalgOp op) {
    OpOperand *rhs = op.getDpsInputOperand(1);
    auto type = cast<RankedTensorType>(rhs->get().getType());
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    // Sizes from the slice: a symbolic extent is read from it.
    Value empty = rewriter.create<tensor::EmptyOp>(
        loc, tensor::getMixedSizes(rewriter, loc, rhs->get()), type.getElementType());
    Value packed;
    linalg::TransposeOp transpose;
    if (Value source =
            sliceOfTransposeInput(rewriter, rhs->get(), loc, transpose)) {
      packed = rewriter
                   .create<linalg::TransposeOp>(loc, source, empty,
                                                transpose.getPermutation())
                   .getResult()[0];
    } else {
      packed = rewriter.create<linalg::CopyOp>(loc, rhs->get(), empty)
                   .getResult(0);
    }
    rewriter.modifyOpInPlace(op, [&] { rhs->set(packed); });
  }

  /// For `slice` = extract_slice(...(extract_slice(transpose(W)))) with unit
  /// strides and no rank reduction (the tilings nest one slice per loop),
  /// the matching slice of W, with `transpose` set; null otherwise.
  static Value sliceOfTransposeInput(RewriterBase &rewriter, Value slice,
                                     Location loc,
                                     linalg::TransposeOp &transpose) {
    SmallVector<OpFoldResult> offsets, sizes;
    Value source = slice;
    AffineExpr d0, d1;
    bindDims(rewriter.getContext(), d0, d1);
    while (auto extract = source.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (!extract.hasUnitStride() ||
          extract.getSourceType().getRank() != extract.getType().getRank())
        return {};
      if (sizes.empty()) {
        offsets = extract.getMixedOffsets();
        sizes = extract.getMixedSizes();
      } else {
        for (auto [offset, outer] :
             llvm::zip(offsets, extract.getMixedOffsets()))
          offset = affine::makeComposedFoldedAffineApply(rewriter, loc,
                                                         d0 + d1,
                                                         {outer, offset});
      }
      source = extract.getSource();
    }
    transpose = source.getDefiningOp<linalg::TransposeOp>();
    if (!transpose || sizes.empty())
      return {};
    // Result dim i is input dim perm[i]: move offsets and sizes back.
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<OpFoldResult> inOffsets(perm.size()), inSizes(perm.size());
    for (auto [i, dim] : llvm::enumerate(perm)) {
      inOffsets[dim] = offsets[i];
      inSizes[dim] = sizes[i];
    }
    SmallVector<OpFoldResult> strides(perm.size(), rewriter.getIndexAttr(1));
    return rewriter.create<tensor::ExtractSliceOp>(
        loc, transpose.getInput(), inOffsets, inSizes, strides);
  }
};

} // namespace
