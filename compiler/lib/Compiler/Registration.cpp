//===- Registration.cpp - the dialects and interfaces Kiln uses -----------===//
//
// This file implements dialect and pass registration for Kiln's tools and
// compiler entry point.
//
//===----------------------------------------------------------------------===//
#include "Registration.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Aten/IR/AtenDialect.h"
#include "kiln/Pipeline/Pipelines.h"
#include "kiln/Placement/Passes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

void registerKilnDialects(DialectRegistry &registry) {
  registry.insert<aten::AtenDialect, affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, tensor::TensorDialect,
                  vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerTilingInterfaceExternalModels(registry);
  affine::registerValueBoundsOpInterfaceExternalModels(registry);
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  linalg::registerValueBoundsOpInterfaceExternalModels(registry);
  scf::registerValueBoundsOpInterfaceExternalModels(registry);
  tensor::registerValueBoundsOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void registerKilnPasses() {
  registerKilnConversionPasses();
  registerDecomposeAten();
  registerFoldBroadcastProducts();
  registerFoldSafeSoftmax();
  registerSinkPermutes();
  registerFuseElementwise();
  registerApproximateMath();
  registerTileAndVectorize();
  registerLowerVectorContracts();
  registerPlanBuffers();
  registerInsertDeallocs();
  registerStackLoopBuffers();
  registerWriteTilesInPlace();
  registerPlaceKernelCallReads();
  registerCopyReturnedArguments();
  registerBareBoundary();
  registerDebugMiscompile();
  registerEmitEntryPoint();
  registerOutlineParallelLoops();
  registerLowerParallelLaunches();
  registerPlaceNodes();
  registerKilnPipelines();
  // Upstream passes the pipelines use, so lit tests can run them alone.
  registerTransformsPasses();
  registerLinalgPasses();
  bufferization::registerBufferizationPasses();
  memref::registerMemRefPasses();
  registerSCFPasses();
  registerConversionPasses();
}

} // namespace kiln
