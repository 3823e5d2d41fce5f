//===- CopyReturnedArguments.cpp - the kiln-copy-returned-arguments pass --===//
//
// This file implements copying of returned function arguments (and views of
// them), and of buffers returned more than once, into fresh buffers after
// bufferization, so every returned buffer can become an out-parameter of its
// own.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_COPYRETURNEDARGUMENTS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// True when `value` is a block argument or a chain of views of one.
bool viewsArgument(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(op);
    if (!view)
      return false;
    value = view.getViewSource();
  }
  return true;
}

struct CopyReturnedArgumentsPass
    : kiln::impl::CopyReturnedArgumentsBase<CopyReturnedArgumentsPass> {
  void runOnOperation() override {
    OpBuilder builder(&getContext());
    getOperation().walk([&](func::ReturnOp ret) {
      builder.setInsertionPoint(ret);
      llvm::SmallPtrSet<Value, 4> returned;
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        bool again = !returned.insert(operand.get()).second;
        if (!type || !type.hasStaticShape() ||
            !(again || viewsArgument(operand.get())))
          continue;
        auto fresh = MemRefType::get(type.getShape(), type.getElementType());
        Value copy = builder.create<memref::AllocOp>(ret.getLoc(), fresh);
        builder.create<memref::CopyOp>(ret.getLoc(), operand.get(), copy);
        if (fresh != type)
          copy = builder.create<memref::CastOp>(ret.getLoc(), type, copy);
        operand.set(copy);
      }
    });
  }
};

} // namespace
