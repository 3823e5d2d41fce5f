//===- OneDnnKernels.h - the oneDNN kernel library of cpu artifacts -------===//
//
// This file declares OneDnnKernels, the kernel library (the "onednn" of
// ExecutableManifest.kernel_library) that the cpu agent installs in each
// artifact that calls one (compiler/runtime/kiln_rt_kernels.h): its
// convolutions and matrix products run on oneDNN.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_rt_kernels.h"

#include <memory>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace kiln::agent {

namespace onednn {
class KernelSite;

/// Which algorithms a convolution site may run (ExecutableManifest.
/// convolution_algorithm).
enum class ConvolutionAlgorithms {
  /// Direct convolutions only.
  Direct,
  /// The fastest oneDNN has for the CPU: Winograd's F(2x2,3x3) or
  /// F(4x4,3x3) for a 2-d 3x3 convolution of stride 1 where it has one
  /// (AVX-512), direct otherwise.
  Fastest,
};
} // namespace onednn

/// The kernel library of one loaded artifact. Each call site's first call
/// prepares its oneDNN primitive (and the reorders between the artifact's
/// dense row-major tensors and the layouts the primitive chose), kept in
/// the site's state slot and owned here until the artifact is unloaded.
/// Weights that are a parameter of the call (CallParameters) are reordered
/// once and kept, per site, for as long as that parameter is used there.
/// Calls run on oneDNN's OpenMP threads, `threads` of them per call. A site
/// oneDNN cannot serve (it never should for what the compiler hands it)
/// runs a direct loop instead, so no call computes nothing.
class OneDnnKernels {
public:
  /// `convolutions`: the algorithms the artifact's convolutions may use.
  OneDnnKernels(int threads, onednn::ConvolutionAlgorithms convolutions);
  ~OneDnnKernels();
  OneDnnKernels(const OneDnnKernels &) = delete;
  OneDnnKernels &operator=(const OneDnnKernels &) = delete;

  /// The table to hand the artifact's kiln_rt_set_kernel_library.
  const kiln_rt_kernel_library *table() const { return &abi.table; }

  /// The library's name in manifests and device properties.
  static constexpr const char *kName = "onednn";
  /// oneDNN's version, "2.6.3".
  static std::string version();

  /// Keeps oneDNN to the instruction sets of `features` (LLVM names of the
  /// CPU the agent reports): an agent pinned to x86-64-v3 runs oneDNN's
  /// AVX2 kernels on an AVX-512 host, as it would on an AVX2 one. oneDNN
  /// takes this once per process, before its first primitive; a later call
  /// changes nothing. Returns the instruction set oneDNN then uses
  /// ("avx512_core", "avx2", ...).
  static std::string limitInstructionSets(const std::vector<std::string> &features);

  /// Names the parameters of the call the constructing thread makes next
  /// (CallBuffers::parameterSerials), until destroyed: a call site whose
  /// weights are one of them reorders them into oneDNN's layout once per
  /// serial and keeps that copy, instead of reordering on every call.
  class CallParameters {
  public:
    CallParameters(std::span<void *const> pointers,
                   std::span<const uint64_t> serials);
    ~CallParameters();
    CallParameters(const CallParameters &) = delete;
    CallParameters &operator=(const CallParameters &) = delete;
  };

private:
  /// The runtime's table, then the object it belongs to.
  struct Abi {
    kiln_rt_kernel_library table;
    OneDnnKernels *self;
  };

  static OneDnnKernels &of(const kiln_rt_kernel_library *library);
  /// The table's entries, called from generated code: nothing may unwind
  /// into it. The sites fall back to direct loops on errors; what is left
  /// (a site's own allocation failing) ends the process, not the stack.
  static void convolutionF32(const kiln_rt_kernel_library *library,
                             const kiln_rt_convolution *geometry, void **state,
                             const float *input, const float *weight,
                             const float *bias, const float *scale,
                             const float *shift, const float *residual,
                             float *output) noexcept;
  static void matmulF32(const kiln_rt_kernel_library *library,
                        const kiln_rt_matmul *geometry, void **state,
                        const float *a, const float *b, const float *bias,
                        const float *scale, const float *shift,
                        const float *residual, float *c) noexcept;
  /// The site whose state slot is `state`, made on its first call.
  template <typename Site, typename Geometry, typename... Options>
  Site &site(const Geometry &geometry, void **state, Options... options);

  Abi abi;
  int threads;
  onednn::ConvolutionAlgorithms convolutions;
  std::mutex mutex;
  std::vector<std::unique_ptr<onednn::KernelSite>> sites; // guarded by mutex
};

} // namespace kiln::agent
