//===- InsertDeallocs.cpp - the kiln-insert-deallocs pass -----------------===//
//
// This file implements block-scoped freeing of buffers: with static shapes
// and results written to out-parameters, every allocation dies with its
// block, so a dealloc before the block's terminator is exact.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_INSERTDEALLOCS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// True when `value` or a view of it is used by a terminator that passes it
/// out of its block (a yield or return).
bool escapesBlock(Value value) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<OpTrait::IsTerminator>())
        return true;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == current)
          llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

struct InsertDeallocsPass
    : kiln::impl::InsertDeallocsBase<InsertDeallocsPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    OpBuilder builder(&getContext());
    for (memref::AllocOp alloc : allocs) {
      if (escapesBlock(alloc.getResult())) {
        alloc.emitOpError("buffer escapes its block; cannot free it safely");
        return signalPassFailure();
      }
      Block *block = alloc->getBlock();
      builder.setInsertionPoint(block->getTerminator());
      builder.create<memref::DeallocOp>(alloc.getLoc(), alloc.getResult());
    }
  }
};

} // namespace
