//===- QemuBackend.cpp - riscv64 executables on QEMU devices --------------===//
//
// This file implements QemuBackend: device description, artifact checks,
// and calls that copy buffers into the device's arena, run, and copy the
// outputs back.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/qemu/QemuBackend.h"

#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"
#include "kiln/common/TensorTypes.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include <atomic>
#include <cstring>
#include <fstream>

namespace kiln::agent::qemu {

struct DevicePool {
  struct Device {
    explicit Device(RunnerConfig config) : process(std::move(config)) {}
    std::mutex mutex;
    RunnerProcess process;
  };
  std::vector<std::unique_ptr<Device>> devices;
  std::atomic<uint64_t> nextHandle{1};
};

namespace {

/// An artifact loaded lazily into each device that runs it.
class QemuExecutable final : public LoadedExecutable {
public:
  /// `manifest` has static sizes, or data-dependent ones only, bound at
  /// their max (bindManifest): the buffers the entry point takes.
  QemuExecutable(std::shared_ptr<DevicePool> pool, uint64_t handle,
                 std::string path, const v1::ExecutableManifest &manifest,
                 int symbols, int dataDependent)
      : pool(std::move(pool)), handle(handle), path(std::move(path)),
        symbols(symbols), dataDependent(dataDependent) {
    auto add = [this](const auto &list) {
      for (const v1::ManifestArgument &argument : list)
        sizes.push_back(static_cast<uint64_t>(byteSize(argument.type()).value_or(0)));
    };
    add(manifest.parameters());
    add(manifest.inputs());
    // The symbols' values, between the inputs and the outputs.
    if (symbols > 0)
      sizes.push_back(static_cast<uint64_t>(symbols) * sizeof(int64_t));
    add(manifest.outputs());
    // The data-dependent sizes the run computes, after the outputs.
    if (dataDependent > 0)
      sizes.push_back(static_cast<uint64_t>(dataDependent) * sizeof(int64_t));
  }
  ~QemuExecutable() override {
    for (auto &device : pool->devices) {
      std::lock_guard<std::mutex> lock(device->mutex);
      device->process.unload(handle);
    }
  }

  std::shared_ptr<DevicePool> pool;
  uint64_t handle;
  std::string path;
  /// Bytes of every buffer in call order (parameters, inputs, the symbols'
  /// values, outputs, the data-dependent sizes).
  std::vector<uint64_t> sizes;
  int symbols = 0;
  int dataDependent = 0;
};

std::string qemuVersion(const std::string &qemu) {
  // Best effort, for ListDevices; the device works without it.
  std::string command = absl::StrCat(qemu, " --version 2>/dev/null");
  FILE *pipe = ::popen(command.c_str(), "r");
  if (!pipe)
    return "unknown";
  char line[256] = {};
  std::string version = std::fgets(line, sizeof line, pipe) ? line : "unknown";
  ::pclose(pipe);
  while (!version.empty() && (version.back() == '\n' || version.back() == '\r'))
    version.pop_back();
  return version;
}

} // namespace

std::string qemuCpuModel(int vlen) {
  if (vlen == 0)
    return "rv64,v=false";
  return absl::StrCat("rv64,v=true,vext_spec=v1.0,vlen=", vlen, ",elen=64");
}

absl::Status checkVectorFeatures(const std::string &features, int vlen) {
  int needed = 0;
  for (absl::string_view feature : absl::StrSplit(features, ',')) {
    if (feature == "+v")
      needed = std::max(needed, 128);
    int bits = 0;
    if (absl::ConsumePrefix(&feature, "+zvl") &&
        absl::ConsumeSuffix(&feature, "b") && absl::SimpleAtoi(feature, &bits))
      needed = std::max(needed, bits);
  }
  if (needed == 0 || vlen >= needed)
    return absl::OkStatus();
  if (vlen == 0)
    return absl::FailedPreconditionError(
        "the executable uses the V vector extension but this device simulates "
        "rv64gc without it; compile with options.riscv.scalar_only");
  return absl::FailedPreconditionError(
      absl::StrCat("the executable assumes VLEN >= ", needed,
                   " bits but this device has VLEN ", vlen,
                   "; compile with options.riscv.vlen <= ", vlen));
}

absl::StatusOr<std::unique_ptr<QemuBackend>>
QemuBackend::create(QemuBackendConfig config) {
  if (config.devices < 1 || config.devices > 64)
    return absl::InvalidArgumentError(
        absl::StrCat("--devices must be 1..64, got ", config.devices));
  if (config.vlen != 0 &&
      (config.vlen < 128 || config.vlen > 4096 || (config.vlen & (config.vlen - 1))))
    return absl::InvalidArgumentError(absl::StrCat(
        "--vlen must be 0 (no V) or a power of two in 128..4096, got ",
        config.vlen));
  for (const auto &[flag, path] :
       {std::pair{"--runner", config.runner.runner},
        std::pair{"--plugin", config.runner.plugin}})
    if (!std::ifstream(path))
      return absl::FailedPreconditionError(
          absl::StrCat(flag, ": cannot read '", path, "'"));
  config.runner.cpuModel = qemuCpuModel(config.vlen);
  auto pool = std::make_shared<DevicePool>();
  for (int i = 0; i < config.devices; ++i) {
    pool->devices.push_back(std::make_unique<DevicePool::Device>(config.runner));
    if (absl::Status started = pool->devices.back()->process.ensureStarted();
        !started.ok())
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot start simulated device ", i, " (", config.runner.qemu,
          " -cpu ", config.runner.cpuModel, " ", config.runner.runner,
          "): ", started.message()));
  }
  return std::unique_ptr<QemuBackend>(new QemuBackend(std::move(config), pool));
}

QemuBackend::~QemuBackend() = default;

absl::StatusOr<std::vector<v1::Device>> QemuBackend::describeDevices() {
  std::string version = qemuVersion(config.runner.qemu);
  std::vector<v1::Device> devices;
  for (int i = 0; i < config.devices; ++i) {
    v1::Device device;
    device.set_kind(std::string(kind()));
    auto &properties = *device.mutable_properties();
    properties["simulator"] = "qemu-riscv64 (user mode)";
    properties["qemu_version"] = version;
    properties["isa"] = config.vlen ? "rv64gcv" : "rv64gc";
    properties["vlen"] = absl::StrCat(config.vlen);
    properties["cpu_model"] = config.runner.cpuModel;
    properties["counters"] = "instructions (TCG plugin, per call)";
    devices.push_back(std::move(device));
  }
  return devices;
}

absl::StatusOr<std::shared_ptr<LoadedExecutable>>
QemuBackend::loadExecutable(const v1::ExecutableRecord &record,
                            const std::filesystem::path &artifactPath) {
  const v1::ExecutableManifest &manifest = record.manifest();
  const int dataDependent = dataDependentCount(manifest.symbols());
  if (manifest.symbols_size() > dataDependent)
    return absl::FailedPreconditionError(
        "the qemu agent runs executables with static sizes only; this one "
        "has symbolic sizes (the compiler makes those for the cpu target)");
  // Data-dependent sizes alone: every buffer at its largest.
  std::vector<const v1::TensorType *> inputs;
  for (const v1::ManifestArgument &input : manifest.inputs())
    inputs.push_back(&input.type());
  ASSIGN_OR_RETURN(v1::ExecutableManifest sized, bindManifest(manifest, inputs));
  if (manifest.format() != "elf-shared-object")
    return absl::FailedPreconditionError(absl::StrCat(
        "the qemu agent runs riscv64 'elf-shared-object' artifacts, not '",
        manifest.format(), "'"));
  if (manifest.triple().rfind("riscv64", 0) != 0)
    return absl::FailedPreconditionError(absl::StrCat(
        "artifact was built for '", manifest.triple(),
        "', not riscv64; the qemu agent runs riscv64 code"));
  if (manifest.entry_symbol() != "kiln_invoke")
    return absl::InvalidArgumentError(absl::StrCat(
        "the riscv64 runner calls 'kiln_invoke', not '",
        manifest.entry_symbol(), "'"));
  if (absl::Status vector = checkVectorFeatures(manifest.features(), config.vlen);
      !vector.ok())
    return vector;
  auto executable = std::make_shared<QemuExecutable>(
      pool, pool->nextHandle.fetch_add(1), artifactPath.string(), sized,
      manifest.symbols_size(), dataDependent);
  // Load it now on one device so a broken artifact fails here, not mid-run.
  auto &device = *pool->devices.front();
  std::lock_guard<std::mutex> lock(device.mutex);
  if (absl::Status loaded =
          device.process.ensureLoaded(executable->handle, executable->path);
      !loaded.ok())
    return absl::Status(loaded.code(),
                        absl::StrCat("cannot load artifact: ", loaded.message()));
  return executable;
}

absl::StatusOr<v1::DeviceCounters>
QemuBackend::run(LoadedExecutable &executable, const CallBuffers &buffers) {
  auto *qemu = dynamic_cast<QemuExecutable *>(&executable);
  if (!qemu)
    return absl::InternalError("executable was not loaded by the qemu backend");
  if (buffers.device < 0 ||
      buffers.device >= static_cast<int>(pool->devices.size()))
    return absl::InvalidArgumentError(
        absl::StrCat("no simulated device ", buffers.device));
  std::vector<void *> pointers;
  for (auto list : {buffers.parameters, buffers.inputs})
    pointers.insert(pointers.end(), list.begin(), list.end());
  if (static_cast<int>(buffers.symbols.size()) != qemu->symbols)
    return absl::InternalError(absl::StrCat("the call has ", buffers.symbols.size(),
                                            " symbol values, the manifest ",
                                            qemu->symbols));
  if (qemu->symbols > 0) // copied in only; the ABI takes no const
    pointers.push_back(const_cast<int64_t *>(buffers.symbols.data()));
  size_t firstOutput = pointers.size();
  pointers.insert(pointers.end(), buffers.outputs.begin(), buffers.outputs.end());
  if (pointers.size() != qemu->sizes.size())
    return absl::InternalError(absl::StrCat(
        "the call has ", pointers.size(), " buffers, the manifest ",
        qemu->sizes.size()));

  auto &device = *pool->devices[static_cast<size_t>(buffers.device)];
  std::lock_guard<std::mutex> lock(device.mutex);
  RunnerProcess &process = device.process;
  std::vector<uint64_t> offsets(pointers.size());
  uint64_t needed =
      SharedArena::layout(qemu->sizes.data(), qemu->sizes.size(), offsets.data());
  if (absl::Status reserved = process.reserve(needed); !reserved.ok())
    return reserved;
  if (absl::Status loaded = process.ensureLoaded(qemu->handle, qemu->path);
      !loaded.ok())
    return loaded;
  for (size_t i = 0; i < firstOutput; ++i)
    std::memcpy(process.arena().at(offsets[i]), pointers[i], qemu->sizes[i]);
  absl::StatusOr<uint64_t> instructions = process.call(qemu->handle, offsets);
  if (!instructions.ok())
    return instructions.status();
  for (size_t i = firstOutput; i < pointers.size(); ++i)
    std::memcpy(pointers[i], process.arena().at(offsets[i]), qemu->sizes[i]);
  v1::DeviceCounters counters;
  counters.set_instructions(*instructions);
  return counters;
}

} // namespace kiln::agent::qemu
