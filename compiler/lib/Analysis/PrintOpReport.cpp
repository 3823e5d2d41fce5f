//===- PrintOpReport.cpp - the op report as a kiln-opt test pass ----------===//
//
// This file implements `kiln-print-op-report`: it prints the op report of the
// module's function (OpReport.h) to stdout and leaves the module unchanged,
// so lit tests can check the cost table on hand-written aten IR. Layers are
// named by `loc("name")`; the first `num-parameters` arguments are weights.
//
//===----------------------------------------------------------------------===//
#include "kiln/Analysis/OpReport.h"

#include "kiln/Dialect/Aten/IR/AtenDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::analysis {
namespace {

struct PrintOpReportPass
    : public PassWrapper<PrintOpReportPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrintOpReportPass)

  PrintOpReportPass() = default;
  PrintOpReportPass(const PrintOpReportPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "kiln-print-op-report"; }
  StringRef getDescription() const final {
    return "Print the op report (per-layer MACs, FLOPs and bytes) of the "
           "aten-level function";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<aten::AtenDialect, func::FuncDialect>();
  }

  void runOnOperation() override {
    OpReportOptions options;
    options.numParameters = numParameters;
    FailureOr<v1::OpReport> report = buildOpReport(getOperation(), options);
    if (failed(report)) {
      getOperation().emitError("op report: expected one function (or @kiln_main)");
      return signalPassFailure();
    }
    llvm::outs() << formatOpReport(*report);
    markAllAnalysesPreserved();
  }

  Option<unsigned> numParameters{
      *this, "num-parameters",
      llvm::cl::desc("Leading function arguments that are parameters"),
      llvm::cl::init(0)};
};

} // namespace

void registerOpReportPasses() { PassRegistration<PrintOpReportPass>(); }

} // namespace kiln::analysis
