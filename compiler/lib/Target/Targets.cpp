//===- Targets.cpp - the table of compile targets -------------------------===//
//
// This file lists every target the compiler can build for, and implements
// the code generation pipeline and option resolution they share.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "kiln/Compiler/Compile.h"

#include "kiln/Pipeline/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

#include "absl/strings/str_cat.h"

#include <array>

namespace kiln::compiler {
namespace {

std::array<const Target *, 4> allTargets() {
  return {&cpuTarget(), &riscv64Target(), &mdlaTarget(), &acapTarget()};
}

} // namespace

void Target::buildCodegenPipeline(mlir::OpPassManager &pm,
                                  const MachineSpec &machine) const {
  CpuCodegenOptions options;
  if (machine.registerTileM > 0) {
    options.registerTileM = machine.registerTileM;
    options.registerTileN = machine.registerTileN;
  }
  options.parallelLoops = machine.parallelLoops;
  options.planBuffers = machine.planBuffers;
  options.transposeTile = machine.transposeTile;
  buildKilnCpuCodegenPipeline(pm, options);
}

absl::StatusOr<std::string> Target::emitFromAten(mlir::ModuleOp, const v1::Graph &,
                                                std::string *) const {
  return absl::InternalError(absl::StrCat(
      "target '", name(), "' generates code through LLVM, not from the ATen module"));
}

absl::StatusOr<v1::CompileOptions>
Target::resolveOptions(const v1::CompileOptions &options) const {
  if (!options.cpu().empty() || !options.cpu_features().empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "options.cpu and options.cpu_features apply to target 'cpu' only, "
        "not '", name(), "'"));
  if (options.has_acap())
    return absl::InvalidArgumentError(absl::StrCat(
        "options.acap applies to target 'acap' only, not '", name(), "'"));
  if (!options.kernel_library().empty() && options.kernel_library() != "none")
    return absl::InvalidArgumentError(absl::StrCat(
        "options.kernel_library '", options.kernel_library(),
        "' applies to target 'cpu' only; target '", name(),
        "' generates code for every op"));
  if (!options.convolution_algorithm().empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "options.convolution_algorithm applies to target 'cpu' only, not '",
        name(), "'"));
  return options;
}

const Target *lookupTarget(const std::string &name) {
  for (const Target *target : allTargets())
    if (target->name() == name)
      return target;
  return nullptr;
}

absl::StatusOr<v1::CompileOptions>
resolveCompileOptions(const std::string &target,
                      const v1::CompileOptions &options) {
  const Target *found = lookupTarget(target);
  if (!found)
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target '", target, "'"));
  return found->resolveOptions(options);
}

std::vector<std::string> targetNames() {
  std::vector<std::string> names;
  for (const Target *target : allTargets())
    names.push_back(target->name());
  return names;
}

} // namespace kiln::compiler
