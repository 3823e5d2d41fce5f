//===- DeviceBackend.h - the interface every device backend implements ----===//
//
// This file declares DeviceBackend, the one class a new device kind writes:
// describe the devices, load an artifact, run it on host buffers. Everything
// else (registration, heartbeats, blob caching, the task loop) is shared.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/devices.pb.h"
#include "kiln/v1/executable.pb.h"
#include "kiln/v1/tensor.pb.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::agent {

/// A loaded executable, ready to run. Backends subclass it; it is released
/// (unloaded) when the last reference goes away.
class LoadedExecutable {
public:
  virtual ~LoadedExecutable();
};

/// The pointers one call of the C-ABI entry point receives, in manifest order,
/// and the device (index into describeDevices()) to run it on.
struct CallBuffers {
  std::span<void *const> parameters;
  std::span<void *const> inputs;
  /// The outputs, then, when the manifest has data-dependent sizes, the
  /// int64 array the executable writes their values to (executable.proto).
  std::span<void *const> outputs;
  int device = 0;
  /// One per parameter when known (AlignedBuffer::serial of the resident,
  /// unwritten buffer): equal serials mean equal bytes, so a backend may
  /// keep what it derives from a parameter (prepacked weights) under it.
  /// Empty when the caller cannot promise that.
  std::span<const uint64_t> parameterSerials = {};
  /// The values of the manifest's symbolic sizes for this call, in manifest
  /// order (empty for static shapes): the entry point takes a pointer to
  /// them between the inputs and the outputs.
  std::span<const int64_t> symbols = {};
};

/// One device kind: "cpu", "riscv64", "acap", "mdla".
class DeviceBackend {
public:
  virtual ~DeviceBackend();

  /// The target kind this backend runs; compared with manifest.target.
  virtual std::string_view kind() const = 0;

  /// The devices this backend owns, with kind and properties filled in
  /// (id, agent_id and state are the daemon's to fill).
  virtual absl::StatusOr<std::vector<v1::Device>> describeDevices() = 0;

  /// The host threads one run keeps busy (a cpu agent's compute pool;
  /// other backends wait on their device or simulator with one). The
  /// agent's direct channels poll for calls only when the CPUs it may run
  /// on outnumber them (--direct-poll-us auto).
  virtual int hostThreadsPerRun() const { return 1; }

  /// Why describeDevices() offers no device (no hardware, no vendor
  /// library), in words for the agent's error at start; empty otherwise.
  virtual std::string unavailableReason() const { return {}; }

  /// Loads the artifact at `artifactPath` (already verified against
  /// record.artifact) so that it can run. Callers cache the result by
  /// executable digest; implementations need not.
  virtual absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  loadExecutable(const v1::ExecutableRecord &record,
                 const std::filesystem::path &artifactPath) = 0;

  /// Runs `executable` once on device `buffers.device`. Every buffer is
  /// dense, row-major, 64-byte aligned and sized for its manifest type;
  /// outputs are preallocated. Returns what the device counted (simulators
  /// count instructions; others leave the counters at zero).
  virtual absl::StatusOr<v1::DeviceCounters>
  run(LoadedExecutable &executable, const CallBuffers &buffers) = 0;
};

} // namespace kiln::agent
