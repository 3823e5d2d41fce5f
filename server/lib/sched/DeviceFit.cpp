//===- DeviceFit.cpp - which devices can run which code -------------------===//
//
// This file implements the CPU feature checks of scheduling and the default
// CPU of cpu compiles, over the features agents report at registration.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/DeviceFit.h"

#include "kiln/common/AgentProtocol.h"
#include "kiln/common/CpuModel.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include <algorithm>

namespace kiln::server {

std::optional<std::vector<std::string>>
reportedCpuFeatures(const v1::Device &device) {
  auto reported = device.properties().find(kCpuFeaturesProperty);
  if (reported == device.properties().end())
    return std::nullopt;
  return parseFeatureList(reported->second);
}

absl::Status
checkDeviceFeatures(const v1::Device &device,
                    const std::optional<std::vector<std::string>> &available,
                    const std::vector<std::string> &required) {
  if (required.empty() || !available)
    return absl::OkStatus();
  std::vector<std::string> missing = missingFeatures(required, *available);
  if (missing.empty())
    return absl::OkStatus();
  auto cpu = device.properties().find(kCpuProperty);
  return absl::FailedPreconditionError(absl::StrCat(
      "device ", device.id(), " (CPU '",
      cpu == device.properties().end() ? "unknown" : cpu->second,
      "') lacks CPU feature(s) the executable needs: ",
      absl::StrJoin(missing, ", ")));
}

absl::Status checkDeviceKernelLibrary(const v1::Device &device,
                                      const std::string &library) {
  if (library.empty())
    return absl::OkStatus();
  auto listed = device.properties().find(kKernelLibrariesProperty);
  std::string provided =
      listed == device.properties().end() ? "" : listed->second;
  for (absl::string_view name : absl::StrSplit(provided, ','))
    if (name == library)
      return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "device ", device.id(), " does not provide kernel library '", library,
      "' that the executable calls (it provides: ",
      provided.empty() ? "none" : provided,
      "); compile with options.kernel_library 'none' for it"));
}

bool allDevicesProvide(const std::vector<v1::Device> &devices,
                       const std::string &library) {
  return std::all_of(devices.begin(), devices.end(),
                     [&](const v1::Device &device) {
                       return checkDeviceKernelLibrary(device, library).ok();
                     });
}

absl::StatusOr<std::optional<v1::CompileOptions>>
sharedCpuOptions(const std::vector<v1::Device> &devices) {
  std::vector<std::vector<std::string>> featureLists;
  std::vector<std::string> names;
  for (const v1::Device &device : devices) {
    auto cpu = device.properties().find(kCpuProperty);
    auto features = device.properties().find(kCpuFeaturesProperty);
    if (cpu == device.properties().end() ||
        features == device.properties().end())
      continue;
    names.push_back(cpu->second);
    featureLists.push_back(parseFeatureList(features->second));
  }
  if (names.empty())
    return std::nullopt;
  // The CPU of a device that has exactly the shared features (the smallest
  // such name, so the choice does not depend on order), else the baseline.
  std::vector<std::string> common = commonFeatures(featureLists);
  std::string cpu;
  for (size_t i = 0; i < names.size(); ++i)
    if (featureLists[i] == common && (cpu.empty() || names[i] < cpu))
      cpu = names[i];
  if (cpu.empty())
    cpu = "x86-64";
  absl::StatusOr<std::string> delta = featureDelta(cpu, common);
  if (!delta.ok())
    return absl::FailedPreconditionError(absl::StrCat(
        "the connected cpu agents report CPU '", cpu,
        "', which this kilnd's compiler cannot target: ", delta.status().message(),
        "; name a CPU in options.cpu"));
  v1::CompileOptions options;
  options.set_cpu(cpu);
  options.set_cpu_features(*delta);
  return options;
}

absl::StatusOr<std::optional<v1::RiscvOptions>>
sharedRiscvOptions(const std::vector<v1::Device> &devices) {
  std::optional<int> smallest;
  for (const v1::Device &device : devices) {
    auto vlen = device.properties().find(kVlenProperty);
    if (vlen == device.properties().end())
      continue;
    int bits = 0;
    if (!absl::SimpleAtoi(vlen->second, &bits) || bits < 0)
      return absl::FailedPreconditionError(absl::StrCat(
          "device ", device.id(), " reports vlen '", vlen->second,
          "', which is not a number of bits"));
    smallest = smallest ? std::min(*smallest, bits) : bits;
  }
  if (!smallest)
    return std::nullopt;
  v1::RiscvOptions riscv;
  if (*smallest == 0)
    riscv.set_scalar_only(true);
  else
    riscv.set_vlen(*smallest);
  return riscv;
}

std::optional<std::string>
sharedAcapHostCpu(const std::vector<v1::Device> &devices) {
  std::optional<std::string> shared;
  for (const v1::Device &device : devices) {
    auto host = device.properties().find("host_cpu");
    if (host == device.properties().end() || host->second.empty())
      return std::nullopt;
    if (shared && *shared != host->second)
      return std::nullopt;
    shared = host->second;
  }
  return shared;
}

} // namespace kiln::server
