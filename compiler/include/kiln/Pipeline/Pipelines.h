//===- Pipelines.h - Kiln's pass pipelines --------------------------------===//
//
// This file declares the pass pipelines of a compile: aten -> linalg, and
// linalg -> LLVM dialect for the CPU target.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

/// Knobs of the aten-to-linalg pipeline.
struct AtenToLinalgOptions : mlir::PassPipelineOptions<AtenToLinalgOptions> {
  Option<std::string> kernelLibrary{
      *this, "kernel-library",
      llvm::cl::desc("Hand the ops this kernel library does best to it "
                     "(kiln-convert-aten-to-kernel-calls; empty: none)"),
      llvm::cl::init("")};
  Option<int64_t> maxKernelCalls{
      *this, "max-kernel-calls",
      llvm::cl::desc("Call sites the library's loader can hold (0: any); "
                     "elementwise chains become calls only while they last"),
      llvm::cl::init(0)};
};

/// Lowers the aten dialect to linalg-on-tensors and cleans up; with a
/// kernel library, first turns the ops it takes into calls to it.
void buildKilnAtenToLinalgPipeline(mlir::OpPassManager &pm,
                                   const AtenToLinalgOptions &options = {});

/// Knobs of the CPU code generation pipeline.
struct CpuCodegenOptions : mlir::PassPipelineOptions<CpuCodegenOptions> {
  Option<bool> vectorizeMatmul{*this, "vectorize-matmul",
                               llvm::cl::desc("Tile and vectorize matmuls"),
                               llvm::cl::init(true)};
  Option<int64_t> registerTileM{*this, "register-tile-m",
                                llvm::cl::desc("Rows of the register tile"),
                                llvm::cl::init(4)};
  Option<int64_t> registerTileN{*this, "register-tile-n",
                                llvm::cl::desc("Columns of the register tile"),
                                llvm::cl::init(16)};
  Option<int64_t> transposeTile{
      *this, "transpose-tile",
      llvm::cl::desc("Vectorize innermost-dim transposes in blocks of this "
                     "side (0: leave them to LLVM)"),
      llvm::cl::init(0)};
  Option<bool> parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("Run outer parallel loops on the loading process's "
                     "thread pool through kiln_rt_parallel_for (the target "
                     "runtime must provide it)"),
      llvm::cl::init(false)};
  Option<bool> planBuffers{
      *this, "plan-buffers",
      llvm::cl::desc("Place the entry's temporary buffers in one arena at "
                     "compile-time offsets (kiln-plan-buffers)"),
      llvm::cl::init(false)};
};

/// linalg-on-tensors -> LLVM dialect with the C-ABI entry point: fusion,
/// tiling and vectorization, one-shot bufferization, lowering to LLVM.
void buildKilnCpuCodegenPipeline(mlir::OpPassManager &pm,
                                 const CpuCodegenOptions &options);

/// Registers `kiln-aten-to-linalg-pipeline` and `kiln-cpu-codegen-pipeline`.
void registerKilnPipelines();

} // namespace kiln
