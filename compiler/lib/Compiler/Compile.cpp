//===- Compile.cpp - kiln.v1.Graph to an executable artifact --------------===//
//
// This file implements compileGraph(): import, lower to linalg, run the
// target's code generation pipeline, translate to LLVM IR, emit the artifact,
// and describe its signature in a manifest.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/Compile.h"

#include "kiln/Support/DiagnosticCollector.h"
#include "GraphValues.h"
#include "Registration.h"

#include "kiln/Analysis/OpReport.h"
#include "kiln/Import/GraphImporter.h"
#include "kiln/Pipeline/Pipelines.h"
#include "kiln/Target/Target.h"
#include "kiln/Transforms/Passes.h"
#include "kiln/common/NodeName.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include <algorithm>
#include <unordered_map>

using namespace mlir;

namespace kiln::compiler {
namespace {

template <typename Printable>
std::string printToString(const Printable &printable) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << printable;
  return text;
}

/// Runs `pm` on `module`; INTERNAL with MLIR's diagnostics on failure.
absl::Status runStage(PassManager &pm, ModuleOp module, const char *stage,
                      DiagnosticCollector &diagnostics) {
  if (succeeded(pm.run(module)))
    return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("compiler stage '", stage, "' failed: ", diagnostics.take()));
}

v1::ExecutableManifest buildManifest(const v1::Graph &graph, const Target &target,
                                     const MachineSpec &machine,
                                     const std::vector<int64_t> &dataDependentMax) {
  v1::ExecutableManifest manifest;
  // A model artifact (ONNX) has no symbols; its entry is its graph's name.
  manifest.set_entry_symbol(target.emitsFromAten() ? kGraphFunctionName
                                                   : "kiln_invoke");
  manifest.set_target(target.name());
  manifest.set_triple(machine.triple);
  manifest.set_format(machine.artifactFormat);
  manifest.set_compiler_build_id(compilerBuildId());
  manifest.set_cpu(machine.cpu);
  manifest.set_features(machine.requiredFeatures.empty()
                            ? machine.features
                            : machine.requiredFeatures);
  auto add = [](auto *list, const v1::Value &value) {
    v1::ManifestArgument *arg = list->Add();
    arg->set_name(value.name());
    *arg->mutable_type() = value.type();
  };
  for (const v1::Parameter &param : graph.parameters())
    add(manifest.mutable_parameters(), param.value());
  for (const v1::Value &input : graph.inputs())
    add(manifest.mutable_inputs(), input);
  auto types = valueTypes(graph);
  for (const std::string &name : graph.outputs()) {
    v1::ManifestArgument *arg = manifest.add_outputs();
    arg->set_name(name);
    *arg->mutable_type() = *types.at(name);
  }
  *manifest.mutable_symbols() = graph.symbols();
  // A data-dependent size's max is what its selection can give (the
  // importer's), which callers allocate at, not what the graph declared.
  size_t next = 0;
  for (v1::SymbolicDim &symbol : *manifest.mutable_symbols())
    if (symbol.data_dependent() && next < dataDependentMax.size()) {
      symbol.set_max(dataDependentMax[next++]);
      symbol.set_min(std::min(symbol.min(), symbol.max()));
    }
  return manifest;
}

/// Adds kiln-debug-miscompile for the nodes whose op is in `ops`; the
/// importer names each node's ops after the node's first output.
void addDebugMiscompile(PassManager &pm, const v1::Graph &graph,
                        const std::vector<std::string> &ops) {
  std::vector<std::string> values;
  for (const v1::Node &node : graph.nodes())
    if (!nodeName(node).empty() &&
        std::find(ops.begin(), ops.end(), node.op()) != ops.end())
      values.push_back(nodeName(node));
  DebugMiscompileOptions miscompile;
  miscompile.values = values; // copied into the pass's option here
  pm.nest<func::FuncOp>().addPass(createDebugMiscompile(miscompile));
}

/// Symbolic sizes compile for the cpu target; data-dependent ones alone
/// (all the graph has) also for riscv64 under Linux, whose agent allocates
/// at their max and trims as the cpu agent does.
absl::Status checkSymbolsForTarget(const v1::Graph &graph, const Target &target,
                                   const MachineSpec &machine) {
  if (graph.symbols_size() == 0 || target.name() == "cpu")
    return absl::OkStatus();
  const v1::SymbolicDim *first = &graph.symbols(0);
  for (const v1::SymbolicDim &symbol : graph.symbols())
    if (!symbol.data_dependent()) {
      first = &symbol;
      break;
    }
  bool dataDependent = first->data_dependent();
  if (dataDependent && target.name() == "riscv64" &&
      machine.artifactFormat == "elf-shared-object")
    return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "the graph has symbolic sizes ('", first->name(), "'",
      dataDependent ? ", which depends on the values: nonzero, masked_select, x[mask], "
                      "unique or repeat_interleave"
                    : "",
      "); Kiln compiles those for the cpu target",
      dataDependent ? " and riscv64 under Linux" : "", " only, not '", target.name(), "'",
      machine.artifactFormat == "elf-relocatable-object" ? " (bare metal)" : "",
      dataDependent ? "" : " (export it with static sizes)"));
}

} // namespace

absl::StatusOr<CompiledExecutable> compileGraph(const v1::Graph &graph,
                                                const CompileOptions &options) {
  const Target *target = lookupTarget(options.target);
  if (!target)
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target '", options.target, "'; this compiler supports: ",
                     absl::StrJoin(targetNames(), ", ")));
  if (options.options.opt_level() < 0 || options.options.opt_level() > 3)
    return absl::InvalidArgumentError(absl::StrCat(
        "opt_level must be 0..3, got ", options.options.opt_level()));
  ASSIGN_OR_RETURN(v1::CompileOptions resolved,
                   target->resolveOptions(options.options));
  ASSIGN_OR_RETURN(MachineSpec machine, target->machine(resolved));
  int optLevel = options.options.opt_level() == 0 ? kDefaultOptLevel
                                                  : options.options.opt_level();

  DialectRegistry registry;
  registerKilnDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  DiagnosticCollector diagnostics(context);

  auto enter = [&](const char *stage) {
    if (options.onStage)
      options.onStage(stage);
  };
  CompiledExecutable result;
  auto dump = [&](const char *stage, const auto &printable) {
    if (options.dumpStages)
      result.stages.push_back({stage, printToString(printable)});
  };

  enter("import");
  RETURN_IF_ERROR(checkSymbolsForTarget(graph, *target, machine));
  ASSIGN_OR_RETURN(OwningOpRef<ModuleOp> module, importGraph(graph, context));
  const std::vector<int64_t> dataDependentMax = dataDependentMaxima(*module);
  dump("aten", *module);
  analysis::OpReportOptions reportOptions;
  reportOptions.graph = &graph;
  if (FailureOr<v1::OpReport> report = analysis::buildOpReport(*module, reportOptions);
      succeeded(report))
    result.opReport = std::move(*report);

  if (target->emitsFromAten()) {
    enter("emit");
    std::string text;
    ASSIGN_OR_RETURN(result.artifact,
                     target->emitFromAten(*module, graph,
                                          options.dumpStages ? &text : nullptr));
    if (options.dumpStages)
      result.stages.push_back({"onnx", std::move(text)});
    result.manifest = buildManifest(graph, *target, machine, dataDependentMax);
    return result;
  }

  enter("aten-to-linalg");
  PassManager toLinalg(&context);
  AtenToLinalgOptions toLinalgOptions;
  toLinalgOptions.kernelLibrary = machine.kernelLibrary;
  toLinalgOptions.maxKernelCalls = machine.kernelCallLimit;
  buildKilnAtenToLinalgPipeline(toLinalg, toLinalgOptions);
  RETURN_IF_ERROR(runStage(toLinalg, *module, "aten-to-linalg", diagnostics));
  // The artifact needs the library only when some op was handed to it.
  bool callsKernelLibrary =
      !machine.kernelLibrary.empty() &&
      llvm::any_of(module->getOps<func::FuncOp>(), [](func::FuncOp f) {
        return f.isExternal() && f.getSymName().starts_with("kiln_rt_");
      });
  // Which layers the library runs: from the calls, before codegen moves
  // their code into outlined functions.
  analysis::markLayerUnits(*module,
                           callsKernelLibrary ? machine.kernelLibrary : "",
                           result.opReport);
  if (!options.debugMiscompileOps.empty()) {
    PassManager miscompile(&context);
    addDebugMiscompile(miscompile, graph, options.debugMiscompileOps);
    RETURN_IF_ERROR(runStage(miscompile, *module, "debug-miscompile", diagnostics));
  }
  dump("linalg", *module);

  enter("codegen");
  PassManager codegen(&context);
  target->buildCodegenPipeline(codegen, machine);
  RETURN_IF_ERROR(runStage(codegen, *module, "codegen", diagnostics));
  dump("llvm-dialect", *module);

  enter("translate");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, graph.name());
  if (!llvmModule)
    return absl::InternalError(absl::StrCat("translation to LLVM IR failed: ",
                                            diagnostics.take()));
  std::string assembly;
  enter("emit");
  ASSIGN_OR_RETURN(result.artifact,
                   target->emitArtifact(*llvmModule, machine, optLevel,
                                        options.dumpStages ? &assembly : nullptr));
  if (options.dumpStages) {
    dump("llvm-ir", *llvmModule);
    result.stages.push_back({"asm", assembly});
  }
  result.manifest = buildManifest(graph, *target, machine, dataDependentMax);
  if (callsKernelLibrary) {
    result.manifest.set_kernel_library(machine.kernelLibrary);
    result.manifest.set_convolution_algorithm(machine.convolutionAlgorithm);
  }
  return result;
}

} // namespace kiln::compiler
