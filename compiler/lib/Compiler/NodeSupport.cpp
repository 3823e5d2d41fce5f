//===- NodeSupport.cpp - which graph nodes a target can compile -----------===//
//
// This file implements checkNodeSupport(): every node becomes a one-node
// graph with canonical value names, which is imported and lowered to linalg
// in one shared MLIRContext. Identical one-node graphs are checked once.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/NodeSupport.h"

#include "DiagnosticCollector.h"
#include "GraphValues.h"
#include "Registration.h"

#include "kiln/Import/GraphImporter.h"
#include "kiln/Pipeline/Pipelines.h"
#include "kiln/Target/Target.h"
#include "kiln/common/Status.h"

#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

using namespace mlir;

namespace kiln::compiler {
namespace {

/// Names of the values the graph reads: node arguments and graph outputs.
std::unordered_set<std::string> readValues(const v1::Graph &graph) {
  std::unordered_set<std::string> read(graph.outputs().begin(),
                                       graph.outputs().end());
  for (const v1::Node &node : graph.nodes())
    for (const v1::Argument &arg : node.arguments())
      if (arg.kind_case() == v1::Argument::kValue)
        read.insert(arg.value());
  return read;
}

/// Node `index` alone: its tensor arguments become inputs named a0, a1...
/// in first-use order and its outputs r0, r1..., so that nodes differing
/// only in value names serialize alike. The one-node graph returns the
/// results the whole graph reads (the first when it reads none): an unread
/// result may be a placeholder the importer leaves undefined (batch norm's
/// saved statistics).
absl::StatusOr<v1::Graph> singleNodeGraph(const v1::Graph &graph, int index,
                                          const ValueTypes &types,
                                          const std::unordered_set<std::string> &read) {
  const v1::Node &node = graph.nodes(index);
  v1::Graph single;
  v1::Node *copy = single.add_nodes();
  *copy = node;
  std::map<std::string, std::string> renamed;
  for (v1::Argument &arg : *copy->mutable_arguments()) {
    if (arg.kind_case() != v1::Argument::kValue)
      continue;
    auto it = renamed.find(arg.value());
    if (it == renamed.end()) {
      auto type = types.find(arg.value());
      if (type == types.end())
        return absl::InvalidArgumentError(
            absl::StrCat("node ", index, " (", node.op(), "): argument '",
                         arg.name(), "' refers to unknown value '", arg.value(),
                         "'"));
      std::string name = absl::StrCat("a", renamed.size());
      v1::Value *input = single.add_inputs();
      input->set_name(name);
      *input->mutable_type() = *type->second;
      it = renamed.emplace(arg.value(), std::move(name)).first;
    }
    arg.set_value(it->second);
  }
  for (int r = 0; r < copy->outputs_size(); ++r) {
    if (node.outputs(r).name().empty())
      continue;  // a result the node leaves out stays unnamed
    std::string name = absl::StrCat("r", r);
    copy->mutable_outputs(r)->set_name(name);
    if (read.count(node.outputs(r).name()))
      single.add_outputs(name);
  }
  for (int r = 0; r < copy->outputs_size() && single.outputs().empty(); ++r)
    if (!copy->outputs(r).name().empty())
      single.add_outputs(copy->outputs(r).name());
  return single;
}

/// The message without the one-node graph's "node 0 (op): " or "node 0: "
/// prefix, which would name the wrong node.
std::string withoutNodePrefix(absl::string_view message, const std::string &op) {
  for (std::string prefix : {absl::StrCat("node 0 (", op, "): "),
                             std::string("node 0: ")})
    if (absl::ConsumePrefix(&message, prefix))
      break;
  return std::string(message);
}

/// Imports one single-node graph and lowers it to linalg, or, for a target
/// that emits from the ATen level, emits it.
absl::Status checkOne(const v1::Graph &single, const Target &target,
                      MLIRContext &context) {
  DiagnosticCollector diagnostics(context);
  ASSIGN_OR_RETURN(OwningOpRef<ModuleOp> module, importGraph(single, context));
  if (target.emitsFromAten())
    return target.emitFromAten(*module, single, nullptr).status();
  PassManager toLinalg(&context);
  buildKilnAtenToLinalgPipeline(toLinalg);
  if (failed(toLinalg.run(*module)))
    return absl::InternalError(
        absl::StrCat("its lowering to linalg failed: ", diagnostics.take()));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::vector<NodeSupport>>
checkNodeSupport(const v1::Graph &graph, const CompileOptions &options) {
  const Target *target = lookupTarget(options.target);
  if (!target)
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target '", options.target, "'; this compiler supports: ",
                     absl::StrJoin(targetNames(), ", ")));
  DialectRegistry registry;
  registerKilnDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();

  ValueTypes types = valueTypes(graph);
  std::unordered_set<std::string> read = readValues(graph);
  std::unordered_map<std::string, NodeSupport> checked;
  std::vector<NodeSupport> result;
  result.reserve(graph.nodes_size());
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const std::string &op = graph.nodes(i).op();
    ASSIGN_OR_RETURN(v1::Graph single, singleNodeGraph(graph, i, types, read));
    std::string key;
    single.SerializeToString(&key);
    auto known = checked.find(key);
    if (known != checked.end()) {
      result.push_back(known->second);
      continue;
    }
    absl::Status status = checkOne(single, *target, context);
    NodeSupport support;
    if (absl::IsInvalidArgument(status))
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", i, " (", op, "): ", withoutNodePrefix(status.message(), op)));
    if (!status.ok()) {
      support.supported = false;
      support.reason = withoutNodePrefix(status.message(), op);
    }
    checked.emplace(std::move(key), support);
    result.push_back(std::move(support));
  }
  return result;
}

} // namespace kiln::compiler
