//===- MicronDla.cpp - the driver over libmicrondla.so --------------------===//
//
// This file implements the dlopen of Micron's library, the version check,
// and compile/load/run over its C API with every failure a status.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/mdla/MicronDla.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace kiln::agent::mdla {
namespace {

/// Takes the output description ie_compile/ie_init return, freeing it.
std::vector<std::vector<uint64_t>> takeShapes(unsigned count, unsigned *ranks,
                                              uint64_t **shapes) {
  std::vector<std::vector<uint64_t>> result;
  for (unsigned i = 0; i < count && ranks && shapes; ++i) {
    result.emplace_back(shapes[i], shapes[i] + ranks[i]);
    std::free(shapes[i]);
  }
  std::free(shapes);
  std::free(ranks);
  return result;
}

} // namespace

MicronDlaModel::MicronDlaModel(const MicronDlaEntryPoints &api, void *context,
                               std::vector<std::vector<uint64_t>> outputShapes)
    : api(api), context(context), shapes(std::move(outputShapes)) {}

MicronDlaModel::~MicronDlaModel() { api.free(context); }

absl::Status MicronDlaModel::run(std::span<const float *const> inputs,
                                 std::span<const uint64_t> inputElements,
                                 std::span<float *const> outputs,
                                 std::span<const uint64_t> outputElements,
                                 bool software) {
  if (inputElements.size() != inputs.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "the call passes ", inputs.size(), " inputs and ", inputElements.size(),
        " input sizes"));
  if (outputs.size() != shapes.size() || outputElements.size() != outputs.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "the model has ", shapes.size(), " outputs; the call passes ", outputs.size(),
        " (and ", outputElements.size(), " output sizes)"));
  std::vector<uint64_t> elements(outputElements.begin(), outputElements.end());
  std::lock_guard<std::mutex> guard(lock);
  int code = (software ? api.runSw : api.run)(
      context, inputs.data(), inputElements.data(), static_cast<unsigned>(inputs.size()),
      const_cast<float **>(outputs.data()), elements.data(),
      static_cast<unsigned>(outputs.size()));
  if (code != 0)
    return absl::InternalError(absl::StrCat(software ? "ie_run_sw" : "ie_run",
                                            " failed with code ", code));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MicronDla>> MicronDla::open(const std::string &library) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return absl::NotFoundError(absl::StrCat("cannot load ", library, ": ", dlerror()));
  std::unique_ptr<MicronDla> dla(new MicronDla(handle));
  std::vector<std::string> missing;
  auto resolve = [&](auto &slot, const char *name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
    if (!slot)
      missing.push_back(name);
  };
  MicronDlaEntryPoints &api = dla->api;
  resolve(api.create, "ie_create");
  resolve(api.safecreate, "ie_safecreate");
  resolve(api.compile, "ie_compile");
  resolve(api.init, "ie_init");
  resolve(api.run, "ie_run");
  resolve(api.putinput, "ie_putinput");
  resolve(api.getresult, "ie_getresult");
  resolve(api.setflag, "ie_setflag");
  resolve(api.getinfo, "ie_getinfo");
  resolve(api.runSw, "ie_run_sw");
  resolve(api.free, "ie_free");
  if (!missing.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        library, " lacks ", absl::StrJoin(missing, ", "),
        ": not a Micron DLA SDK library Kiln can drive"));
  void *context = api.create();
  if (!context)
    return absl::FailedPreconditionError(absl::StrCat(library, ": ie_create failed"));
  char version[api::kInfoBufferBytes] = {};
  int code = api.getinfo(context, "version", version);
  api.free(context);
  version[sizeof(version) - 1] = '\0';
  if (code != 0)
    return absl::FailedPreconditionError(
        absl::StrCat(library, ": ie_getinfo(\"version\") failed with code ", code));
  dla->versionText = version;
  int year = 0, release = 0;
  std::sscanf(version, "%d.%d", &year, &release);
  if (year < kMinimumSdkYear || (year == kMinimumSdkYear && release < 1))
    return absl::FailedPreconditionError(absl::StrCat(
        library, " is version '", dla->versionText, "'; Kiln drives ",
        kMinimumSdkYear, ".1 or later"));
  return dla;
}

MicronDla::~MicronDla() { dlclose(handle); }

bool MicronDla::hardwarePresent() {
  void *context = api.safecreate();
  if (!context)
    return false;
  api.free(context);
  return true;
}

absl::StatusOr<std::unique_ptr<MicronDlaModel>>
MicronDla::initialize(void *context, const std::filesystem::path &bin) {
  unsigned count = 0, *ranks = nullptr;
  uint64_t **shapes = nullptr;
  void *loaded = api.init(context, bin.c_str(), &count, &ranks, &shapes, nullptr);
  auto outputs = takeShapes(count, ranks, shapes);
  if (!loaded) {
    api.free(context);
    return absl::InternalError(absl::StrCat("ie_init of ", bin.string(), " failed"));
  }
  return std::make_unique<MicronDlaModel>(api, loaded, std::move(outputs));
}

absl::StatusOr<std::unique_ptr<MicronDlaModel>>
MicronDla::compile(const std::filesystem::path &onnxModel,
                   const std::filesystem::path &bin, const std::string &inshapes) {
  void *context = api.create();
  if (!context)
    return absl::InternalError("ie_create failed");
  unsigned count = 0, *ranks = nullptr;
  uint64_t **shapes = nullptr;
  void *compiled = api.compile(context, onnxModel.c_str(), bin.c_str(),
                               inshapes.c_str(), &count, &ranks, &shapes, nullptr);
  takeShapes(count, ranks, shapes);
  if (!compiled) {
    api.free(context);
    return absl::InternalError(absl::StrCat("ie_compile of ", onnxModel.string(),
                                            " (inshapes ", inshapes, ") failed"));
  }
  return initialize(compiled, bin);
}

absl::StatusOr<std::unique_ptr<MicronDlaModel>>
MicronDla::load(const std::filesystem::path &bin) {
  void *context = api.create();
  if (!context)
    return absl::InternalError("ie_create failed");
  return initialize(context, bin);
}

std::string formatInShapes(const std::vector<std::vector<int64_t>> &shapes) {
  std::vector<std::string> parts;
  for (const auto &shape : shapes)
    parts.push_back(absl::StrJoin(shape, "x"));
  return absl::StrJoin(parts, ";");
}

} // namespace kiln::agent::mdla
