//===- MdlaBackend.cpp - the mdla device kind -----------------------------===//
//
// This file implements MdlaBackend: the mode chosen at start (hardware,
// simulated, or no device with the reason), the artifact checks at load,
// and a run: the outputs from the device or the fixed-point model, then
// the counters (numeric error against f32, estimated cycles).
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/mdla/MdlaBackend.h"

#include "kiln/agent/NumericError.h"

#include "kiln/agent/mdla/CycleModel.h"
#include "kiln/agent/mdla/FixedPointModel.h"
#include "kiln/agent/mdla/MdlaProgram.h"
#include "kiln/common/AtomicFile.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <unistd.h>

namespace kiln::agent::mdla {
/// The manifest's arguments by name, with their buffers.
struct BoundArguments {
  std::map<std::string, TensorView> weights;  // parameters the model reads
  std::map<std::string, TensorView> all;      // weights and inputs
  std::vector<uint64_t> weightSerials;
};

namespace {

class LoadedMdlaExecutable final : public LoadedExecutable {
public:
  LoadedMdlaExecutable(MdlaProgram program, v1::ExecutableManifest manifest)
      : program(std::move(program)), manifest(std::move(manifest)) {}

  MdlaProgram program;
  v1::ExecutableManifest manifest;
  std::mutex lock;
  /// Hardware mode: the compiled model for each recent set of weights (their
  /// buffers' serials), at most kModelsPerExecutable; each holds a context
  /// on the card.
  std::map<std::vector<uint64_t>, std::shared_ptr<MicronDlaModel>> models;
  /// The cycle estimate (static shapes: the same for every run).
  std::optional<uint64_t> cycles;
};

/// Compiled models kept per executable; past it the set is dropped and
/// rebuilt from the .bin cache as calls come.
constexpr size_t kModelsPerExecutable = 4;

/// What numeric_error.numeric_type says: Kiln's model, or the card's own
/// arithmetic (Micron's 16-bit fixed point, not Kiln's model of it).
constexpr const char *kSimulatedNumericType = "q16";
constexpr const char *kHardwareNumericType = "mdla-fixed16";

std::vector<int64_t> shapeOf(const v1::TensorType &type) {
  return {type.shape().begin(), type.shape().end()};
}


BoundArguments bindArguments(const LoadedMdlaExecutable &exe, const CallBuffers &buffers) {
  std::set<std::string> reads;
  for (const Port &port : exe.program.inputs())
    reads.insert(port.name);
  BoundArguments bound;
  for (int i = 0; i < exe.manifest.parameters_size(); ++i) {
    const v1::ManifestArgument &arg = exe.manifest.parameters(i);
    if (!reads.count(arg.name()))
      continue;
    TensorView view{shapeOf(arg.type()), static_cast<const float *>(buffers.parameters[i])};
    bound.weights[arg.name()] = view;
    bound.all[arg.name()] = view;
    bound.weightSerials.push_back(
        i < static_cast<int>(buffers.parameterSerials.size()) ? buffers.parameterSerials[i] : 0);
  }
  for (int i = 0; i < exe.manifest.inputs_size(); ++i) {
    const v1::ManifestArgument &arg = exe.manifest.inputs(i);
    if (reads.count(arg.name()))
      bound.all[arg.name()] =
          TensorView{shapeOf(arg.type()), static_cast<const float *>(buffers.inputs[i])};
  }
  return bound;
}

/// How far `device` is from `reference`, over every element of every output.
v1::NumericError compareOutputs(const std::vector<Tensor> &device,
                                const std::vector<Tensor> &reference,
                                const char *numericType) {
  NumericErrorMeter meter;
  for (size_t o = 0; o < device.size() && o < reference.size(); ++o)
    meter.add(device[o].data, reference[o].data);
  return meter.result(numericType);
}

absl::Status checkArtifact(const MdlaProgram &program,
                           const v1::ExecutableManifest &manifest) {
  std::map<std::string, const v1::ManifestArgument *> arguments;
  for (const v1::ManifestArgument &arg : manifest.parameters())
    arguments[arg.name()] = &arg;
  for (const v1::ManifestArgument &arg : manifest.inputs())
    arguments[arg.name()] = &arg;
  for (const Port &port : program.inputs()) {
    auto it = arguments.find(port.name);
    if (it == arguments.end())
      return absl::FailedPreconditionError(absl::StrCat(
          "the model reads '", port.name, "', which the manifest does not pass"));
    if (it->second->type().dtype() != v1::DTYPE_F32 ||
        shapeOf(it->second->type()) != port.shape)
      return absl::FailedPreconditionError(absl::StrCat(
          "the manifest's '", port.name, "' is not the model's f32 input"));
  }
  if (program.outputs().size() != static_cast<size_t>(manifest.outputs_size()))
    return absl::FailedPreconditionError(absl::StrCat(
        "the model has ", program.outputs().size(), " outputs, the manifest ",
        manifest.outputs_size()));
  for (int i = 0; i < manifest.outputs_size(); ++i)
    if (manifest.outputs(i).type().dtype() != v1::DTYPE_F32 ||
        shapeOf(manifest.outputs(i).type()) != program.outputs()[i].shape)
      return absl::FailedPreconditionError(absl::StrCat(
          "manifest output '", manifest.outputs(i).name(),
          "' is not the model's f32 output of the same shape"));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::unique_ptr<MdlaBackend>> MdlaBackend::create(MdlaBackendConfig config) {
  std::unique_ptr<MdlaBackend> backend(new MdlaBackend(std::move(config)));
  if (backend->config.simulate) {
    spdlog::info("mdla: --simulate: serving one simulated device (Kiln's "
                 "16-bit fixed-point model of the MDLA, run on the host)");
    return backend;
  }
  absl::StatusOr<std::unique_ptr<MicronDla>> dla = MicronDla::open(backend->config.library);
  if (!dla.ok()) {
    backend->unavailable = absl::StrCat(
        "no Micron DLA SDK: ", dla.status().message(),
        " (install Micron's libmicrondla.so and name it with --library, or "
        "pass --simulate for Kiln's simulated device)");
  } else if (!(*dla)->hardwarePresent()) {
    backend->unavailable = absl::StrCat(
        "libmicrondla ", (*dla)->version(), " is loaded, but no MDLA board "
        "answered ie_safecreate (pass --simulate for Kiln's simulated device)");
  } else {
    backend->dla = *std::move(dla);
    if (backend->config.binCache.empty())
      return absl::InvalidArgumentError("--bin-cache must name a directory");
    std::error_code ec;
    std::filesystem::create_directories(backend->config.binCache, ec);
    if (ec)
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot create --bin-cache ", backend->config.binCache.string(), ": ", ec.message()));
    spdlog::info("mdla: serving one MDLA through libmicrondla {}", backend->dla->version());
    return backend;
  }
  spdlog::warn("mdla: serving no device: {}", backend->unavailable);
  return backend;
}

absl::StatusOr<std::vector<v1::Device>> MdlaBackend::describeDevices() {
  if (!config.simulate && !dla)
    return std::vector<v1::Device>{};
  v1::Device device;
  device.set_kind("mdla");
  auto &properties = *device.mutable_properties();
  properties["simulated"] = config.simulate ? "true" : "false";
  properties["numeric_type"] = "q16 (16-bit fixed point, a power-of-two scale per layer)";
  properties["counters"] = "estimated_cycles (Kiln's throughput model), numeric_error (against f32)";
  if (config.simulate) {
    properties["simulator"] = "Kiln's fixed-point model of the MDLA (not Micron's)";
  } else {
    properties["sdk_version"] = dla->version();
    properties["sdk_library"] = config.library;
  }
  CycleModel model;
  properties["cycle_model"] = absl::StrCat(
      model.macsPerCycle, " MAC/cycle, ", model.vectorOpsPerCycle, " vector ops/cycle, ",
      model.bytesPerCycle, " B/cycle, ", model.clockMhz, " MHz (Kiln's estimate)");
  return std::vector<v1::Device>{std::move(device)};
}

absl::StatusOr<std::shared_ptr<LoadedExecutable>>
MdlaBackend::loadExecutable(const v1::ExecutableRecord &record,
                            const std::filesystem::path &artifactPath) {
  const v1::ExecutableManifest &manifest = record.manifest();
  if (manifest.format() != "onnx-model" || manifest.target() != "mdla")
    return absl::FailedPreconditionError(absl::StrCat(
        "the mdla agent runs target 'mdla' 'onnx-model' artifacts, not target '",
        manifest.target(), "' '", manifest.format(), "'"));
  if (manifest.symbols_size() > 0)
    return absl::FailedPreconditionError("the mdla agent runs static sizes only");
  ASSIGN_OR_RETURN(std::string bytes, readWholeFile(artifactPath));
  absl::StatusOr<MdlaProgram> program = MdlaProgram::parse(bytes);
  if (!program.ok())
    return absl::FailedPreconditionError(
        absl::StrCat("the artifact is not a model this device runs: ",
                     program.status().message()));
  if (manifest.entry_symbol() != program->graphName())
    return absl::FailedPreconditionError(absl::StrCat(
        "the manifest's entry_symbol '", manifest.entry_symbol(),
        "' is not the model's graph, '", program->graphName(), "'"));
  RETURN_IF_ERROR(checkArtifact(*program, manifest));
  return std::make_shared<LoadedMdlaExecutable>(*std::move(program), manifest);
}

absl::StatusOr<std::shared_ptr<MicronDlaModel>>
MdlaBackend::compiledModel(LoadedExecutable &executable, const BoundArguments &bound,
                           bool serialsKnown) {
  auto &exe = static_cast<LoadedMdlaExecutable &>(executable);
  {
    std::lock_guard<std::mutex> guard(exe.lock);
    if (auto it = exe.models.find(bound.weightSerials);
        serialsKnown && it != exe.models.end())
      return it->second;
  }
  ASSIGN_OR_RETURN(std::string boundModel, exe.program.bindWeights(bound.weights));
  // The key names the SDK too: a .bin from another release is not reused.
  std::string digest = sha256Hex(absl::StrCat(dla->version(), "\n", boundModel));
  std::filesystem::path bin = config.binCache / (digest + ".bin");
  std::shared_ptr<MicronDlaModel> model;
  {
    // One compile at a time in this agent; temporary names of this process
    // keep agents sharing the folder apart.
    std::lock_guard<std::mutex> guard(compileLock);
    std::error_code ec;
    if (std::filesystem::exists(bin, ec)) {
      ASSIGN_OR_RETURN(model, dla->load(bin));
    } else {
      std::string temporary = absl::StrCat(digest, ".", ::getpid());
      std::filesystem::path onnx = config.binCache / (temporary + ".onnx");
      std::filesystem::path partial = config.binCache / (temporary + ".bin.partial");
      RETURN_IF_ERROR(writeFileAtomically(onnx, boundModel, Durability::kInTransit));
      std::vector<std::vector<int64_t>> shapes;
      for (const Port &port : exe.program.inputs())
        if (!bound.weights.count(port.name))
          shapes.push_back(port.shape);
      absl::StatusOr<std::unique_ptr<MicronDlaModel>> compiled =
          dla->compile(onnx, partial, formatInShapes(shapes));
      std::filesystem::remove(onnx, ec);
      if (!compiled.ok()) {
        std::filesystem::remove(partial, ec);
        return compiled.status();
      }
      std::filesystem::rename(partial, bin, ec);
      if (ec)
        return absl::InternalError(absl::StrCat(
            "ie_compile reported success but its output ", partial.string(),
            " could not be kept as ", bin.string(), ": ", ec.message()));
      model = *std::move(compiled);
    }
  }
  if (serialsKnown) {
    std::lock_guard<std::mutex> guard(exe.lock);
    if (exe.models.size() >= kModelsPerExecutable)
      exe.models.clear();
    exe.models[bound.weightSerials] = model;
  }
  return model;
}

absl::StatusOr<v1::DeviceCounters> MdlaBackend::run(LoadedExecutable &executable,
                                                    const CallBuffers &buffers) {
  auto &exe = static_cast<LoadedMdlaExecutable &>(executable);
  if (!config.simulate && !dla)
    return absl::FailedPreconditionError(absl::StrCat("no MDLA: ", unavailable));
  BoundArguments bound = bindArguments(exe, buffers);
  const std::vector<Port> &outputs = exe.program.outputs();
  v1::DeviceCounters counters;
  std::optional<Evaluation> reference;
  if (config.simulate || config.numericCheck || !exe.cycles) {
    // The f32 reference; its layers' work also gives the cycle estimate,
    // which static shapes make the same for every run.
    ASSIGN_OR_RETURN(reference, evaluate(exe.program, bound.all, Numerics::kF32));
    std::lock_guard<std::mutex> guard(exe.lock);
    exe.cycles = estimateCycles(reference->work);
  }
  counters.set_estimated_cycles(*exe.cycles);
  if (!config.simulate && !config.numericCheck)
    reference.reset();
  if (config.simulate) {
    ASSIGN_OR_RETURN(Evaluation device, evaluate(exe.program, bound.all, Numerics::kQ16));
    for (size_t o = 0; o < outputs.size(); ++o)
      std::memcpy(buffers.outputs[o], device.outputs[o].data.data(),
                  device.outputs[o].data.size() * sizeof(float));
    *counters.mutable_numeric_error() =
        compareOutputs(device.outputs, reference->outputs, kSimulatedNumericType);
    return counters;
  }

  // Hardware: the model compiled for these weights, then ie_run.
  ASSIGN_OR_RETURN(std::shared_ptr<MicronDlaModel> model,
                   compiledModel(exe, bound, !buffers.parameterSerials.empty()));
  std::vector<const float *> inputs;
  std::vector<uint64_t> inputElements;
  for (const Port &port : exe.program.inputs())
    if (!bound.weights.count(port.name)) {
      inputs.push_back(bound.all.at(port.name).data);
      inputElements.push_back(static_cast<uint64_t>(elementCount(port.shape)));
    }
  std::vector<float *> outputPointers;
  std::vector<uint64_t> outputElements;
  for (size_t o = 0; o < outputs.size(); ++o) {
    outputPointers.push_back(static_cast<float *>(buffers.outputs[o]));
    outputElements.push_back(static_cast<uint64_t>(elementCount(outputs[o].shape)));
  }
  RETURN_IF_ERROR(model->run(inputs, inputElements, outputPointers, outputElements));
  if (reference) {
    std::vector<Tensor> device;
    for (size_t o = 0; o < outputs.size(); ++o)
      device.push_back(Tensor{outputs[o].shape,
                              std::vector<float>(outputPointers[o],
                                                 outputPointers[o] + outputElements[o])});
    *counters.mutable_numeric_error() =
        compareOutputs(device, reference->outputs, kHardwareNumericType);
  }
  return counters;
}

} // namespace kiln::agent::mdla
