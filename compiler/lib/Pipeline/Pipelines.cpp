//===- Pipelines.cpp - Kiln's pass pipelines ------------------------------===//
//
// This file implements the aten-to-linalg and CPU code generation pipelines.
//
//===----------------------------------------------------------------------===//
#include "kiln/Pipeline/Pipelines.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

void buildKilnAtenToLinalgPipeline(OpPassManager &pm,
                                   const AtenToLinalgOptions &options) {
  // Composite ops first: what follows sees only the ops they decompose to.
  // (A kernel call that takes quantized operands would match
  // aten.quantize/aten.dequantize before this instead.)
  pm.addNestedPass<func::FuncOp>(createDecomposeAten());
  pm.addNestedPass<func::FuncOp>(createFoldBroadcastProducts());
  pm.addNestedPass<func::FuncOp>(createFoldSafeSoftmax());
  if (!options.kernelLibrary.empty()) {
    ConvertAtenToKernelCallsOptions kernelCalls;
    kernelCalls.library = options.kernelLibrary;
    // oneDNN's x86-64 convolutions compute channels last: keep activations
    // so between them instead of reordering around every call.
    kernelCalls.channelsLast = options.kernelLibrary == "onednn";
    // The AI Engine array also runs elementwise chains, one per tile.
    kernelCalls.elementwiseChains = options.kernelLibrary == "aie";
    kernelCalls.maxCalls = options.maxKernelCalls;
    pm.addPass(createConvertAtenToKernelCalls(kernelCalls));
    if (kernelCalls.channelsLast)
      pm.addNestedPass<func::FuncOp>(createSinkPermutes());
  }
  pm.addPass(createDeclareLibmCalls());
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createConvertAtenToLinalg());
  func.addPass(createCanonicalizerPass());
  func.addPass(createCSEPass());
}

void buildKilnCpuCodegenPipeline(OpPassManager &pm,
                                 const CpuCodegenOptions &options) {
  {
    OpPassManager &func = pm.nest<func::FuncOp>();
    func.addPass(createFuseElementwise());
    func.addPass(createApproximateMath());
    func.addPass(createCanonicalizerPass());
    if (options.vectorizeMatmul) {
      TileAndVectorizeOptions tiling;
      tiling.registerTileM = options.registerTileM;
      tiling.registerTileN = options.registerTileN;
      tiling.transposeTile = options.transposeTile;
      func.addPass(createTileAndVectorize(tiling));
    }
    func.addPass(createCanonicalizerPass());
    func.addPass(createCSEPass());
  }

  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  // Copies between strided views (slices, padding, concatenation) become
  // linalg.copy loops: memref.copy would call a runtime helper we do not link.
  bufferization.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                              Value to) -> LogicalResult {
    auto isIdentity = [](Value v) {
      return cast<MemRefType>(v.getType()).getLayout().isIdentity();
    };
    if (isIdentity(from) && isIdentity(to))
      b.create<memref::CopyOp>(loc, from, to);
    else
      b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  // After the last CSE: each kernel call reads its operands where it runs.
  pm.addNestedPass<func::FuncOp>(createPlaceKernelCallReads());
  // A tile computed into a fresh tensor and inserted into a loop's shared
  // output is computed in the output's own slice instead: no buffer and no
  // copy per tile.
  pm.addNestedPass<func::FuncOp>(createWriteTilesInPlace());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // Tiled loops whose iterations are independent (scf.forall) become
  // scf.parallel: run on the thread pool, or serially by scf-to-cf.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(createCopyReturnedArguments());
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // A graph with symbolic sizes: its dynamic buffers cross as bare pointers.
  pm.addNestedPass<func::FuncOp>(createBareBoundary());
  {
    OpPassManager &func = pm.nest<func::FuncOp>();
    // CSE merges the twin subviews bufferization leaves around each tile
    // write, so canonicalization can drop the resulting self-copies.
    func.addPass(createCSEPass());
    func.addPass(createCanonicalizerPass());
    func.addPass(memref::createFoldMemRefAliasOpsPass());
    // Folding subviews gives the accumulator's read and write their own
    // (identical) index computations: merge them so hoisting sees one slot.
    func.addPass(createCSEPass());
    func.addPass(createLowerVectorContracts());
    if (options.planBuffers)
      func.addPass(createPlanBuffers());
    func.addPass(createInsertDeallocs());
    if (options.parallelLoops)
      func.addPass(createConvertLinalgToParallelLoopsPass());
    else
      func.addPass(createConvertLinalgToLoopsPass());
    func.addPass(createCanonicalizerPass());
  }

  // Fully unrolled: n-D transfers become 1-D ones in place, never a stack
  // temporary (an alloca per loop iteration overflows the stack).
  VectorTransferToSCFOptions vectorToSCF;
  vectorToSCF.enableFullUnroll(true);
  pm.addPass(createConvertVectorToSCFPass(vectorToSCF));
  pm.addPass(createLowerAffinePass());
  if (options.parallelLoops)
    pm.addPass(createOutlineParallelLoops());
  // After outlining: a task's scratch lives in its own thread's frame.
  pm.addNestedPass<func::FuncOp>(createStackLoopBuffers());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createExpandBFloat16Conversions());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createLowerParallelLaunches());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createEmitEntryPoint());
}

void registerKilnPipelines() {
  PassPipelineRegistration<AtenToLinalgOptions>(
      "kiln-aten-to-linalg-pipeline",
      "Lower the aten dialect to linalg-on-tensors",
      [](OpPassManager &pm, const AtenToLinalgOptions &options) {
        buildKilnAtenToLinalgPipeline(pm, options);
      });
  PassPipelineRegistration<CpuCodegenOptions>(
      "kiln-cpu-codegen-pipeline",
      "Lower linalg-on-tensors to the LLVM dialect for the CPU target",
      [](OpPassManager &pm, const CpuCodegenOptions &options) {
        buildKilnCpuCodegenPipeline(pm, options);
      });
}

} // namespace kiln
