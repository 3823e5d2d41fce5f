//===- CpuTarget.cpp - the host-architecture CPU target -------------------===//
//
// This file implements the `cpu` target: code for this architecture's triple
// and a named CPU (options.cpu, e.g. "x86-64-v3", or "native"), packaged as
// a self-contained ELF shared object with a C-ABI entry point.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "MachineCode.h"
#include "TargetRuntime.h"

#include "kiln/common/CpuModel.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace kiln::compiler {
namespace {

/// The CPU a compile with no options.cpu targets: every x86-64 server CPU
/// of the last decade runs it (SSE4.2, POPCNT, no AVX).
constexpr const char *kDefaultCpu = "x86-64-v2";

/// The x86 features whose instructions convert f32 to bf16 (VCVTNEPS2BF16)
/// and flush subnormal results to zero, where eager (and every other CPU)
/// keeps them: Kiln never lets LLVM use them, so a bf16 result has the same
/// bits on every CPU compiled for.
constexpr const char *kBf16ConversionFeatures[] = {"avx512bf16", "avxneconvert"};

bool has(const CpuModel &model, const char *feature) {
  return std::binary_search(model.features.begin(), model.features.end(),
                            std::string(feature));
}

/// INVALID_ARGUMENT messages name the option the user set.
absl::Status nameOption(const absl::Status &status) {
  return absl::Status(status.code(),
                      absl::StrCat("options.cpu: ", status.message()));
}

bool isX86_64() {
  return llvm::Triple(llvm::sys::getProcessTriple()).getArch() ==
         llvm::Triple::x86_64;
}

/// options.kernel_library made concrete: "onednn" (the default on x86-64,
/// where the cpu agent ships oneDNN) or "none".
absl::StatusOr<std::string> kernelLibrary(const v1::CompileOptions &options) {
  const std::string &library = options.kernel_library();
  if (library.empty())
    return std::string(isX86_64() ? "onednn" : "none");
  if (library == "none")
    return library;
  if (library == "onednn") {
    if (!isX86_64())
      return absl::InvalidArgumentError(
          "options.kernel_library 'onednn' is available on x86-64 only");
    return library;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "options.kernel_library: unknown library '", library,
      "' (known: onednn, none)"));
}

/// options.convolution_algorithm made concrete: "auto" (the default) or
/// "direct".
absl::StatusOr<std::string>
convolutionAlgorithm(const v1::CompileOptions &options) {
  const std::string &algorithm = options.convolution_algorithm();
  if (algorithm.empty())
    return std::string("auto");
  if (algorithm == "auto" || algorithm == "direct")
    return algorithm;
  return absl::InvalidArgumentError(absl::StrCat(
      "options.convolution_algorithm: unknown algorithm '", algorithm,
      "' (known: auto, direct)"));
}

class CpuTarget final : public Target {
public:
  std::string name() const override { return "cpu"; }

  absl::StatusOr<v1::CompileOptions>
  resolveOptions(const v1::CompileOptions &options) const override {
    if (options.has_riscv())
      return absl::InvalidArgumentError(
          "options.riscv applies to target 'riscv64' only, not 'cpu'");
    if (options.has_acap())
      return absl::InvalidArgumentError(
          "options.acap applies to target 'acap' only, not 'cpu'");
    std::string cpu = options.cpu().empty() ? kDefaultCpu : options.cpu();
    absl::StatusOr<CpuModel> model =
        resolveCpuModel(cpu, options.cpu_features());
    if (!model.ok())
      return nameOption(model.status());
    // Canonical: the concrete CPU name and the smallest feature delta that
    // gives exactly its features.
    ASSIGN_OR_RETURN(std::string delta,
                     featureDelta(model->name, model->features));
    v1::CompileOptions resolved = options;
    resolved.set_cpu(model->name);
    resolved.set_cpu_features(delta);
    ASSIGN_OR_RETURN(std::string library, kernelLibrary(options));
    resolved.set_kernel_library(library);
    ASSIGN_OR_RETURN(std::string algorithm, convolutionAlgorithm(options));
    // Without a library every convolution is generated code: the choice
    // means nothing, and must not split the compile key.
    resolved.set_convolution_algorithm(library == "none" ? "" : algorithm);
    return resolved;
  }

  absl::StatusOr<MachineSpec>
  machine(const v1::CompileOptions &options) const override {
    // Resolved options name a concrete CPU and the exact feature delta that
    // LLVM is given; resolving them again would give the same.
    absl::StatusOr<CpuModel> model =
        resolveCpuModel(options.cpu(), options.cpu_features());
    if (!model.ok())
      return nameOption(model.status());
    MachineSpec spec;
    spec.triple = llvm::sys::getProcessTriple();
    spec.cpu = model->name;
    // bf16 conversions stay in software on every CPU (see
    // kBf16ConversionFeatures); the code then needs neither feature.
    std::vector<std::string> used;
    for (const std::string &feature : model->features)
      if (std::find(std::begin(kBf16ConversionFeatures), std::end(kBf16ConversionFeatures),
                    feature) == std::end(kBf16ConversionFeatures))
        used.push_back(feature);
    spec.features = options.cpu_features();
    for (const char *feature : kBf16ConversionFeatures)
      absl::StrAppend(&spec.features, spec.features.empty() ? "" : ",", "-", feature);
    spec.requiredFeatures = formatFeatureList(used);
    spec.artifactFormat = "elf-shared-object";
    // Only the x86-64 runtime carries kiln_rt_parallel_for and the
    // kernel-library calls (emitArtifact).
    spec.parallelLoops =
        llvm::Triple(spec.triple).getArch() == llvm::Triple::x86_64;
    spec.planBuffers = true;
    if (options.kernel_library() != "none") {
      spec.kernelLibrary = options.kernel_library();
      spec.convolutionAlgorithm = options.convolution_algorithm();
    }
    // Size the matmul register tile to the vector register file: half of the
    // registers hold accumulators, one vector-width row each.
    if (has(*model, "avx512f")) {
      spec.registerTileM = 8; // 8 rows x 2 zmm = 16 of 32 zmm registers
      spec.registerTileN = 32;
      spec.transposeTile = 16; // 16 zmm rows of 16 floats
    } else if (has(*model, "avx2")) {
      spec.registerTileM = 6; // 6 rows x 2 ymm = 12 of 16 ymm registers
      spec.registerTileN = 16;
      spec.transposeTile = 8; // 8 ymm rows of 8 floats
    }
    return spec;
  }

  absl::StatusOr<std::string>
  emitArtifact(llvm::Module &module, const MachineSpec &machine, int optLevel,
               std::string *assembly) const override {
    auto object = emitObjectCode(module, machine, optLevel, assembly);
    if (!object.ok())
      return object.status();
    std::vector<std::string_view> objects = {*object};
    // The half/bfloat16 conversions LLVM may call, from Kiln's runtime: the
    // host's libgcc need not have them.
    if (llvm::Triple(machine.triple).getArch() == llvm::Triple::x86_64)
      objects.push_back(x86_64RuntimeObject());
    return linkSharedObject(objects, hostLibraries());
  }
};

} // namespace

const Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace kiln::compiler
