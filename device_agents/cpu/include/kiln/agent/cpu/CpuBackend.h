//===- CpuBackend.h - run host shared objects -----------------------------===//
//
// This file declares CpuBackend, the "cpu" device: an artifact is an ELF
// shared object for the host, dlopen'ed and called through its C-ABI entry.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DeviceBackend.h"

namespace kiln::agent {

/// The host CPU as one device. Artifacts are loaded with
/// dlopen(RTLD_NOW | RTLD_LOCAL) and stay loaded while the TaskRunner keeps
/// their LoadedExecutable (keyed by executable digest).
class CpuBackend : public DeviceBackend {
public:
  std::string_view kind() const override { return "cpu"; }

  /// One device: properties cpu_model, cpu_features (vector ISA extensions),
  /// threads, arch, memory_bytes.
  absl::StatusOr<std::vector<v1::Device>> describeDevices() override;

  /// FAILED_PRECONDITION when the manifest's format or triple is not for this
  /// host; INVALID_ARGUMENT (with the dlerror text) when the file is not a
  /// loadable shared object or lacks the entry symbol.
  absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  loadExecutable(const v1::ExecutableRecord &record,
                 const std::filesystem::path &artifactPath) override;

  absl::StatusOr<v1::DeviceCounters>
  run(LoadedExecutable &executable, const CallBuffers &buffers) override;
};

} // namespace kiln::agent
