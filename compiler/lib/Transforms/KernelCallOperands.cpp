//===- KernelCallOperands.cpp - what a kernel-library call points at ------===//
//
// This file implements the pointer-chain lookups of KernelCallOperands.h.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/KernelCallOperands.h"

using namespace mlir;

namespace kiln {

bool isKernelCall(func::CallOp call) {
  return call.getCallee().starts_with("kiln_rt_");
}

std::optional<KernelCallPointer> kernelCallPointer(Value operand) {
  KernelCallPointer chain;
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
  return chain;
}

Value kernelCallOutput(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call || !isKernelCall(call) || call.getNumOperands() == 0)
    return Value();
  std::optional<KernelCallPointer> chain =
      kernelCallPointer(call.getOperands().back());
  return chain ? chain->buffer() : Value();
}

} // namespace kiln
