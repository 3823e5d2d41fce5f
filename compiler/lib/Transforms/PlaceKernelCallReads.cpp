//===- PlaceKernelCallReads.cpp - the kiln-place-kernel-call-reads pass ---===//
//
// This file implements the pass that gives each kernel-library call operand
// its own bufferization.to_memref right before the call, so one-shot
// bufferization sees every read where it happens.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_PLACEKERNELCALLREADS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The chain a kernel call's pointer operand is made of:
/// inttoptr(index_cast(extract_aligned_pointer(buffer))), and the tensor the
/// buffer holds: `to_memref %tensor`, or a buffer another call wrote that a
/// `to_tensor` (before this call) made a tensor of (canonicalization folds
/// to_memref(to_tensor(%buffer)) to %buffer, hiding the read).
struct PointerChain {
  Value tensor;
  memref::ExtractAlignedPointerAsIndexOp extract;
  arith::IndexCastOp cast;
  LLVM::IntToPtrOp pointer;
};

std::optional<PointerChain> chainOf(Value operand, func::CallOp call) {
  PointerChain chain;
  chain.pointer = operand.getDefiningOp<LLVM::IntToPtrOp>();
  if (!chain.pointer)
    return std::nullopt;
  chain.cast = chain.pointer.getArg().getDefiningOp<arith::IndexCastOp>();
  if (!chain.cast)
    return std::nullopt;
  chain.extract = chain.cast.getIn()
                      .getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>();
  if (!chain.extract)
    return std::nullopt;
  Value buffer = chain.extract.getSource();
  if (auto read = buffer.getDefiningOp<bufferization::ToMemrefOp>()) {
    chain.tensor = read.getTensor();
    return chain;
  }
  for (Operation *user : buffer.getUsers())
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(user))
      if (toTensor->getBlock() == call->getBlock() &&
          toTensor->isBeforeInBlock(call)) {
        chain.tensor = toTensor.getResult();
        return chain;
      }
  return std::nullopt;
}

struct PlaceKernelCallReadsPass
    : kiln::impl::PlaceKernelCallReadsBase<PlaceKernelCallReadsPass> {
  void runOnOperation() override {
    SmallVector<func::CallOp> calls;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("kiln_rt_"))
        calls.push_back(call);
    });
    // Each op once (operands may share a chain), users before their operands.
    llvm::SetVector<Operation *> maybeDead;
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      // The last operand is the output the call writes: not a read.
      for (OpOperand &operand : call->getOpOperands().drop_back()) {
        std::optional<PointerChain> chain = chainOf(operand.get(), call);
        if (!chain)
          continue;
        Type bufferType = chain->extract.getSource().getType();
        Value read = b.create<bufferization::ToMemrefOp>(
            call.getLoc(), bufferType, chain->tensor, /*read_only=*/true);
        IRMapping mapping;
        mapping.map(chain->extract.getSource(), read);
        Operation *extract = b.clone(*chain->extract, mapping);
        mapping.map(chain->extract.getResult(), extract->getResult(0));
        Operation *cast = b.clone(*chain->cast, mapping);
        mapping.map(chain->cast.getResult(), cast->getResult(0));
        Operation *pointer = b.clone(*chain->pointer, mapping);
        operand.set(pointer->getResult(0));
        for (Operation *op : {chain->pointer.getOperation(),
                              chain->cast.getOperation(),
                              chain->extract.getOperation(),
                              chain->extract.getSource().getDefiningOp()})
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
