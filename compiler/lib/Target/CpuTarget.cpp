//===- CpuTarget.cpp - the host CPU target --------------------------------===//
//
// This file implements the `cpu` target: code for the host's triple, CPU and
// features, packaged as an ELF shared object with a C-ABI entry point.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "MachineCode.h"


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

MachineSpec hostMachine() {
  MachineSpec spec;
  spec.triple = llvm::sys::getProcessTriple();
  spec.cpu = llvm::sys::getHostCPUName().str();
  spec.features = hostFeatures();
  spec.artifactFormat = "elf-shared-object";
  // Size the matmul register tile to the vector register file: half of the
  // registers hold accumulators, one vector-width row each.
  if (spec.features.find("+avx512f") != std::string::npos) {
    spec.registerTileM = 8; // 8 rows x 2 zmm = 16 of 32 zmm registers
    spec.registerTileN = 32;
  } else if (spec.features.find("+avx2") != std::string::npos) {
    spec.registerTileM = 6; // 6 rows x 2 ymm = 12 of 16 ymm registers
    spec.registerTileN = 16;
  }
  return spec;
}

class CpuTarget final : public Target {
public:
  std::string name() const override { return "cpu"; }

  absl::StatusOr<MachineSpec>
  machine(const v1::CompileOptions &options) const override {
    if (options.has_riscv())
      return absl::InvalidArgumentError(
          "options.riscv applies to target 'riscv64' only, not 'cpu'");
    static const MachineSpec host = hostMachine();
    return host;
  }

  absl::StatusOr<std::string>
  emitArtifact(llvm::Module &module, const MachineSpec &machine, int optLevel,
               std::string *assembly) const override {
    auto object = emitObjectCode(module, machine, optLevel, assembly);
    if (!object.ok())
      return object.status();
    return linkSharedObject({*object}, hostLibraries());
  }
};

} // namespace

const Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace kiln::compiler
