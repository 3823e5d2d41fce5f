//===- Passes.td - Kiln placement passes -------------------*- tablegen -*-===//
//
// This file declares the passes that decide where each node of an imported
// graph runs: on the compile's target, or on the host.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PLACEMENT_PASSES_TD
#define KILN_PLACEMENT_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlaceNodes : Pass<"kiln-place-nodes", "mlir::ModuleOp"> {
  let summary = "Place every graph node on the target or on the host";
  let description = [{
    Runs on a graph imported in placement's mode (ImportOptions::
    keepUnsupportedNodes): one `func.func` whose ops carry `kiln.node`, the
    position of the graph node they were imported from, and where a node
    Kiln cannot import stays as one `aten.operator`. An aten op without
    `kiln.node` is a node of its own; other ops without it (the importer's
    argument handling) are not placed.

    Each node is checked on its own: its ops are copied into a scratch
    module as `@kiln_main`, with the values it reads as arguments and the
    values others read from it as results, and lowered as the target
    would: to linalg by the aten-to-linalg pipeline, or, for a target that
    emits from the aten dialect (mdla), by its emitter. A node holding an
    `aten.operator`, or whose check fails, goes to the host. Nodes that
    copy to the same scratch function are checked once.

    Every op of a node gets `kiln.placement`, "target" or "host", and a
    host node's ops get `kiln.placement_reason`: the importer's or the
    lowering's message. checkNodeSupport (NodeSupport.h) reads the plan
    back per node for kilnd's placement.
  }];
  let options = [
    Option<"targetName", "target", "std::string", /*default=*/"\"cpu\"",
           "The compile target whose lowering decides (cpu, riscv64, mdla, acap)">
  ];
}

#endif // KILN_PLACEMENT_PASSES_TD
