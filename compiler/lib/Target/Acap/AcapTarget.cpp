//===- AcapTarget.cpp - the acap target: a Versal AI Engine array ---------===//
//
// This file implements the `acap` target. The graph's convolutions and
// matrix products, each with the elementwise epilogue that follows it
// (scale and shift, residual, activation), go to the AI Engine array as
// kernel-library calls (compiler/runtime/kiln_rt_kernels.h, library "aie");
// every other op is host code. The host code is for the Versal's Arm cores
// (aarch64, Cortex-A72) by default, or for an x86-64 CPU when the array is
// simulated on such a machine (options.acap.host_cpu). The artifact is an
// xclbin: the host code as a SOFT_KERNEL section, the AI Engine plan
// (kiln.v1.AiePlan) as a USER_METADATA section, and a BUILD_METADATA
// section. AI Engine kernels themselves need AMD's or the open mlir-aie
// toolchain, which Kiln cannot reach here; docs/devices/acap.md says what
// that leaves.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "AiePlanner.h"
#include "KernelSites.h"
#include "Xclbin.h"
#include "../MachineCode.h"
#include "../TargetRuntime.h"

#include "kiln/Compiler/Compile.h"
#include "kiln/common/AieArray.h"
#include "kiln/common/CpuModel.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::compiler {
namespace {

/// The Versal's application processing unit.
constexpr const char *kBoardHostCpu = "cortex-a72";
constexpr const char *kBoardTriple = "aarch64-unknown-linux-gnu";
constexpr const char *kKernelLibrary = "aie";

bool isBoardHost(const std::string &cpu) { return cpu == kBoardHostCpu; }

class AcapTarget final : public Target {
public:
  std::string name() const override { return "acap"; }

  absl::StatusOr<v1::CompileOptions>
  resolveOptions(const v1::CompileOptions &options) const override {
    if (options.has_riscv())
      return absl::InvalidArgumentError(
          "options.riscv applies to target 'riscv64' only, not 'acap'");
    if (!options.cpu().empty() || !options.cpu_features().empty())
      return absl::InvalidArgumentError(
          "options.cpu and options.cpu_features apply to target 'cpu'; the "
          "acap target's host CPU is options.acap.host_cpu");
    if (!options.kernel_library().empty())
      return absl::InvalidArgumentError(
          "options.kernel_library applies to target 'cpu'; the acap target's "
          "convolutions and products always go to the AI Engine array");
    if (!options.convolution_algorithm().empty())
      return absl::InvalidArgumentError(
          "options.convolution_algorithm applies to target 'cpu' only, not "
          "'acap'");
    v1::CompileOptions resolved = options;
    v1::AcapOptions &acap = *resolved.mutable_acap();
    if (acap.host_cpu().empty())
      acap.set_host_cpu(kBoardHostCpu);
    if (!isBoardHost(acap.host_cpu())) {
      ASSIGN_OR_RETURN(MachineSpec host, x86Host(acap.host_cpu()));
      acap.set_host_cpu(host.cpu);
    }
    if (acap.array().empty())
      acap.set_array(std::string(aie::kDefaultArray));
    const v1::AieArray *array = aie::lookupArray(acap.array());
    if (!array)
      return absl::InvalidArgumentError(absl::StrCat(
          "options.acap.array: unknown AI Engine array '", acap.array(),
          "' (known: ", absl::StrJoin(aie::arrayNames(), ", "), ")"));
    int64_t total = int64_t(array->columns()) * array->rows();
    if (acap.tiles() < 0 || acap.tiles() > total)
      return absl::InvalidArgumentError(absl::StrCat(
          "options.acap.tiles must be 0..", total, " (array '", array->name(),
          "'), got ", acap.tiles()));
    // Canonical: all tiles is 0.
    if (acap.tiles() == total)
      acap.set_tiles(0);
    return resolved;
  }

  absl::StatusOr<MachineSpec>
  machine(const v1::CompileOptions &options) const override {
    MachineSpec spec;
    if (isBoardHost(options.acap().host_cpu())) {
      spec.triple = kBoardTriple;
      spec.cpu = kBoardHostCpu;
      spec.features = "+neon,+fp-armv8,+crc";
      spec.requiredFeatures = "+neon";
      // 8 rows x 2 q registers of 4 floats = 16 of the 32 NEON registers.
      spec.registerTileM = 8;
      spec.registerTileN = 8;
      spec.transposeTile = 4;
      spec.parallelLoops = true;
      spec.planBuffers = true;
    } else {
      ASSIGN_OR_RETURN(spec, x86Host(options.acap().host_cpu()));
    }
    spec.artifactFormat = "xclbin";
    spec.kernelLibrary = kKernelLibrary;
    spec.aieArray = options.acap().array();
    spec.aieTiles = options.acap().tiles();
    const v1::AieArray *array = aie::lookupArray(spec.aieArray);
    if (!array)
      return absl::InvalidArgumentError(absl::StrCat(
          "options.acap.array: unknown AI Engine array '", spec.aieArray, "'"));
    spec.kernelCallLimit =
        spec.aieTiles ? spec.aieTiles : array->columns() * array->rows();
    return spec;
  }

  absl::StatusOr<std::string>
  emitArtifact(llvm::Module &module, const MachineSpec &machine, int optLevel,
               std::string *assembly) const override {
    const v1::AieArray *array = aie::lookupArray(machine.aieArray);
    if (!array)
      return absl::InternalError(
          absl::StrCat("no AI Engine array '", machine.aieArray, "'"));
    // Before optimisation, which may merge the sites' geometry globals.
    ASSIGN_OR_RETURN(v1::AiePlan plan,
                     acap::planSites(acap::collectKernelSites(module), *array,
                                     machine.aieTiles));
    std::string host;
    if (llvm::Triple(machine.triple).getArch() == llvm::Triple::x86_64) {
      ASSIGN_OR_RETURN(host, cpuTarget().emitArtifact(module, machine, optLevel,
                                                      assembly));
    } else {
      ASSIGN_OR_RETURN(std::string object,
                       emitObjectCode(module, machine, optLevel, assembly));
      // No libraries: libm and libc resolve in the agent that loads it.
      ASSIGN_OR_RETURN(host, linkSharedObject({object, aarch64RuntimeObject()},
                                              /*libraryArgs=*/{}));
    }
    if (assembly) {
      std::string text;
      google::protobuf::TextFormat::Printer printer;
      printer.SetUseShortRepeatedPrimitives(true);
      printer.PrintToString(plan, &text);
      *assembly = absl::StrCat(planComment(machine, text), *assembly);
    }
    std::vector<acap::XclbinSection> sections;
    sections.push_back({acap::XclbinSectionKind::BuildMetadata, "build_metadata",
                        buildMetadata(machine, plan)});
    sections.push_back({acap::XclbinSectionKind::SoftKernel, aie::kHostSection,
                        acap::softKernelSection(aie::kHostSection, compilerBuildId(),
                                                "kiln_invoke", host)});
    sections.push_back({acap::XclbinSectionKind::UserMetadata, aie::kPlanSection,
                        plan.SerializeAsString()});
    return acap::writeXclbin(absl::StrCat("kiln:acap:", array->name(), ":1"),
                             sections);
  }

private:
  /// The cpu target's machine for x86-64 CPU `cpu` (an array simulated on
  /// an x86-64 machine), or INVALID_ARGUMENT naming options.acap.host_cpu.
  static absl::StatusOr<MachineSpec> x86Host(const std::string &cpu) {
    if (llvm::Triple(llvm::sys::getProcessTriple()).getArch() !=
        llvm::Triple::x86_64)
      return absl::InvalidArgumentError(absl::StrCat(
          "options.acap.host_cpu: '", cpu, "' is not the board's ",
          kBoardHostCpu, ", and this compiler builds simulated hosts for "
          "x86-64 only"));
    v1::CompileOptions cpuOptions;
    cpuOptions.set_cpu(cpu);
    cpuOptions.set_kernel_library("none");
    absl::StatusOr<v1::CompileOptions> resolved =
        cpuTarget().resolveOptions(cpuOptions);
    if (!resolved.ok())
      return absl::InvalidArgumentError(absl::StrCat(
          "options.acap.host_cpu: '", cpu, "' is neither the board's ",
          kBoardHostCpu, " nor an x86-64 CPU LLVM knows (",
          resolved.status().message(), ")"));
    return cpuTarget().machine(*resolved);
  }

  /// The plan as assembler comments, ahead of the host code's assembly.
  static std::string planComment(const MachineSpec &machine,
                                 const std::string &text) {
    const char *mark =
        llvm::Triple(machine.triple).getArch() == llvm::Triple::x86_64 ? "#"
                                                                        : "//";
    std::string out = absl::StrCat(mark, " AI Engine plan (kiln.v1.AiePlan)\n");
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty()))
      absl::StrAppend(&out, mark, " ", line, "\n");
    return out;
  }

  /// BUILD_METADATA: what built the file, in the JSON shape xclbinutil's
  /// reports read. Every value is a name Kiln made (build id, LLVM triple
  /// and CPU, array), none needing JSON escapes.
  static std::string buildMetadata(const MachineSpec &machine,
                                   const v1::AiePlan &plan) {
    return absl::StrCat(
        "{\"build_metadata\": {\"xclbin\": {\"generated_by\": {\"name\": "
        "\"kiln-compile\", \"version\": \"",
        compilerBuildId(), "\"}, \"host\": {\"triple\": \"", machine.triple,
        "\", \"cpu\": \"", machine.cpu, "\"}, \"aie\": {\"array\": \"",
        plan.array().name(), "\", \"sites\": ", plan.sites_size(),
        ", \"tiles\": ", plan.tiles_used(), ", \"kernels\": \"none: built "
        "without an AI Engine toolchain\"}}}}");
  }
};

} // namespace

const Target &acapTarget() {
  static const AcapTarget target;
  return target;
}

} // namespace kiln::compiler
