//===- CpuTarget.cpp - the host CPU target --------------------------------===//
//
// This file implements the `cpu` target: code for the host's triple, CPU and
// features, packaged as an ELF shared object with a C-ABI entry point.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "kiln/Compiler/Compile.h"

#include "MachineCode.h"

#include "kiln/Pipeline/Pipelines.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

namespace kiln::compiler {
namespace {

std::string hostFeatures() {
  std::string features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty())
      features += ",";
    features += (feature.second ? "+" : "-") + feature.first().str();
  }
  return features;
}

class CpuTarget final : public Target {
public:
  std::string name() const override { return "cpu"; }
  std::string triple() const override { return llvm::sys::getProcessTriple(); }
  std::string cpu() const override { return llvm::sys::getHostCPUName().str(); }
  std::string features() const override {
    static const std::string features = hostFeatures();
    return features;
  }
  std::string artifactFormat() const override { return "elf-shared-object"; }

  void buildCodegenPipeline(mlir::OpPassManager &pm,
                            const v1::CompileOptions &) const override {
    CpuCodegenOptions options;
    // Size the matmul register tile to the vector register file: half of the
    // registers hold accumulators, one vector-width row each.
    if (features().find("+avx512f") != std::string::npos) {
      options.registerTileM = 8; // 8 rows x 2 zmm = 16 of 32 zmm registers
      options.registerTileN = 32;
    } else if (features().find("+avx2") != std::string::npos) {
      options.registerTileM = 6; // 6 rows x 2 ymm = 12 of 16 ymm registers
      options.registerTileN = 16;
    }
    buildKilnCpuCodegenPipeline(pm, options);
  }

  absl::StatusOr<std::string>
  emitArtifact(llvm::Module &module, const v1::CompileOptions &options,
               std::string *assembly) const override {
    int optLevel =
        options.opt_level() == 0 ? kDefaultOptLevel : options.opt_level();
    MachineCodeRequest request{triple(), cpu(), features(), optLevel};
    auto object = emitObjectCode(module, request, assembly);
    if (!object.ok())
      return object.status();
    return linkSharedObject(*object);
  }
};

} // namespace

const Target *lookupTarget(const std::string &name) {
  static const CpuTarget cpuTarget;
  if (name == "cpu")
    return &cpuTarget;
  return nullptr;
}

std::vector<std::string> targetNames() { return {"cpu"}; }

} // namespace kiln::compiler
