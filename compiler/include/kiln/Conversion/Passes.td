//===- Passes.td - Kiln conversion passes ------------------*- tablegen -*-===//
//
// This file declares the passes that convert between dialects.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAtenToLinalg : Pass<"kiln-convert-aten-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Lower the aten dialect to linalg-on-tensors, tensor, arith and math";
  let description = [{
    Every aten op becomes linalg (named ops for matrix products, generics for
    elementwise maps and reductions), tensor reshapes, arith and math. An op
    without a lowering fails the pass with a diagnostic naming it.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

def ConvertAtenToKernelCalls
    : Pass<"kiln-convert-aten-to-kernel-calls", "mlir::ModuleOp"> {
  let summary = "Hand the ops a kernel library does best to that library";
  let description = [{
    Runs before kiln-convert-aten-to-linalg, for targets whose loader
    provides a kernel library (compiler/runtime/kiln_rt_kernels.h). Every
    f32 aten.convolution with 1-3 spatial dims that is not transposed and
    has no empty extent becomes a call to the target runtime's
    kiln_rt_convolution_f32: its operands as read-only buffers, a fresh
    output buffer, the call site's geometry as a constant int64 array and a
    zero-initialised state slot (both private memref.globals). Other
    convolutions are left to the generated-code lowering.
  }];
  let options = [
    Option<"library", "library", "std::string", /*default=*/"\"onednn\"",
           "The kernel library the loader provides (only 'onednn')">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect"
  ];
}

#endif // KILN_CONVERSION_PASSES_TD
