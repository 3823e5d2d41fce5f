//===- QemuBackend.h - riscv64 executables on QEMU devices ----------------===//
//
// This file declares QemuBackend: a DeviceBackend whose devices are
// qemu-riscv64 processes running the Kiln guest runner. Executables stay
// loaded in each device between calls; tensors travel through a shared
// arena; every call reports the guest instructions it retired.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DeviceBackend.h"
#include "kiln/agent/qemu/RunnerProcess.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::agent::qemu {

/// What the qemu agent's flags configure.
struct QemuBackendConfig {
  /// Simulated devices (one qemu process each).
  int devices = 1;
  /// Vector register length in bits; 0 simulates rv64gc without V.
  int vlen = 128;
  RunnerConfig runner;
};

/// The devices, shared with the executables so that releasing one unloads it
/// from every device even after the backend is gone.
struct DevicePool;

class QemuBackend final : public DeviceBackend {
public:
  /// Checks the configuration and starts every device once, so a missing
  /// qemu, runner or plugin is an error at start, not at the first call.
  static absl::StatusOr<std::unique_ptr<QemuBackend>>
  create(QemuBackendConfig config);
  ~QemuBackend() override;

  std::string_view kind() const override { return "riscv64"; }
  absl::StatusOr<std::vector<v1::Device>> describeDevices() override;
  absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  loadExecutable(const v1::ExecutableRecord &record,
                 const std::filesystem::path &artifactPath) override;
  absl::StatusOr<v1::DeviceCounters>
  run(LoadedExecutable &executable, const CallBuffers &buffers) override;

private:
  QemuBackend(QemuBackendConfig config, std::shared_ptr<DevicePool> pool)
      : config(std::move(config)), pool(std::move(pool)) {}

  QemuBackendConfig config;
  std::shared_ptr<DevicePool> pool;
};

/// The -cpu model string for `vlen` (0: no vector extension).
std::string qemuCpuModel(int vlen);

/// OK when an artifact generated with LLVM `features` runs on a device with
/// `vlen` (0: no V); FAILED_PRECONDITION naming the gap otherwise.
absl::Status checkVectorFeatures(const std::string &features, int vlen);

} // namespace kiln::agent::qemu
