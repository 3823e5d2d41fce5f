//===- NullBackend.cpp - the device skeleton to copy ----------------------===//
#include "kiln/agent/null/NullBackend.h"

namespace kiln::agent::null {

absl::StatusOr<std::unique_ptr<NullBackend>> NullBackend::create(NullBackendConfig config) {
  return std::unique_ptr<NullBackend>(new NullBackend(config));
}

absl::StatusOr<std::vector<v1::Device>> NullBackend::describeDevices() {
  return std::vector<v1::Device>{};
}

std::string NullBackend::unavailableReason() const {
  return "the null device kind is the skeleton new kinds copy "
         "(docs/adding_a_device.md); it owns no device";
}

absl::StatusOr<std::shared_ptr<LoadedExecutable>>
NullBackend::loadExecutable(const v1::ExecutableRecord &record,
                            const std::filesystem::path &) {
  return absl::UnimplementedError(
      "the null device kind loads no executable (format '" +
      record.manifest().format() + "')");
}

absl::StatusOr<v1::DeviceCounters> NullBackend::run(LoadedExecutable &,
                                                    const CallBuffers &) {
  return absl::UnimplementedError("the null device kind runs nothing");
}

} // namespace kiln::agent::null
