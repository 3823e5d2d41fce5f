//===- kiln-opt.cpp - Kiln's mlir-opt -------------------------------------===//
//
// This file implements kiln-opt: mlir-opt with Kiln's dialects, passes and
// pipelines, for lit tests and debugging.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Compiler/Registration.h"

#include "kiln/Analysis/OpReport.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  kiln::registerKilnPasses();
  kiln::analysis::registerOpReportPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
