//===- AcapBackend.h - Versal AI Engine arrays, on XRT or simulated -------===//
//
// This file declares AcapBackend, the "acap" device kind: a Versal board's
// AI Engine array driven through XRT, or, with --simulate, Kiln's
// functional model of the array (AieArraySimulator) with the executable's
// host code run on this machine. docs/devices/acap.md says what runs where.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DeviceBackend.h"
#include "kiln/common/AieArray.h"

#include <memory>
#include <string>

namespace kiln::agent::acap {

struct AcapBackendConfig {
  /// Serve one simulated array, not boards.
  bool simulate = false;
  /// The simulated array (kiln/common/AieArray.h).
  std::string array = std::string(aie::kDefaultArray);
  /// Host threads that stand in for the array's tiles.
  int threads = 1;
  /// Run every call a second time in f32 for the numeric_error counter.
  bool numericCheck = true;
};

class AcapBackend final : public DeviceBackend {
public:
  /// Simulating: one device. Otherwise the boards XRT enumerates; none is
  /// not an error: the backend then serves no device (unavailableReason).
  /// INVALID_ARGUMENT for an unknown array.
  static absl::StatusOr<std::unique_ptr<AcapBackend>> create(AcapBackendConfig config);

  std::string_view kind() const override { return "acap"; }

  /// Simulated: the threads standing in for the tiles; boards: one.
  int hostThreadsPerRun() const override {
    return config.simulate ? config.threads : 1;
  }

  /// Simulated: properties simulated=true, simulator, array, tiles,
  /// host_cpu (what kilnd compiles the host code for), host_arch,
  /// numeric_type, clock_hz, threads, counters, kernel_libraries=aie.
  /// Boards: xrt_index, array, simulated=false, kernel_libraries=aie and
  /// host_cpu=cortex-a72 (the agent runs on the board's Arm cores).
  absl::StatusOr<std::vector<v1::Device>> describeDevices() override;

  /// FAILED_PRECONDITION for a manifest format other than xclbin, host code
  /// for another machine or CPU, a plan that does not fit the array, or
  /// (boards) an xclbin without AI Engine kernels; INVALID_ARGUMENT when the
  /// file is not a well-formed acap xclbin, XRT cannot read it, or its host
  /// code does not load or lacks the entry symbol.
  absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  loadExecutable(const v1::ExecutableRecord &record,
                 const std::filesystem::path &artifactPath) override;

  /// Counters: estimated_cycles (the plan's, for every call made) and, with
  /// numericCheck, numeric_error against the same run in f32.
  /// INVALID_ARGUMENT when the host code makes a call its plan lacks (an
  /// inconsistent artifact) or the simulator fails one.
  absl::StatusOr<v1::DeviceCounters>
  run(LoadedExecutable &executable, const CallBuffers &buffers) override;

  std::string unavailableReason() const override { return unavailable; }

private:
  explicit AcapBackend(AcapBackendConfig config) : config(std::move(config)) {}

  AcapBackendConfig config;
  /// Boards XRT found (hardware mode).
  int boards = 0;
  std::string unavailable;
};

} // namespace kiln::agent::acap
