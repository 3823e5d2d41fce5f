//===- MdlaBackend.h - the mdla device kind ---------------------*- C++ -*-===//
//
// This file declares MdlaBackend, the DeviceBackend of kiln-agent-mdla. It
// runs the mdla target's ONNX artifacts in one of two modes:
//
// - on Micron DLA hardware, through libmicrondla.so (MicronDla.h): each
//   artifact is bound to its weights, compiled once with ie_compile (the
//   .bin kept under the digest of the bound model) and run with ie_run;
// - with --simulate, on a device whose properties say `simulated`: Kiln's
//   fixed-point model of the MDLA (FixedPointModel.h), run on the host.
//
// Without the library or without a board, and without --simulate, it
// serves no device and says why. Every run reports the numeric error
// against f32 and Kiln's cycle estimate in its counters.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DeviceBackend.h"
#include "kiln/agent/mdla/MicronDla.h"

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

namespace kiln::agent::mdla {

/// A call's buffers by argument name (MdlaBackend.cpp).
struct BoundArguments;

struct MdlaBackendConfig {
  /// Serve one simulated device (Kiln's fixed-point model), not hardware.
  bool simulate = false;
  /// The SDK library to dlopen: a path, or a name the loader searches for.
  std::string library = "libmicrondla.so";
  /// Where compiled .bin files are kept (hardware mode).
  std::filesystem::path binCache;
  /// Compare every hardware run with an f32 evaluation on the host (the
  /// numeric_error counter); simulated runs always compare.
  bool numericCheck = true;
};

class MdlaBackend final : public DeviceBackend {
public:
  /// Opens the library unless simulating. A missing library or board is
  /// not an error: the backend then serves no device (unavailableReason).
  static absl::StatusOr<std::unique_ptr<MdlaBackend>> create(MdlaBackendConfig config);

  std::string_view kind() const override { return "mdla"; }
  absl::StatusOr<std::vector<v1::Device>> describeDevices() override;
  absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  loadExecutable(const v1::ExecutableRecord &record,
                 const std::filesystem::path &artifactPath) override;
  absl::StatusOr<v1::DeviceCounters>
  run(LoadedExecutable &executable, const CallBuffers &buffers) override;

  /// Why no device is served; empty when one is.
  std::string unavailableReason() const override { return unavailable; }

private:
  explicit MdlaBackend(MdlaBackendConfig config) : config(std::move(config)) {}

  /// Hardware mode: the model compiled for the call's weights: kept from an
  /// earlier call with the same weight buffers, loaded from the .bin cache,
  /// or compiled with ie_compile (one compile at a time).
  absl::StatusOr<std::shared_ptr<MicronDlaModel>>
  compiledModel(LoadedExecutable &executable, const BoundArguments &bound,
                bool serialsKnown);

  MdlaBackendConfig config;
  std::unique_ptr<MicronDla> dla;
  std::string unavailable;
  std::mutex compileLock;
};

} // namespace kiln::agent::mdla
