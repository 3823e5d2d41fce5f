//===- Passes.td - Kiln conversion passes ------------------*- tablegen -*-===//
//
// This file declares the passes that convert between dialects.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAtenToLinalg : Pass<"kiln-convert-aten-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Lower the aten dialect to linalg-on-tensors, tensor, arith, math, scf and vector";
  let description = [{
    Every aten op becomes linalg (named ops for matrix products, generics for
    elementwise maps and reductions), tensor reshapes, arith and math; a
    sort of rows longer than 256 elements becomes scf loops (a merge sort),
    and a scan (cumsum, cumprod, cummax, cummin, logcumsumexp) along a dim
    longer than 128 a loop over the dim carrying the running values. An op
    without a lowering fails the pass with a diagnostic naming it; the
    composite ops (quantization, searchsorted, topk, kthvalue,
    scatter_reduce, the scans along dims of at most 128, ...) have none,
    and kiln-decompose-aten must run first.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "mlir::vector::VectorDialect"
  ];
}

def DeclareLibmCalls : Pass<"kiln-declare-libm-calls", "mlir::ModuleOp"> {
  let summary = "Declare the libm functions the pointwise lowering calls";
  let description = [{
    A few aten.pointwise functions lower to calls of libm's double
    functions by name: lgamma, and erfc (also inside erfcx, erfinv and
    ndtri). Every loader resolves them (libm on Linux, picolibc in
    bare-metal bundles). kiln-convert-aten-to-linalg runs on one function
    at a time and cannot add symbols to the module, so this pass declares
    them first, once each, as `func.func private @erfc(f64) -> f64`, for
    the functions the module's aten.pointwise ops use. A symbol of such a
    name that is anything else fails the pass, naming it.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def ConvertAtenToKernelCalls
    : Pass<"kiln-convert-aten-to-kernel-calls", "mlir::ModuleOp"> {
  let summary = "Hand the ops a kernel library does best to that library";
  let description = [{
    Runs before kiln-convert-aten-to-linalg, for targets whose loader
    provides a kernel library (compiler/runtime/kiln_rt_kernels.h). With
    every operand f32 and no empty extent:
    * an aten.convolution with 1-3 spatial dims that is not transposed
      becomes a call to the target runtime's kiln_rt_convolution_f32;
    * aten.mm, aten.bmm, and aten.addmm with alpha = beta = 1 and a bias of
      shape (n) or (1, n) become calls to kiln_rt_matmul_f32. An operand
      that is an aten.permute swapping its last two dims is passed
      untransposed with a flag (the permute goes when nothing else reads
      it).
    Each call takes its operands as read-only buffers, a fresh output
    buffer, the call site's geometry as a constant int64 array and a
    zero-initialised state slot (both private memref.globals). Other ops are
    left to the generated-code lowering.

    For the 'aie' library a relu after a call is folded into its epilogue
    (the array's relu keeps NaN; oneDNN's does not). With
    `elementwise-chains`, runs of elementwise ops on one static f32 shape
    of at least 64 elements (add, sub, mul, div with tensor or splat
    operands, relu, neg, maximum, minimum, clamp), each result read only by
    the next op, become calls to kiln_rt_elementwise_f32 with up to 4
    inputs and 8 steps; the chains with the most work first, while
    `max-calls` allows.

    With `channels-last`, a convolution's call reads and writes its data
    channels last (the geometry's channels_last): its input becomes
    aten.permute(x, [0, 2, ..., 1]), its residual likewise, and its result
    aten.permute(y, [0, r-1, 1, ..., r-2]) of the call's output.
    kiln-sink-permutes then cancels the pairs between convolutions.
  }];
  let options = [
    Option<"library", "library", "std::string", /*default=*/"\"onednn\"",
           "The kernel library the loader provides: 'onednn' (the cpu "
           "agent's) or 'aie' (the acap agent's AI Engine array)">,
    Option<"channelsLast", "channels-last", "bool", /*default=*/"false",
           "Give convolution calls channels-last data (oneDNN's fastest "
           "layout on x86-64)">,
    Option<"elementwiseChains", "elementwise-chains", "bool",
           /*default=*/"false",
           "Also give the library elementwise chains ('aie' only)">,
    Option<"maxCalls", "max-calls", "int64_t", /*default=*/"0",
           "Call sites the loader can hold (0: any number). Convolutions "
           "and products always become calls; chains only while this lasts">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect"
  ];
}

#endif // KILN_CONVERSION_PASSES_TD
