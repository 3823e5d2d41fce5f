//===- PlaceKernelCallReads.cpp - the kiln-place-kernel-call-reads pass ---===//
//
// This file implements the pass that gives each kernel-library call operand
// its own bufferization.to_memref right before the call, so one-shot
// bufferization sees every read where it happens.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "kiln/Transforms/KernelCallOperands.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_PLACEKERNELCALLREADS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The tensor a call operand's buffer holds: `to_memref %tensor`, or a
/// buffer another call wrote that a `to_tensor` (before this call) made a
/// tensor of (canonicalization folds to_memref(to_tensor(%buffer)) to
/// %buffer, hiding the read). Null when neither.
Value tensorBehind(Value buffer, func::CallOp call) {
  if (auto read = buffer.getDefiningOp<bufferization::ToMemrefOp>())
    return read.getTensor();
  for (Operation *user : buffer.getUsers())
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(user))
      if (toTensor->getBlock() == call->getBlock() &&
          toTensor->isBeforeInBlock(call))
        return toTensor.getResult();
  return Value();
}

struct PlaceKernelCallReadsPass
    : kiln::impl::PlaceKernelCallReadsBase<PlaceKernelCallReadsPass> {
  void runOnOperation() override {
    SmallVector<func::CallOp> calls;
    getOperation().walk([&](func::CallOp call) {
      if (kiln::isKernelCall(call))
        calls.push_back(call);
    });
    // Each op once (operands may share a chain), users before their operands.
    llvm::SetVector<Operation *> maybeDead;
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      // The last operand is the output the call writes: not a read.
      for (OpOperand &operand : call->getOpOperands().drop_back()) {
        std::optional<kiln::KernelCallPointer> chain =
            kiln::kernelCallPointer(operand.get());
        Value tensor = chain ? tensorBehind(chain->buffer(), call) : Value();
        if (!tensor)
          continue;
        Value read = b.create<bufferization::ToMemrefOp>(
            call.getLoc(), chain->buffer().getType(), tensor,
            /*read_only=*/true);
        IRMapping mapping;
        mapping.map(chain->buffer(), read);
        Operation *extract = b.clone(*chain->extract, mapping);
        mapping.map(chain->extract.getResult(), extract->getResult(0));
        Operation *cast = b.clone(*chain->cast, mapping);
        mapping.map(chain->cast.getResult(), cast->getResult(0));
        Operation *pointer = b.clone(*chain->pointer, mapping);
        operand.set(pointer->getResult(0));
        for (Operation *op : {chain->pointer.getOperation(),
                              chain->cast.getOperation(),
                              chain->extract.getOperation(),
                              chain->buffer().getDefiningOp()})
          if (op && isa<LLVM::IntToPtrOp, arith::IndexCastOp,
                        memref::ExtractAlignedPointerAsIndexOp,
                        bufferization::ToMemrefOp>(op))
            maybeDead.insert(op);
      }
    }
    for (Operation *op : maybeDead)
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
