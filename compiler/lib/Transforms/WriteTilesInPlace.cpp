//===- WriteTilesInPlace.cpp - the kiln-write-tiles-in-place pass ---------===//
//
// This file implements empty-tensor elimination scoped to scf.forall loops:
// a tile that elementwise fusion left computing into a fresh tensor.empty
// is computed in its slice of the loop's shared output instead, so that
// bufferization makes neither a buffer nor a copy per tile.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_WRITETILESINPLACE
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct WriteTilesInPlacePass
    : kiln::impl::WriteTilesInPlaceBase<WriteTilesInPlacePass> {
  void runOnOperation() override {
    // Outermost loops only: elimination on a loop covers those inside it.
    SmallVector<scf::ForallOp> loops;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ForallOp loop) {
      loops.push_back(loop);
      return WalkResult::skip();
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp loop : loops)
      if (failed(bufferization::eliminateEmptyTensors(rewriter, loop)))
        return signalPassFailure();
  }
};

} // namespace
