//===- MicronDla.h - the driver over libmicrondla.so ------------*- C++ -*-===//
//
// This file declares MicronDla: libmicrondla.so opened with dlopen, every
// entry point resolved and the version checked; and MicronDlaModel, one
// compiled model on the device (one context), run under a lock. Every
// failure of the library is a status naming the call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/mdla/MicronDlaApi.h"

#include "absl/status/statusor.h"

#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace kiln::agent::mdla {

/// The oldest SDK release whose API these declarations follow ("2020.1").
inline constexpr int kMinimumSdkYear = 2020;

struct MicronDlaEntryPoints {
  api::ie_create create = nullptr;
  api::ie_safecreate safecreate = nullptr;
  api::ie_compile compile = nullptr;
  api::ie_init init = nullptr;
  api::ie_run run = nullptr;
  api::ie_putinput putinput = nullptr;
  api::ie_getresult getresult = nullptr;
  api::ie_setflag setflag = nullptr;
  api::ie_getinfo getinfo = nullptr;
  api::ie_run_sw runSw = nullptr;
  api::ie_free free = nullptr;
};

/// One compiled model loaded on the device.
class MicronDlaModel {
public:
  MicronDlaModel(const MicronDlaEntryPoints &api, void *context,
                 std::vector<std::vector<uint64_t>> outputShapes);
  ~MicronDlaModel();
  MicronDlaModel(const MicronDlaModel &) = delete;
  MicronDlaModel &operator=(const MicronDlaModel &) = delete;

  /// The output shapes the library reported.
  const std::vector<std::vector<uint64_t>> &outputShapes() const { return shapes; }

  /// ie_run (or, with `software`, ie_run_sw). INVALID_ARGUMENT when the
  /// output counts differ from the model's; INTERNAL naming the call and its
  /// code when the library fails.
  absl::Status run(std::span<const float *const> inputs,
                   std::span<const uint64_t> inputElements,
                   std::span<float *const> outputs,
                   std::span<const uint64_t> outputElements,
                   bool software = false);

private:
  const MicronDlaEntryPoints &api;
  void *context;
  std::vector<std::vector<uint64_t>> shapes;
  std::mutex lock;
};

class MicronDla {
public:
  /// dlopens `library` (a path, or a name the loader searches for),
  /// resolves every entry point and checks the version. NOT_FOUND when the
  /// library is absent; FAILED_PRECONDITION when an entry point is missing
  /// or the version is older than kMinimumSdkYear.
  static absl::StatusOr<std::unique_ptr<MicronDla>> open(const std::string &library);
  ~MicronDla();

  /// The version the library reported ("2020.2.0").
  const std::string &version() const { return versionText; }

  /// Whether the hardware answers: ie_safecreate gives a context.
  bool hardwarePresent();

  /// Compiles `onnxModel` (weights bound) into `bin` with ie_compile and
  /// loads it with ie_init. `inshapes` as ie_compile takes it.
  absl::StatusOr<std::unique_ptr<MicronDlaModel>>
  compile(const std::filesystem::path &onnxModel, const std::filesystem::path &bin,
          const std::string &inshapes);
  /// Loads an already compiled `bin` with ie_init.
  absl::StatusOr<std::unique_ptr<MicronDlaModel>> load(const std::filesystem::path &bin);

  const MicronDlaEntryPoints &entryPoints() const { return api; }

private:
  MicronDla(void *handle) : handle(handle) {}

  /// ie_init of `bin` on `context`, which it takes (freed on failure).
  absl::StatusOr<std::unique_ptr<MicronDlaModel>> initialize(void *context,
                                                             const std::filesystem::path &bin);

  void *handle;
  MicronDlaEntryPoints api;
  std::string versionText;
};

/// "1x3x224x224;1x10" for ie_compile's inshapes.
std::string formatInShapes(const std::vector<std::vector<int64_t>> &shapes);

} // namespace kiln::agent::mdla
