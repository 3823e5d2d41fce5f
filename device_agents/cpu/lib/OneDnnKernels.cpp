//===- OneDnnKernels.cpp - the oneDNN kernel library's table --------------===//
//
// This file implements OneDnnKernels: the table an artifact calls through,
// which finds (or makes, once) the call site's oneDNN state and runs it.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/cpu/OneDnnKernels.h"

#include "OneDnnSites.h"

#include <algorithm>
#include <atomic>

namespace kiln::agent {

OneDnnKernels::OneDnnKernels(int threads,
                             onednn::ConvolutionAlgorithms convolutions)
    : abi{{KILN_RT_KERNELS_ABI_VERSION, &OneDnnKernels::convolutionF32,
           &OneDnnKernels::matmulF32, /*elementwise_f32=*/nullptr},
          this},
      threads(threads < 1 ? 1 : threads), convolutions(convolutions) {}

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

namespace {

std::string isaName(dnnl::cpu_isa isa) {
  switch (isa) {
  case dnnl::cpu_isa::sse41: return "sse41";
  case dnnl::cpu_isa::avx: return "avx";
  case dnnl::cpu_isa::avx2: return "avx2";
  case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
  case dnnl::cpu_isa::avx512_core: return "avx512_core";
  case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
  case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
  case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  default: return "other";
  }
}

} // namespace

std::string
OneDnnKernels::limitInstructionSets(const std::vector<std::string> &features) {
  auto has = [&](const char *feature) {
    return std::find(features.begin(), features.end(), feature) !=
           features.end();
  };
  // oneDNN's avx512_core needs AVX-512 F, BW, VL and DQ.
  dnnl::cpu_isa limit =
      has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq")
          ? dnnl::cpu_isa::all
      : has("avx2") && has("fma") ? dnnl::cpu_isa::avx2
      : has("avx")                ? dnnl::cpu_isa::avx
                                  : dnnl::cpu_isa::sse41;
  // Refused once oneDNN has dispatched (a second backend in one process):
  // the first limit stays.
  (void)dnnl::set_max_cpu_isa(limit);
  return isaName(dnnl::get_effective_cpu_isa());
}

template <typename Site, typename Geometry, typename... Options>
Site &OneDnnKernels::site(const Geometry &geometry, void **state,
                          Options... options) {
  auto *slot = reinterpret_cast<std::atomic<Site *> *>(state);
  if (Site *site = slot->load(std::memory_order_acquire))
    return *site;
  std::lock_guard<std::mutex> lock(mutex);
  if (Site *site = slot->load(std::memory_order_acquire))
    return *site;
  auto made = std::make_unique<Site>(geometry, options...);
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
                                   const float *scale, const float *shift,
                                   const float *residual,
                                   float *output) noexcept {
  OneDnnKernels &self = of(library);
  self.site<onednn::ConvolutionSite>(*geometry, state, self.convolutions)
      .run(self.threads, input, weight, bias, {scale, shift, residual},
           output);
}

void OneDnnKernels::matmulF32(const kiln_rt_kernel_library *library,
                              const kiln_rt_matmul *geometry, void **state,
                              const float *a, const float *b,
                              const float *bias, const float *scale,
                              const float *shift, const float *residual,
                              float *c) noexcept {
  OneDnnKernels &self = of(library);
  self.site<onednn::MatmulSite>(*geometry, state)
      .run(self.threads, a, b, bias, {scale, shift, residual}, c);
}

} // namespace kiln::agent
