//===- CpuBackend.cpp - run host shared objects ---------------------------===//
//
// This file implements CpuBackend with dlopen/dlsym and describes the host
// CPU from /proc/cpuinfo.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/cpu/CpuBackend.h"

#include "kiln/agent/HostCode.h"
#include "kiln/common/AgentProtocol.h"
#include "kiln/common/Status.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <algorithm>

#include <dlfcn.h>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace kiln::agent {
namespace {

using EntryPoint = void (*)(void **);
/// The target runtime's kiln_rt_set_thread_pool(struct kiln_rt_thread_pool *).
using SetThreadPool = void (*)(void *);

/// The target runtime's kiln_rt_set_kernel_library(const struct
/// kiln_rt_kernel_library *): 1 when installed, 0 for another ABI version.
using SetKernelLibrary = int (*)(const kiln_rt_kernel_library *);

/// A dlopen'ed artifact, its entry point and the kernel library it calls
/// (when it calls one); dlclose'd when released.
class CpuExecutable : public LoadedExecutable {
public:
  CpuExecutable(void *handle, EntryPoint entry,
                std::shared_ptr<OneDnnKernels> kernels)
      : handle(handle), entry(entry), kernels(std::move(kernels)) {}
  ~CpuExecutable() override { ::dlclose(handle); }

  void *handle;
  EntryPoint entry;
  /// Shared by every load of the same handle (they share the artifact's
  /// globals: its installed table and call-site state slots); outlives the
  /// handle, as what its call sites prepared lives here.
  std::shared_ptr<OneDnnKernels> kernels;
};

/// The convolution algorithms a manifest allows its library calls.
absl::StatusOr<onednn::ConvolutionAlgorithms>
convolutionAlgorithms(const v1::ExecutableManifest &manifest) {
  const std::string &algorithm = manifest.convolution_algorithm();
  // Empty: an artifact from before the option, which asked for nothing else.
  if (algorithm.empty() || algorithm == "direct")
    return onednn::ConvolutionAlgorithms::Direct;
  if (algorithm == "auto")
    return onednn::ConvolutionAlgorithms::Fastest;
  return absl::FailedPreconditionError(absl::StrCat(
      "executable asks for convolution algorithm '", algorithm,
      "', which this agent does not know (it knows: auto, direct); recompile "
      "it with this kilnd"));
}

/// Installs a fresh oneDNN kernel library in `handle`'s artifact.
absl::StatusOr<std::shared_ptr<OneDnnKernels>>
installKernelLibrary(void *handle, const v1::ExecutableManifest &manifest,
                     int threads) {
  const std::string &library = manifest.kernel_library();
  if (library != OneDnnKernels::kName)
    return absl::FailedPreconditionError(absl::StrCat(
        "executable calls kernel library '", library,
        "', which this agent does not provide (it provides: ",
        OneDnnKernels::kName, "); compile with options.kernel_library "
        "'none' or 'onednn'"));
  ASSIGN_OR_RETURN(onednn::ConvolutionAlgorithms convolutions,
                   convolutionAlgorithms(manifest));
  void *setter = ::dlsym(handle, "kiln_rt_set_kernel_library");
  if (!setter)
    return absl::InvalidArgumentError(
        "the manifest names a kernel library, but the artifact exports no "
        "kiln_rt_set_kernel_library");
  auto kernels = std::make_shared<OneDnnKernels>(threads, convolutions);
  if (reinterpret_cast<SetKernelLibrary>(setter)(kernels->table()) != 1)
    return absl::FailedPreconditionError(absl::StrCat(
        "the artifact's kernel-library ABI is not version ",
        KILN_RT_KERNELS_ABI_VERSION, ", which this agent speaks; recompile it "
        "with this kilnd"));
  return kernels;
}

/// The value of the first /proc/cpuinfo line starting with `key`, or "".
std::string cpuinfoField(absl::string_view key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    absl::string_view view = line;
    if (!absl::ConsumePrefix(&view, key))
      continue;
    size_t colon = view.find(':');
    if (colon != absl::string_view::npos &&
        absl::StripAsciiWhitespace(view.substr(0, colon)).empty())
      return std::string(absl::StripAsciiWhitespace(view.substr(colon + 1)));
  }
  return "";
}

/// OK when `path` starts with the ELF magic; a clear error otherwise.
absl::Status checkElf(const std::filesystem::path &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return absl::NotFoundError(
        absl::StrCat("cannot open artifact '", path.string(), "'"));
  char magic[4] = {};
  file.read(magic, sizeof(magic));
  if (file.gcount() != 4 || magic[0] != 0x7f || magic[1] != 'E' ||
      magic[2] != 'L' || magic[3] != 'F')
    return absl::InvalidArgumentError(absl::StrCat(
        "artifact '", path.string(),
        "' is not an ELF shared object (no ELF magic at its start)"));
  return absl::OkStatus();
}

} // namespace

CpuBackend::CpuBackend(CpuModel cpu, int computeThreads)
    : cpu(std::move(cpu)), pool(computeThreads),
      onednnIsa(OneDnnKernels::limitInstructionSets(this->cpu.features)) {}

absl::StatusOr<CpuModel> CpuBackend::advertisedCpu(absl::string_view name) {
  const CpuModel &host = hostCpuModel();
  if (name.empty() || name == "native")
    return host;
  absl::StatusOr<CpuModel> model = resolveCpuModel(name, "");
  if (!model.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--cpu: ", model.status().message()));
  std::vector<std::string> missing =
      missingFeatures(model->features, host.features);
  if (!missing.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "--cpu ", name, ": this host's CPU (", host.name,
        ") lacks feature(s) ", absl::StrJoin(missing, ", "),
        " that code for it may use"));
  return model;
}

absl::StatusOr<std::vector<v1::Device>> CpuBackend::describeDevices() {
  v1::Device device;
  device.set_kind(std::string(kind()));
  auto &properties = *device.mutable_properties();
  std::string model = cpuinfoField("model name");
  properties["cpu_model"] = model.empty() ? "unknown" : model;
  properties["cpu"] = cpu.name;
  properties["cpu_features"] = absl::StrJoin(cpu.features, ",");
  properties["threads"] = absl::StrCat(std::thread::hardware_concurrency());
  properties["compute_threads"] = absl::StrCat(pool.threads());
  properties[kKernelLibrariesProperty] = OneDnnKernels::kName;
  properties["onednn_version"] = OneDnnKernels::version();
  properties["onednn_isa"] = onednnIsa;
  properties["arch"] = hostArch();
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    properties["memory_bytes"] =
        absl::StrCat(static_cast<int64_t>(pages) * pageSize);
  return std::vector<v1::Device>{device};
}

absl::StatusOr<std::shared_ptr<LoadedExecutable>>
CpuBackend::loadExecutable(const v1::ExecutableRecord &record,
                           const std::filesystem::path &artifactPath) {
  const v1::ExecutableManifest &manifest = record.manifest();
  if (!manifest.format().empty() && manifest.format() != "elf-shared-object")
    return absl::FailedPreconditionError(
        absl::StrCat("the cpu agent loads 'elf-shared-object' artifacts, not '",
                     manifest.format(), "'"));
  if (!manifest.triple().empty() && !tripleRunsHere(manifest.triple()))
    return absl::FailedPreconditionError(
        absl::StrCat("artifact was built for '", manifest.triple(),
                     "' but this host is ", hostArch()));
  std::vector<std::string> missing =
      missingFeatures(parseFeatureList(manifest.features()), cpu.features);
  if (!missing.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "executable was compiled for CPU '", manifest.cpu(),
        "' and may use CPU feature(s) ", absl::StrJoin(missing, ", "),
        " that this device's CPU '", cpu.name,
        "' lacks; compile for a CPU it has (leave options.cpu unset to "
        "target the connected agents, or name one such as '", cpu.name,
        "')"));
  if (manifest.entry_symbol().empty())
    return absl::InvalidArgumentError("manifest names no entry_symbol");
  if (absl::Status elf = checkElf(artifactPath); !elf.ok())
    return elf;

  ::dlerror(); // Clear any stale error.
  void *handle = ::dlopen(artifactPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load artifact: ", dlerrorText()));
  ::dlerror();
  void *symbol = ::dlsym(handle, manifest.entry_symbol().c_str());
  if (!symbol) {
    std::string error = dlerrorText();
    ::dlclose(handle);
    return absl::InvalidArgumentError(
        absl::StrCat("artifact has no entry symbol '", manifest.entry_symbol(),
                     "': ", error));
  }
  std::shared_ptr<OneDnnKernels> kernels;
  if (!manifest.kernel_library().empty()) {
    // dlopen of a loaded artifact returns the same handle, whose globals
    // (installed table, call-site state) the loads share: so do their
    // kernel libraries. A fresh one per load would be freed with its load
    // while the other still calls through it.
    std::lock_guard<std::mutex> lock(kernelsMutex);
    std::erase_if(kernelsByHandle,
                  [](const auto &entry) { return entry.second.expired(); });
    if (auto it = kernelsByHandle.find(handle); it != kernelsByHandle.end())
      kernels = it->second.lock();
    if (!kernels) {
      auto installed = installKernelLibrary(handle, manifest, pool.threads());
      if (!installed.ok()) {
        ::dlclose(handle);
        return installed.status();
      }
      kernels = std::move(*installed);
      kernelsByHandle[handle] = kernels;
    }
  }
  // Parallel loops run on the pool (artifacts from compilers before the
  // runtime had one, and code without parallel loops, export no setter).
  if (void *setPool = ::dlsym(handle, "kiln_rt_set_thread_pool"))
    reinterpret_cast<SetThreadPool>(setPool)(pool.runtimeHandle());
  return std::make_shared<CpuExecutable>(
      handle, reinterpret_cast<EntryPoint>(symbol), std::move(kernels));
}

absl::StatusOr<v1::DeviceCounters>
CpuBackend::run(LoadedExecutable &executable, const CallBuffers &buffers) {
  auto *cpu = dynamic_cast<CpuExecutable *>(&executable);
  if (!cpu)
    return absl::InternalError("executable was not loaded by the cpu backend");
  std::vector<void *> pointers;
  pointers.reserve(buffers.parameters.size() + buffers.inputs.size() +
                   buffers.outputs.size());
  pointers.insert(pointers.end(), buffers.parameters.begin(),
                  buffers.parameters.end());
  pointers.insert(pointers.end(), buffers.inputs.begin(), buffers.inputs.end());
  if (!buffers.symbols.empty()) // the ABI takes no const
    pointers.push_back(const_cast<int64_t *>(buffers.symbols.data()));
  pointers.insert(pointers.end(), buffers.outputs.begin(),
                  buffers.outputs.end());
  // On the pool's master thread: its one OpenMP team runs the call's
  // parallel loops and oneDNN's regions.
  struct Call {
    EntryPoint entry;
    void **buffers;
    const CallBuffers &named;
  } call{cpu->entry, pointers.data(), buffers};
  pool.run(
      [](void *context) {
        auto &call = *static_cast<Call *>(context);
        OneDnnKernels::CallParameters parameters(call.named.parameters,
                                                 call.named.parameterSerials);
        call.entry(call.buffers);
      },
      &call);
  return v1::DeviceCounters();
}

} // namespace kiln::agent
