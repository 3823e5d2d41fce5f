//===- Passes.h - Kiln transformation passes ------------------------------===//
//
// This file declares Kiln's transformation passes and their registration.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// On a launch declaration: the task body it runs (written by
/// kiln-outline-parallel-loops, read by kiln-lower-parallel-launches).
inline constexpr llvm::StringLiteral kParallelBodyAttrName =
    "kiln.parallel_body";

#define GEN_PASS_DECL
#include "kiln/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Transforms/Passes.h.inc"

} // namespace kiln
