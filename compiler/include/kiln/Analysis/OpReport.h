//===- OpReport.h - per-layer cost analysis of the aten dialect -----------===//
//
// This file declares the op report: an analysis of the ATen-level module
// (after import, before lowering) giving, per graph node, multiply-
// accumulates, arithmetic operations, parameter and activation bytes and
// memory traffic, plus totals. Bytes come from operand and result types, so
// every aten op gets them; MACs and FLOPs come from a cost table keyed by op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/executable.pb.h"
#include "kiln/v1/graph.pb.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string>

namespace kiln::analysis {

/// The arithmetic of one aten op, from the cost table.
struct OpCost {
  v1::OpCostKind kind = v1::OP_COST_KIND_UNSPECIFIED;
  int64_t macs = 0;
  int64_t flops = 0;
  /// False for pure reshapes (aten.view): no bytes move.
  bool movesData = true;
};

/// Looks `op` up in the cost table (see v1::OpCostKind for the definitions).
/// Ops the table lacks get OP_COST_KIND_UNSPECIFIED and zero arithmetic,
/// except those with SameOperandsAndResultType, which count as elementwise.
OpCost estimateOpCost(mlir::Operation *op);

/// Bytes of a statically shaped tensor (i1 counts as one byte per element,
/// as PyTorch stores bool); 0 for anything else.
int64_t tensorBytes(mlir::Type type);

/// How to read the module.
struct OpReportOptions {
  /// The graph it was imported from: names each layer's ATen op and says
  /// how many leading function arguments are parameters. Optional.
  const v1::Graph *graph = nullptr;
  /// Leading arguments that are parameters, when there is no graph.
  unsigned numParameters = 0;
};

/// Builds the report for the module's `kiln_main` (or its only function).
/// Ops are grouped into layers by their NameLoc (the importer names every op
/// of a node after the node's first output); an op without one is a layer
/// of its own. Fails only when the module has no function to analyse.
mlir::FailureOr<v1::OpReport> buildOpReport(mlir::ModuleOp module,
                                            const OpReportOptions &options);

/// Sets each layer's `unit` from the lowered module: `library` for the
/// nodes whose ops went into a call of the kernel library (a `kiln_rt_*`
/// function; the call's location names every node folded into it),
/// "generated" for the others. With an empty `library`, every layer is
/// "generated".
void markLayerUnits(mlir::ModuleOp lowered, llvm::StringRef library,
                    v1::OpReport &report);

/// The report as a fixed-width text table, one row per layer plus totals.
std::string formatOpReport(const v1::OpReport &report);

/// Registers `kiln-print-op-report` (option `num-parameters`), which prints
/// the report of a module to stdout, for kiln-opt and lit tests.
void registerOpReportPasses();

} // namespace kiln::analysis
