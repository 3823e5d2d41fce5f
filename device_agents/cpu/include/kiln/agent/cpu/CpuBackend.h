//===- CpuBackend.h - run host shared objects -----------------------------===//
//
// This file declares CpuBackend, the "cpu" device: an artifact is an ELF
// shared object for the host, dlopen'ed and called through its C-ABI entry.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DeviceBackend.h"
#include "kiln/agent/cpu/ComputePool.h"
#include "kiln/agent/cpu/OneDnnKernels.h"
#include "kiln/common/CpuModel.h"

#include <memory>
#include <mutex>
#include <unordered_map>

namespace kiln::agent {

/// The host CPU as one device. Artifacts are loaded with
/// dlopen(RTLD_NOW | RTLD_LOCAL) and stay loaded while the TaskRunner keeps
/// their LoadedExecutable (keyed by executable digest). An artifact that
/// exports kiln_rt_set_thread_pool gets the backend's ComputePool for its
/// parallel loops right after loading, and one that calls a kernel library
/// (manifest kernel_library "onednn") its own OneDnnKernels.
class CpuBackend : public DeviceBackend {
public:
  /// A device with `cpu`'s features: the host's by default, or fewer
  /// (advertisedCpu) to pin an agent to a baseline; its code's parallel
  /// loops run on `computeThreads` threads (the task's own thread included).
  explicit CpuBackend(CpuModel cpu = hostCpuModel(), int computeThreads = 1);

  /// The CPU an agent started with `--cpu NAME` reports and enforces: the
  /// host's for "" or "native"; otherwise the LLVM CPU `name`, which the host
  /// must be able to run (FAILED_PRECONDITION naming the features it lacks;
  /// INVALID_ARGUMENT for a name LLVM does not know).
  static absl::StatusOr<CpuModel> advertisedCpu(absl::string_view name);

  std::string_view kind() const override { return "cpu"; }

  /// The compute pool's threads.
  int hostThreadsPerRun() const override { return pool.threads(); }

  /// One device: properties cpu (LLVM CPU name), cpu_features (its ISA
  /// features, LLVM names, comma separated: what kilnd compiles for and
  /// schedules by), cpu_model (/proc/cpuinfo's model name), threads (the
  /// host's), compute_threads (the pool's), arch, memory_bytes,
  /// kernel_libraries ("onednn"), onednn_version and onednn_isa (the
  /// instruction set oneDNN's kernels use, within the reported CPU's).
  absl::StatusOr<std::vector<v1::Device>> describeDevices() override;

  /// FAILED_PRECONDITION when the manifest's format or triple is not for this
  /// host, or its code needs CPU features this device lacks (naming them),
  /// or a kernel library other than oneDNN;
  /// INVALID_ARGUMENT (with the dlerror text) when the file is not a
  /// loadable shared object or lacks the entry symbol.
  absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  loadExecutable(const v1::ExecutableRecord &record,
                 const std::filesystem::path &artifactPath) override;

  absl::StatusOr<v1::DeviceCounters>
  run(LoadedExecutable &executable, const CallBuffers &buffers) override;

private:
  CpuModel cpu;
  ComputePool pool;
  /// The kernel library installed in each loaded handle, shared by its
  /// loads (a second dlopen of an artifact returns the same handle).
  std::mutex kernelsMutex;
  std::unordered_map<void *, std::weak_ptr<OneDnnKernels>>
      kernelsByHandle; // guarded by kernelsMutex
  /// The instruction set oneDNN uses, within `cpu`'s features.
  std::string onednnIsa;
};

} // namespace kiln::agent
