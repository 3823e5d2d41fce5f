//===- NodeSupport.cpp - which graph nodes a target can compile -----------===//
//
// This file implements checkNodeSupport(): the graph is imported once in
// placement's mode (a node Kiln cannot import stays as an aten.operator),
// kiln-place-nodes places every node, and its plan is read back per node.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/NodeSupport.h"

#include "Registration.h"

#include "kiln/Import/GraphImporter.h"
#include "kiln/Placement/Passes.h"
#include "kiln/Support/DiagnosticCollector.h"
#include "kiln/Target/Target.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace kiln::compiler {

absl::StatusOr<std::vector<NodeSupport>>
checkNodeSupport(const v1::Graph &graph, const CompileOptions &options) {
  if (!lookupTarget(options.target))
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target '", options.target, "'; this compiler supports: ",
                     absl::StrJoin(targetNames(), ", ")));
  if (graph.symbols_size() > 0)
    return absl::UnimplementedError(
        "placement checks graphs of static sizes only: a graph with symbolic "
        "sizes compiles whole or not at all (its segments would need symbols "
        "their own inputs bind)");
  DialectRegistry registry;
  registerKilnDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  DiagnosticCollector diagnostics(context);

  ImportOptions importOptions;
  importOptions.keepUnsupportedNodes = true;
  ASSIGN_OR_RETURN(OwningOpRef<ModuleOp> module,
                   importGraph(graph, context, importOptions));
  PassManager pm(&context);
  PlaceNodesOptions placeOptions;
  placeOptions.targetName = options.target;
  pm.addPass(createPlaceNodes(placeOptions));
  if (failed(pm.run(*module)))
    return absl::InternalError(
        absl::StrCat("placement failed: ", diagnostics.take()));

  std::vector<NodeSupport> result(graph.nodes_size());
  module->walk([&](Operation *op) {
    auto node = op->getAttrOfType<IntegerAttr>(kNodeAttrName);
    auto placement = op->getAttrOfType<StringAttr>(kPlacementAttrName);
    if (!node || !placement || placement.getValue() != kHostPlacement ||
        node.getInt() < 0 || node.getInt() >= graph.nodes_size())
      return;
    NodeSupport &support = result[node.getInt()];
    if (!support.supported)
      return;
    support.supported = false;
    if (auto reason = op->getAttrOfType<StringAttr>(kPlacementReasonAttrName))
      support.reason = reason.str();
  });
  return result;
}

} // namespace kiln::compiler
