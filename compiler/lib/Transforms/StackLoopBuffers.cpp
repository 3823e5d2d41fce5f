//===- StackLoopBuffers.cpp - the kiln-stack-loop-buffers pass ------------===//
//
// This file implements moving the small buffers that loop bodies allocate
// to the stack frame of the function that runs the loop: one alloca at the
// function's start instead of a malloc and a free per iteration.
//
//===----------------------------------------------------------------------===//
#include "BufferBytes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_STACKLOOPBUFFERS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The deallocs of `alloc`, when every one is in its block (as
/// kiln-insert-deallocs puts them); nullopt otherwise.
std::optional<SmallVector<memref::DeallocOp>> deallocsInBlock(memref::AllocOp alloc) {
  SmallVector<memref::DeallocOp> deallocs;
  for (Operation *user : alloc->getUsers())
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      if (dealloc->getBlock() != alloc->getBlock())
        return std::nullopt;
      deallocs.push_back(dealloc);
    }
  return deallocs;
}

struct StackLoopBuffersPass
    : kiln::impl::StackLoopBuffersBase<StackLoopBuffersPass> {
  using StackLoopBuffersBase::StackLoopBuffersBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    SmallVector<memref::AllocOp> inLoops;
    function.walk([&](memref::AllocOp alloc) {
      if (alloc->getParentOfType<LoopLikeOpInterface>())
        inLoops.push_back(alloc);
    });
    Block &entry = function.getBody().front();
    OpBuilder builder(&entry, entry.begin());
    int64_t used = 0;
    for (memref::AllocOp alloc : inLoops) {
      int64_t bytes = kiln::staticBufferBytes(alloc.getType());
      if (bytes == 0 || bytes > maxBufferBytes ||
          used + bytes > maxFunctionBytes)
        continue;
      std::optional<SmallVector<memref::DeallocOp>> deallocs =
          deallocsInBlock(alloc);
      if (!deallocs)
        continue;
      used += bytes;
      auto onStack = builder.create<memref::AllocaOp>(
          alloc.getLoc(), alloc.getType(), alloc.getAlignmentAttr());
      for (memref::DeallocOp dealloc : *deallocs)
        dealloc.erase();
      alloc.replaceAllUsesWith(onStack.getResult());
      alloc.erase();
    }
  }
};

} // namespace
