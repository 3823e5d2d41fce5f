//===- AcapBackend.cpp - Versal AI Engine arrays, on XRT or simulated -----===//
#include "kiln/agent/acap/AcapBackend.h"

#include "kiln/agent/acap/AcapArtifact.h"
#include "kiln/agent/acap/AieArraySimulator.h"
#include "kiln/agent/HostCode.h"
#include "kiln/agent/NumericError.h"
#include "kiln/common/AgentProtocol.h"
#include "kiln/common/AieArray.h"
#include "kiln/common/AtomicFile.h"
#include "kiln/common/CpuModel.h"
#include "kiln/common/Status.h"
#include "kiln/common/TensorTypes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <xrt/experimental/xrt_system.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::agent::acap {
namespace {

using EntryPoint = void (*)(void **);
using SetKernelLibrary = int (*)(const kiln_rt_kernel_library *);

/// The board's host CPU (the Versal's Arm cores), as the acap target names it.
constexpr const char *kBoardHostCpu = "cortex-a72";

constexpr const char *kSimulator =
    "Kiln's functional model of an AIE-ML array (not AMD's aiesimulator)";

/// The host code of a loaded artifact, the simulator it calls, and what run
/// needs to know of its outputs.
class AcapExecutable : public LoadedExecutable {
public:
  ~AcapExecutable() override {
    if (handle)
      ::dlclose(handle);
    if (file >= 0)
      ::close(file);
  }
  void *handle = nullptr;
  /// The memfd the host code was loaded from, open while it is loaded: the
  /// dynamic loader knows a load by its path (/proc/self/fd/N), which must
  /// not name another load's file meanwhile.
  int file = -1;
  EntryPoint entry = nullptr;
  std::unique_ptr<AieArraySimulator> simulator;
  /// Bytes of each output, and whether it is f32 (the ones numeric_error
  /// compares).
  std::vector<int64_t> outputBytes;
  std::vector<bool> outputIsF32;
};

/// Loads `image` (an ELF shared object) into `exe` from memory: through a
/// memfd, so no file outlives the process.
absl::Status loadHostCode(const std::string &image, AcapExecutable &exe) {
  int fd = ::memfd_create("kiln-acap-host", MFD_CLOEXEC);
  if (fd < 0)
    return absl::InternalError(
        absl::StrCat("memfd_create for the host code: ", std::strerror(errno)));
  exe.file = fd;
  std::string path = absl::StrCat("/proc/self/fd/", fd);
  RETURN_IF_ERROR(writeAll(fd, image, path));
  ::dlerror();
  exe.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!exe.handle)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load the xclbin's host code: ", dlerrorText()));
  return absl::OkStatus();
}

/// The host CPU a simulated array asks kilnd to compile host code for: the
/// highest x86-64 ISA level this machine runs (a named model such as
/// "znver3" may list features a virtual machine hides). On another
/// architecture, the host's own model.
std::string simulatedHostCpu() {
  const CpuModel &host = hostCpuModel();
  if (hostArch() == "aarch64")
    return kBoardHostCpu; // armv8-a with NEON: any aarch64 server runs it
  if (hostArch() != "x86_64")
    return host.name;
  for (const char *level : {"x86-64-v4", "x86-64-v3", "x86-64-v2"}) {
    absl::StatusOr<CpuModel> model = resolveCpuModel(level, "");
    if (model.ok() && missingFeatures(model->features, host.features).empty())
      return level;
  }
  return "x86-64";
}

/// OK when this machine can run host code compiled for `manifest`.
absl::Status checkHostCode(const v1::ExecutableManifest &manifest) {
  if (!tripleRunsHere(manifest.triple()))
    return absl::FailedPreconditionError(absl::StrCat(
        "the executable's host code is for ", manifest.triple(),
        " (CPU '", manifest.cpu(), "'), but this simulated array runs host "
        "code on this machine (", hostArch(), ", CPU '", hostCpuModel().name,
        "'): compile with options.acap.host_cpu '", simulatedHostCpu(),
        "' (kilnd does when every connected acap device reports that host_cpu)"));
  std::vector<std::string> missing =
      missingFeatures(parseFeatureList(manifest.features()), hostCpuModel().features);
  if (!missing.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "the executable's host code may use CPU feature(s) ",
        absl::StrJoin(missing, ", "), " that this machine's CPU '",
        hostCpuModel().name, "' lacks"));
  return absl::OkStatus();
}

/// How far `device` is from `reference` over the f32 outputs.
v1::NumericError compare(const AcapExecutable &exe,
                         const std::vector<void *> &device,
                         const std::vector<std::vector<float>> &reference) {
  NumericErrorMeter meter;
  for (size_t o = 0; o < device.size(); ++o)
    if (exe.outputIsF32[o])
      meter.add({static_cast<const float *>(device[o]), reference[o].size()},
                reference[o]);
  return meter.result(std::string(aie::kNumericType));
}

} // namespace

absl::StatusOr<std::unique_ptr<AcapBackend>> AcapBackend::create(AcapBackendConfig config) {
  if (!aie::lookupArray(config.array))
    return absl::InvalidArgumentError(absl::StrCat(
        "--array: unknown AI Engine array '", config.array, "' (known: ",
        absl::StrJoin(aie::arrayNames(), ", "), ")"));
  std::unique_ptr<AcapBackend> backend(new AcapBackend(std::move(config)));
  if (backend->config.simulate)
    return backend;
  try {
    backend->boards = int(xrt::system::enumerate_devices());
  } catch (const std::exception &e) {
    backend->unavailable = absl::StrCat(
        "XRT found no Versal board (", e.what(), "); start with --simulate "
        "to serve Kiln's simulated AI Engine array");
    return backend;
  }
  if (backend->boards == 0)
    backend->unavailable =
        "XRT found no Versal board; start with --simulate to serve Kiln's "
        "simulated AI Engine array";
  return backend;
}

absl::StatusOr<std::vector<v1::Device>> AcapBackend::describeDevices() {
  std::vector<v1::Device> devices;
  const v1::AieArray &array = *aie::lookupArray(config.array);
  if (config.simulate) {
    v1::Device device;
    device.set_kind(std::string(kind()));
    auto &p = *device.mutable_properties();
    p["simulated"] = "true";
    p[kKernelLibrariesProperty] = "aie";
    p["simulator"] = kSimulator;
    p["array"] = array.name();
    p["tiles"] = absl::StrCat(int64_t(array.columns()) * array.rows());
    p["clock_hz"] = absl::StrCat(array.clock_hz());
    p["numeric_type"] = std::string(aie::kNumericType);
    p["host_cpu"] = simulatedHostCpu();
    p["host_arch"] = hostArch();
    p["threads"] = absl::StrCat(config.threads);
    p["counters"] = "estimated_cycles (Kiln's model of the array), numeric_error (against f32)";
    devices.push_back(std::move(device));
    return devices;
  }
  for (int i = 0; i < boards; ++i) {
    v1::Device device;
    device.set_kind(std::string(kind()));
    auto &p = *device.mutable_properties();
    p["xrt_index"] = absl::StrCat(i);
    p["array"] = array.name();
    p["simulated"] = "false";
    p[kKernelLibrariesProperty] = "aie";
    p["host_cpu"] = kBoardHostCpu;
    devices.push_back(std::move(device));
  }
  return devices;
}

absl::StatusOr<std::shared_ptr<LoadedExecutable>>
AcapBackend::loadExecutable(const v1::ExecutableRecord &record,
                            const std::filesystem::path &artifactPath) {
  const v1::ExecutableManifest &manifest = record.manifest();
  if (manifest.format() != "xclbin")
    return absl::FailedPreconditionError(absl::StrCat(
        "the acap agent loads 'xclbin' artifacts, not '", manifest.format(), "'"));
  if (!manifest.kernel_library().empty() && manifest.kernel_library() != "aie")
    return absl::FailedPreconditionError(absl::StrCat(
        "the executable calls kernel library '", manifest.kernel_library(),
        "'; the acap agent provides 'aie'"));
  ASSIGN_OR_RETURN(AcapArtifact artifact, readAcapArtifact(artifactPath));
  RETURN_IF_ERROR(aie::checkPlanFits(artifact.plan, *aie::lookupArray(config.array)));
  if (!config.simulate)
    return absl::FailedPreconditionError(absl::StrCat(
        "xclbin ", artifact.uuid, " carries no AI Engine kernels: Kiln builds "
        "them only with an AI Engine toolchain, which this compile did not "
        "have (docs/devices/acap.md); run it on a simulated array (--simulate)"));
  RETURN_IF_ERROR(checkHostCode(manifest));
  if (manifest.entry_symbol().empty())
    return absl::InvalidArgumentError("manifest names no entry_symbol");

  auto exe = std::make_shared<AcapExecutable>();
  RETURN_IF_ERROR(loadHostCode(artifact.hostImage, *exe));
  ::dlerror();
  exe->entry = reinterpret_cast<EntryPoint>(
      ::dlsym(exe->handle, manifest.entry_symbol().c_str()));
  if (!exe->entry)
    return absl::InvalidArgumentError(absl::StrCat(
        "the xclbin's host code has no entry symbol '", manifest.entry_symbol(),
        "' (its SOFT_KERNEL section names '", artifact.hostSymbol, "'): ",
        dlerrorText()));
  exe->simulator = std::make_unique<AieArraySimulator>(std::move(artifact.plan),
                                                       config.threads);
  // Installed whenever the host code can take it: a call with no library
  // installed would stop the process, whatever the manifest says.
  auto setter = reinterpret_cast<SetKernelLibrary>(
      ::dlsym(exe->handle, "kiln_rt_set_kernel_library"));
  if (!setter && !manifest.kernel_library().empty())
    return absl::InvalidArgumentError(
        "the manifest names kernel library 'aie', but the host code exports "
        "no kiln_rt_set_kernel_library");
  if (setter) {
    if (setter(exe->simulator->table()) != 1)
      return absl::FailedPreconditionError(absl::StrCat(
          "the host code's kernel-library ABI is not version ",
          KILN_RT_KERNELS_ABI_VERSION, "; recompile it with this kilnd"));
  }
  for (const v1::ManifestArgument &output : manifest.outputs()) {
    ASSIGN_OR_RETURN(int64_t bytes, byteSize(output.type()));
    exe->outputBytes.push_back(bytes);
    exe->outputIsF32.push_back(output.type().dtype() == v1::DTYPE_F32);
  }
  return exe;
}

absl::StatusOr<v1::DeviceCounters>
AcapBackend::run(LoadedExecutable &executable, const CallBuffers &buffers) {
  auto *exe = dynamic_cast<AcapExecutable *>(&executable);
  if (!exe)
    return absl::InternalError("executable was not loaded by the acap backend");
  if (buffers.outputs.size() != exe->outputBytes.size())
    return absl::InternalError("output count differs from the manifest");
  std::vector<void *> pointers(buffers.parameters.begin(), buffers.parameters.end());
  pointers.insert(pointers.end(), buffers.inputs.begin(), buffers.inputs.end());
  const size_t firstOutput = pointers.size();
  pointers.insert(pointers.end(), buffers.outputs.begin(), buffers.outputs.end());

  v1::DeviceCounters counters;
  std::vector<std::vector<float>> reference;
  if (config.numericCheck) {
    // The same host code with the array computing in f32, into buffers of
    // its own.
    std::vector<void *> referencePointers = pointers;
    for (size_t o = 0; o < exe->outputBytes.size(); ++o) {
      reference.emplace_back(size_t((exe->outputBytes[o] + 3) / 4));
      referencePointers[firstOutput + o] = reference.back().data();
    }
    AieArraySimulator::RunCounters f32Run;
    f32Run.reference = true;
    {
      AieArraySimulator::RunScope scope(f32Run);
      exe->entry(referencePointers.data());
    }
    if (!f32Run.error.empty())
      return absl::InvalidArgumentError(f32Run.error);
  }
  AieArraySimulator::RunCounters arrayRun;
  {
    AieArraySimulator::RunScope scope(arrayRun);
    exe->entry(pointers.data());
  }
  if (!arrayRun.error.empty())
    return absl::InvalidArgumentError(arrayRun.error);
  counters.set_estimated_cycles(arrayRun.cycles);
  if (config.numericCheck) {
    std::vector<void *> outputs(buffers.outputs.begin(), buffers.outputs.end());
    *counters.mutable_numeric_error() = compare(*exe, outputs, reference);
  }
  return counters;
}

} // namespace kiln::agent::acap
