//===- DeclareLibmCalls.cpp - the kiln-declare-libm-calls pass ------------===//
//
// This file implements the pass that declares, in the module, the libm
// functions the pointwise lowering calls by name (the `libmCalls` of its
// rows in PointwiseTable.h), so
// that kiln-convert-aten-to-linalg, which runs on one function at a time,
// never has to add a symbol.
//
//===----------------------------------------------------------------------===//
#include "PointwiseTable.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_DECLARELIBMCALLS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct DeclareLibmCallsPass : kiln::impl::DeclareLibmCallsBase<DeclareLibmCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::SetVector<StringRef> needed;
    module.walk([&](kiln::aten::PointwiseOp op) {
      if (const kiln::aten::PointwiseLowering *row = kiln::aten::lookupPointwiseLowering(op.getFn()))
        for (StringRef fn : row->libmCalls)
          needed.insert(fn);
    });
    if (needed.empty())
      return;
    SymbolTable symbols(module);
    auto builder = OpBuilder::atBlockBegin(module.getBody());
    Type f64 = builder.getF64Type();
    FunctionType type = builder.getFunctionType({f64}, {f64});
    for (StringRef name : needed) {
      if (Operation *existing = symbols.lookup(name)) {
        auto declared = dyn_cast<func::FuncOp>(existing);
        if (declared && declared.isDeclaration() && declared.getFunctionType() == type)
          continue;
        existing->emitError() << "the symbol '" << name << "' is libm's double " << name
                              << "(double), which the pointwise lowering calls";
        return signalPassFailure();
      }
      auto declaration = builder.create<func::FuncOp>(module.getLoc(), name, type);
      declaration.setPrivate();
    }
  }
};

} // namespace
