//===- KernelCallOperands.h - what a kernel-library call points at -*- C++ -*-===//
//
// This file declares how the passes after kiln-convert-aten-to-kernel-calls
// find the buffers behind a kernel-library call's pointer operands: each is
// inttoptr(index_cast(extract_aligned_pointer(buffer))), and the last one
// is the output the call writes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <optional>

namespace kiln {

/// A call into the kernel library (`kiln_rt_*`).
bool isKernelCall(mlir::func::CallOp call);

/// The ops that turn a buffer into a call's pointer operand.
struct KernelCallPointer {
  mlir::memref::ExtractAlignedPointerAsIndexOp extract;
  mlir::arith::IndexCastOp cast;
  mlir::LLVM::IntToPtrOp pointer;
  mlir::Value buffer() { return extract.getSource(); }
};

/// The chain behind `operand`, when it is one.
std::optional<KernelCallPointer> kernelCallPointer(mlir::Value operand);

/// The buffer a kernel-library call writes (its last operand), or null for
/// any other op.
mlir::Value kernelCallOutput(mlir::Operation *op);

} // namespace kiln
