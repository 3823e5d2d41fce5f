//===- CpuModel.h - a CPU as LLVM names it, and what code for it needs ----===//
//
// This file declares CpuModel: an LLVM CPU name and the ISA features code
// generated for it may use. The compiler resolves the CPU a compile asks for
// through it, and the cpu agent describes its host and checks executables
// against it, so both sides speak LLVM's feature names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace kiln {

/// A CPU: its LLVM name and its ISA features.
struct CpuModel {
  /// LLVM CPU name: "sapphirerapids", "znver3", "x86-64-v3".
  std::string name;
  /// The ISA features code may use, as LLVM names them ("avx2", "fma"),
  /// sorted and unique. Tuning-only subtarget features are left out: only
  /// features the host detection of this architecture can report count.
  std::vector<std::string> features;
};

/// The CPU this process runs on, as LLVM detects it (CPUID on x86).
const CpuModel &hostCpuModel();

/// The CPU called `name` with `extraFeatures` ("+avx512f,-avx512bw", LLVM
/// syntax, may be empty) applied, for this process's architecture. "native"
/// names the host CPU. INVALID_ARGUMENT naming an unknown CPU, a feature LLVM
/// does not know, or a malformed feature list.
absl::StatusOr<CpuModel> resolveCpuModel(absl::string_view name,
                                         absl::string_view extraFeatures);

/// The LLVM feature string that turns the CPU `name` into one with exactly
/// `features`: "+" for each it lacks, then "-" for each it has that
/// `features` does not, each sorted. Empty when `name` already has exactly
/// those.
absl::StatusOr<std::string>
featureDelta(absl::string_view name, const std::vector<std::string> &features);

/// The entries of `required` that `available` lacks, sorted. Both sorted.
std::vector<std::string> missingFeatures(const std::vector<std::string> &required,
                                         const std::vector<std::string> &available);

/// The entries of every list in `lists` (each sorted), sorted.
std::vector<std::string>
commonFeatures(const std::vector<std::vector<std::string>> &lists);

/// "avx2,fma" or "+avx2,+fma" -> {"avx2", "fma"}, sorted and unique; "-x"
/// entries are dropped (they name what a CPU lacks).
std::vector<std::string> parseFeatureList(absl::string_view text);

/// {"avx2", "fma"} -> "+avx2,+fma".
std::string formatFeatureList(const std::vector<std::string> &features);

} // namespace kiln
