//===- NullBackend.h - the device skeleton to copy ------------------------===//
//
// This file declares NullBackend, a device kind that owns no device: the
// skeleton a new kind starts from (docs/adding_a_device.md), as IREE keeps a
// null HAL driver. Copy device_agents/null/ to device_agents/<kind>/, rename
// Null to <Kind> and "null" to "<kind>", and fill in the four methods. It is
// built and tested so that the copy starts from code that compiles and runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DeviceBackend.h"

#include <memory>
#include <string>

namespace kiln::agent::null {

/// What the kind's flags set (main.cpp); a real kind has its library path,
/// --simulate and so on here.
struct NullBackendConfig {};

class NullBackend final : public DeviceBackend {
public:
  /// Opens what the kind needs (a vendor library, device nodes). Missing
  /// hardware is not an error: the backend then serves no device and says
  /// why in unavailableReason(). INVALID_ARGUMENT for a bad flag.
  static absl::StatusOr<std::unique_ptr<NullBackend>> create(NullBackendConfig config);

  /// The compiler target this kind runs (manifest.target).
  std::string_view kind() const override { return "null"; }

  /// The devices this process owns, with properties (simulated=true for a
  /// simulated one). None here.
  absl::StatusOr<std::vector<v1::Device>> describeDevices() override;

  std::string unavailableReason() const override;

  /// Checks the manifest (format, triple, entry symbol) and the artifact,
  /// and prepares it to run. UNIMPLEMENTED here.
  absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  loadExecutable(const v1::ExecutableRecord &record,
                 const std::filesystem::path &artifactPath) override;

  /// Runs one call on dense buffers in manifest order; returns what the
  /// device counted. UNIMPLEMENTED here.
  absl::StatusOr<v1::DeviceCounters>
  run(LoadedExecutable &executable, const CallBuffers &buffers) override;

private:
  explicit NullBackend(NullBackendConfig config) : config(config) {}

  NullBackendConfig config;
};

} // namespace kiln::agent::null
