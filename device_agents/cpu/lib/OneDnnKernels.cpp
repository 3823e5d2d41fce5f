//===- OneDnnKernels.cpp - the oneDNN kernel library's table --------------===//
//
// This file implements OneDnnKernels: the table an artifact calls through,
// which finds (or makes, once) the call site's oneDNN state and runs it.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/cpu/OneDnnKernels.h"

#include "OneDnnSites.h"

#include <atomic>

namespace kiln::agent {

OneDnnKernels::OneDnnKernels(int threads)
    : abi{{KILN_RT_KERNELS_ABI_VERSION, &OneDnnKernels::convolutionF32,
           &OneDnnKernels::matmulF32},
          this},
      threads(threads < 1 ? 1 : threads) {}

OneDnnKernels::~OneDnnKernels() = default;

OneDnnKernels::CallParameters::CallParameters(
    std::span<void *const> pointers, std::span<const uint64_t> serials) {
  onednn::setCallParameters(pointers, serials);
}

OneDnnKernels::CallParameters::~CallParameters() {
  onednn::setCallParameters({}, {});
}

std::string OneDnnKernels::version() {
  const dnnl_version_t *v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch);
}

template <typename Site, typename Geometry>
Site &OneDnnKernels::site(const Geometry &geometry, void **state) {
  auto *slot = reinterpret_cast<std::atomic<Site *> *>(state);
  if (Site *site = slot->load(std::memory_order_acquire))
    return *site;
  std::lock_guard<std::mutex> lock(mutex);
  if (Site *site = slot->load(std::memory_order_acquire))
    return *site;
  auto made = std::make_unique<Site>(geometry);
  Site &site = *made;
  sites.push_back(std::move(made));
  slot->store(&site, std::memory_order_release);
  return site;
}

OneDnnKernels &OneDnnKernels::of(const kiln_rt_kernel_library *library) {
  return *reinterpret_cast<const Abi *>(library)->self;
}

void OneDnnKernels::convolutionF32(const kiln_rt_kernel_library *library,
                                   const kiln_rt_convolution *geometry,
                                   void **state, const float *input,
                                   const float *weight, const float *bias,
                                   float *output) {
  OneDnnKernels &self = of(library);
  self.site<onednn::ConvolutionSite>(*geometry, state)
      .run(self.threads, input, weight, bias, output);
}

void OneDnnKernels::matmulF32(const kiln_rt_kernel_library *library,
                              const kiln_rt_matmul *geometry, void **state,
                              const float *a, const float *b,
                              const float *bias, float *c) {
  OneDnnKernels &self = of(library);
  self.site<onednn::MatmulSite>(*geometry, state)
      .run(self.threads, a, b, bias, c);
}

} // namespace kiln::agent
