//===- CpuModel.cpp - a CPU as LLVM names it ------------------------------===//
//
// This file implements CpuModel with LLVM's subtarget tables (what a CPU
// name implies) and host detection (what this machine has, and which
// features count as ISA features at all).
//
//===----------------------------------------------------------------------===//
#include "kiln/common/CpuModel.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <memory>
#include <set>

namespace kiln {
namespace {

/// LLVM's tables for this process's architecture.
struct NativeTables {
  std::string triple;
  const llvm::Target *target = nullptr;
  /// Subtarget info for the generic CPU: the feature and CPU tables.
  std::unique_ptr<llvm::MCSubtargetInfo> generic;
  /// Features the host detection can report: the ISA features.
  std::set<std::string> isaFeatures;
  /// The host's detected features, "+a,-b".
  std::string hostFeatureString;
  std::string hostName;
  std::string error;
};

const NativeTables &nativeTables() {
  static const NativeTables tables = [] {
    NativeTables t;
    llvm::InitializeNativeTarget();
    t.triple = llvm::sys::getProcessTriple();
    t.target = llvm::TargetRegistry::lookupTarget(t.triple, t.error);
    if (!t.target)
      return t;
    t.generic.reset(t.target->createMCSubtargetInfo(t.triple, "", ""));
    if (!t.generic) {
      t.error = "no subtarget information for " + t.triple;
      return t;
    }
    std::vector<std::string> host;
    for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
      t.isaFeatures.insert(feature.first().str());
      host.push_back(absl::StrCat(feature.second ? "+" : "-",
                                  feature.first().str()));
    }
    std::sort(host.begin(), host.end());
    t.hostFeatureString = absl::StrJoin(host, ",");
    t.hostName = llvm::sys::getHostCPUName().str();
    // Architectures whose host detection lists nothing: every subtarget
    // feature counts.
    if (t.isaFeatures.empty())
      for (const llvm::SubtargetFeatureKV &kv :
           t.generic->getAllProcessorFeatures())
        t.isaFeatures.insert(kv.Key);
    return t;
  }();
  return tables;
}

bool knownFeature(const NativeTables &tables, absl::string_view name) {
  for (const llvm::SubtargetFeatureKV &kv :
       tables.generic->getAllProcessorFeatures())
    if (name == kv.Key)
      return true;
  return false;
}

/// OK when `text` is a comma-separated list of "+name"/"-name" LLVM knows.
absl::Status validateFeatureString(const NativeTables &tables,
                                   absl::string_view text) {
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    item = absl::StripAsciiWhitespace(item);
    if (item.size() < 2 || (item[0] != '+' && item[0] != '-'))
      return absl::InvalidArgumentError(absl::StrCat(
          "CPU feature '", item,
          "' must be '+name' or '-name' (LLVM feature syntax, e.g. +avx2)"));
    if (!knownFeature(tables, item.substr(1)))
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown CPU feature '", item.substr(1), "' for ", tables.triple));
  }
  return absl::OkStatus();
}

} // namespace

const CpuModel &hostCpuModel() {
  static const CpuModel host = [] {
    absl::StatusOr<CpuModel> model = resolveCpuModel("native", "");
    return model.ok() ? *model : CpuModel{"unknown", {}};
  }();
  return host;
}

absl::StatusOr<CpuModel> resolveCpuModel(absl::string_view name,
                                         absl::string_view extraFeatures) {
  const NativeTables &tables = nativeTables();
  if (!tables.generic)
    return absl::InternalError(absl::StrCat(
        "LLVM has no target for this host (", tables.triple, "): ",
        tables.error));
  std::string cpu(name);
  std::vector<std::string> featureItems;
  if (cpu == "native") {
    cpu = tables.hostName;
    featureItems.push_back(tables.hostFeatureString);
  } else if (!tables.generic->isCPUStringValid(cpu)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown CPU '", name, "' for ", tables.triple,
        "; use an LLVM CPU name such as x86-64-v2, x86-64-v3, x86-64-v4, "
        "znver3 or sapphirerapids, or 'native'"));
  }
  if (absl::Status valid = validateFeatureString(tables, extraFeatures);
      !valid.ok())
    return valid;
  if (!extraFeatures.empty())
    featureItems.emplace_back(extraFeatures);
  std::string featureString = absl::StrJoin(featureItems, ",");
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      tables.target->createMCSubtargetInfo(tables.triple, cpu, featureString));
  if (!info)
    return absl::InternalError(
        absl::StrCat("LLVM cannot describe CPU '", cpu, "'"));
  CpuModel model{cpu, {}};
  const llvm::FeatureBitset &bits = info->getFeatureBits();
  for (const llvm::SubtargetFeatureKV &kv : info->getAllProcessorFeatures())
    if (bits.test(kv.Value) && tables.isaFeatures.count(kv.Key))
      model.features.emplace_back(kv.Key);
  std::sort(model.features.begin(), model.features.end());
  return model;
}

absl::StatusOr<std::string>
featureDelta(absl::string_view name, const std::vector<std::string> &features) {
  absl::StatusOr<CpuModel> base = resolveCpuModel(name, "");
  if (!base.ok())
    return base.status();
  // Additions first, removals last: LLVM applies them in order, so a
  // removal also drops whatever implies it and the result never has a
  // feature `features` lacks.
  std::vector<std::string> items;
  for (const std::string &feature : missingFeatures(features, base->features))
    items.push_back("+" + feature);
  for (const std::string &feature : missingFeatures(base->features, features))
    items.push_back("-" + feature);
  return absl::StrJoin(items, ",");
}

std::vector<std::string> missingFeatures(const std::vector<std::string> &required,
                                         const std::vector<std::string> &available) {
  std::vector<std::string> missing;
  std::set_difference(required.begin(), required.end(), available.begin(),
                      available.end(), std::back_inserter(missing));
  return missing;
}

std::vector<std::string>
commonFeatures(const std::vector<std::vector<std::string>> &lists) {
  if (lists.empty())
    return {};
  std::vector<std::string> common = lists.front();
  for (size_t i = 1; i < lists.size(); ++i) {
    std::vector<std::string> next;
    std::set_intersection(common.begin(), common.end(), lists[i].begin(),
                          lists[i].end(), std::back_inserter(next));
    common = std::move(next);
  }
  return common;
}

std::vector<std::string> parseFeatureList(absl::string_view text) {
  std::set<std::string> features;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty() || item[0] == '-')
      continue;
    if (item[0] == '+')
      item.remove_prefix(1);
    if (!item.empty())
      features.emplace(item);
  }
  return {features.begin(), features.end()};
}

std::string formatFeatureList(const std::vector<std::string> &features) {
  std::vector<std::string> items;
  for (const std::string &feature : features)
    items.push_back("+" + feature);
  return absl::StrJoin(items, ",");
}

} // namespace kiln
