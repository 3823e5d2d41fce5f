//===- PlaceNodes.cpp - the kiln-place-nodes pass -------------------------===//
//
// This file implements the pass that places each node of an imported graph
// on the compile's target or on the host: every node's ops are copied into
// a scratch module nested in the one being placed, lowered there as the
// target lowers them, and the outcome is written on the node's ops.
//
//===----------------------------------------------------------------------===//
#include "kiln/Placement/Passes.h"

#include "kiln/Dialect/Aten/IR/AtenDialect.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Import/GraphImporter.h"
#include "kiln/Pipeline/Pipelines.h"
#include "kiln/Support/DiagnosticCollector.h"
#include "kiln/Target/Target.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/IR/IRMapping.h"

#include <map>
#include <optional>
#include <unordered_map>

namespace kiln {
#define GEN_PASS_DEF_PLACENODES
#include "kiln/Placement/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

using Group = SmallVector<Operation *>;

/// The body's ops by node, in body order: those with the same kiln.node
/// together, an aten op without one alone; other ops are not placed.
SmallVector<Group> nodeGroups(func::FuncOp func) {
  SmallVector<Group> groups;
  std::map<int64_t, size_t> groupOf;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto node = op.getAttrOfType<IntegerAttr>(kiln::kNodeAttrName)) {
      auto [it, fresh] = groupOf.try_emplace(node.getInt(), groups.size());
      if (fresh)
        groups.emplace_back();
      groups[it->second].push_back(&op);
    } else if (isa<kiln::aten::AtenDialect>(op.getDialect())) {
      groups.push_back({&op});
    }
  }
  return groups;
}

/// The group alone as `@kiln_main` at the end of `scratch`: the values it
/// reads from outside become arguments in first-use order, and it returns
/// the values read outside it (the last op's first result when none is,
/// as for a node nothing reads). The
/// copies lose the placement attributes, so that equal nodes copy alike.
void isolate(const Group &group, func::FuncOp from, ModuleOp scratch) {
  Block &body = from.getBody().front();
  llvm::SmallPtrSet<Operation *, 8> members(group.begin(), group.end());
  auto insideGroup = [&](Operation *op) {
    Operation *top = op ? body.findAncestorOpInBlock(*op) : nullptr;
    return top && members.contains(top);
  };
  llvm::SetVector<Value> inputs;
  for (Operation *op : group)
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *owner = operand.getDefiningOp();
        if (!owner)
          owner = operand.getParentBlock()->getParentOp();
        if (!insideGroup(owner))
          inputs.insert(operand);
      }
    });
  SmallVector<Value> outputs;
  for (Operation *op : group)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !insideGroup(user); }))
        outputs.push_back(result);
  if (outputs.empty() && group.back()->getNumResults() > 0)
    outputs.push_back(group.back()->getResult(0));

  OpBuilder b = OpBuilder::atBlockEnd(scratch.getBody());
  Location loc = group.front()->getLoc();
  SmallVector<Type> argTypes, resultTypes;
  for (Value input : inputs)
    argTypes.push_back(input.getType());
  for (Value output : outputs)
    resultTypes.push_back(output.getType());
  auto func = b.create<func::FuncOp>(loc, kiln::kGraphFunctionName,
                                     b.getFunctionType(argTypes, resultTypes));
  Block *entry = func.addEntryBlock();
  IRMapping mapping;
  mapping.map(inputs.getArrayRef(), entry->getArguments());
  b.setInsertionPointToStart(entry);
  for (Operation *op : group) {
    Operation *copy = b.clone(*op, mapping);
    for (StringRef attr : {StringRef(kiln::kNodeAttrName),
                           StringRef(kiln::kPlacementAttrName),
                           StringRef(kiln::kPlacementReasonAttrName)})
      copy->removeAttr(attr);
  }
  SmallVector<Value> returned;
  for (Value output : outputs)
    returned.push_back(mapping.lookup(output));
  b.create<func::ReturnOp>(loc, returned);
}

/// The scratch function's text, without locations: equal nodes, equal keys.
std::string keyOf(ModuleOp scratch) {
  std::string text;
  llvm::raw_string_ostream os(text);
  scratch.getBody()->front().print(os, OpPrintingFlags().printGenericOpForm());
  return text;
}

/// A graph naming the scratch function's arguments a0, a1... and its
/// results r0, r1..., for a target that emits from the aten dialect (it
/// takes its names from the graph and its types from the module).
kiln::v1::Graph namesFor(ModuleOp scratch) {
  auto func = cast<func::FuncOp>(scratch.getBody()->front());
  kiln::v1::Graph graph;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    graph.add_inputs()->set_name(absl::StrCat("a", i));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    graph.add_outputs(absl::StrCat("r", i));
  return graph;
}

struct PlaceNodesPass : kiln::impl::PlaceNodesBase<PlaceNodesPass> {
  using PlaceNodesBase::PlaceNodesBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager toLinalg(ModuleOp::getOperationName());
    kiln::buildKilnAtenToLinalgPipeline(toLinalg);
    toLinalg.getDependentDialects(registry);
  }

  LogicalResult initialize(MLIRContext *) override {
    target = kiln::compiler::lookupTarget(targetName);
    toLinalg.emplace(ModuleOp::getOperationName());
    kiln::buildKilnAtenToLinalgPipeline(*toLinalg);
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!target) {
      module.emitError() << "kiln-place-nodes: unknown target '" << targetName
                         << "'; known: "
                         << absl::StrJoin(kiln::compiler::targetNames(), ", ");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      for (const Group &group : nodeGroups(func))
        place(group, func);
  }

private:
  /// Checks the group and writes where it runs on each of its ops.
  void place(const Group &group, func::FuncOp func) {
    std::string reason;
    for (Operation *op : group)
      if (auto unsupported = dyn_cast<kiln::aten::OperatorOp>(op)) {
        reason = unsupported.getReason().str();
        break;
      }
    if (reason.empty())
      reason = check(group, func);
    bool onTarget = reason.empty();
    Builder b(&getContext());
    for (Operation *op : group) {
      op->setAttr(kiln::kPlacementAttrName,
                  b.getStringAttr(onTarget ? kiln::kTargetPlacement
                                           : kiln::kHostPlacement));
      if (onTarget)
        op->removeAttr(kiln::kPlacementReasonAttrName);
      else
        op->setAttr(kiln::kPlacementReasonAttrName, b.getStringAttr(reason));
    }
  }

  /// Why the target cannot compile the group; empty when it can.
  std::string check(const Group &group, func::FuncOp func) {
    ModuleOp module = getOperation();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto scratch = b.create<ModuleOp>(group.front()->getLoc());
    isolate(group, func, scratch);
    std::string key = keyOf(scratch);
    auto known = checked.find(key);
    if (known != checked.end()) {
      scratch.erase();
      return known->second;
    }
    std::string why;
    // The check's diagnostics are its answer, not the pass's errors.
    kiln::DiagnosticCollector diagnostics(getContext());
    if (target->emitsFromAten()) {
      absl::StatusOr<std::string> artifact =
          target->emitFromAten(scratch, namesFor(scratch), nullptr);
      if (!artifact.ok())
        why = std::string(artifact.status().message());
    } else {
      if (failed(runPipeline(*toLinalg, scratch)))
        why = absl::StrCat("its lowering to linalg failed: ", diagnostics.take());
    }
    scratch.erase();
    checked.emplace(std::move(key), why);
    return why;
  }

  const kiln::compiler::Target *target = nullptr;
  std::optional<OpPassManager> toLinalg;
  /// What each scratch function's check found, by its text.
  std::unordered_map<std::string, std::string> checked;
};

} // namespace
