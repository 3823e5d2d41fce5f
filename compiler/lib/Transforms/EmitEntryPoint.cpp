//===- EmitEntryPoint.cpp - the kiln-emit-entry-point pass ----------------===//
//
// This file implements the C-ABI entry point `void entry(void **buffers)`
// that unpacks one pointer per argument and calls the compiled graph.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_EMITENTRYPOINT
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct EmitEntryPointPass
    : kiln::impl::EmitEntryPointBase<EmitEntryPointPass> {
  using EmitEntryPointBase::EmitEntryPointBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(callee);
    if (!target) {
      module.emitError() << "no llvm.func @" << callee << " to wrap";
      return signalPassFailure();
    }
    if (module.lookupSymbol(entrySymbol)) {
      module.emitError() << "symbol @" << entrySymbol << " already exists";
      return signalPassFailure();
    }
    auto ptrType = LLVM::LLVMPointerType::get(&getContext());
    LLVM::LLVMFunctionType calleeType = target.getFunctionType();
    for (Type param : calleeType.getParams()) {
      if (param != ptrType) {
        target.emitOpError()
            << "argument of type " << param
            << " is not a bare pointer; the entry point needs static memrefs";
        return signalPassFailure();
      }
    }

    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    Location loc = target.getLoc();
    auto entryType = LLVM::LLVMFunctionType::get(
        LLVM::LLVMVoidType::get(&getContext()), {ptrType});
    auto entry = builder.create<LLVM::LLVMFuncOp>(loc, entrySymbol, entryType);
    Block *body = entry.addEntryBlock(builder);
    builder.setInsertionPointToStart(body);
    SmallVector<Value> args;
    for (unsigned i = 0, e = calleeType.getNumParams(); i < e; ++i) {
      Value slot = builder.create<LLVM::GEPOp>(
          loc, ptrType, ptrType, body->getArgument(0),
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      args.push_back(builder.create<LLVM::LoadOp>(loc, ptrType, slot));
    }
    builder.create<LLVM::CallOp>(loc, target, args);
    builder.create<LLVM::ReturnOp>(loc, ValueRange{});
  }
};

} // namespace
