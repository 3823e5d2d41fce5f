//===- OneDnnSites.h - the call sites oneDNN serves -----------------------===//
//
// This file declares the kinds of call site OneDnnKernels creates: one
// convolution or matmul of an artifact, with the oneDNN primitive made for
// it on its first call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OneDnnEpilogue.h"
#include "OneDnnSupport.h"

#include "kiln_rt_kernels.h"

#include <atomic>
#include <memory>
#include <string>

namespace kiln::agent::onednn {

/// One kiln_rt_convolution_f32 call site. When oneDNN refuses its geometry
/// (it never should for what the compiler hands it) it runs a direct loop.
class ConvolutionSite final : public KernelSite {
public:
  explicit ConvolutionSite(const kiln_rt_convolution &geometry);
  ~ConvolutionSite() override;
  void run(int threads, const float *input, const float *weight,
           const float *bias, const EpilogueOperands &post, float *output);
  /// oneDNN's name for the kernel the site runs ("direct loop" without one).
  std::string implementation() const;

private:
  struct Primitive;
  void runPrimitive(int threads, const float *input, const float *weight,
                    const float *bias, const EpilogueOperands &post,
                    float *output);

  kiln_rt_convolution geometry;
  std::unique_ptr<Primitive> primitive;
  std::atomic<bool> failed{false}; // no primitive, or it failed: direct loop
  PrepackedWeights prepacked;
};

/// One kiln_rt_matmul_f32 call site. Its first call makes the primitive:
/// with b prepacked when b is a parameter of that call. A direct loop when
/// oneDNN refuses it.
class MatmulSite final : public KernelSite {
public:
  explicit MatmulSite(const kiln_rt_matmul &geometry);
  ~MatmulSite() override;
  void run(int threads, const float *a, const float *b, const float *bias,
           const EpilogueOperands &post, float *c);
  /// oneDNN's name for the kernel the site runs ("direct loop" without
  /// one; "not made yet" before the first call).
  std::string implementation() const;

private:
  struct Primitive;
  void runPrimitive(int threads, const float *a, const float *b,
                    const float *bias, const EpilogueOperands &post, float *c);

  kiln_rt_matmul geometry;
  std::mutex createMutex;
  std::unique_ptr<Primitive> primitive; // made by the first call
  std::atomic<bool> failed{false};      // oneDNN refused: direct loop
  PrepackedWeights prepacked;
};

} // namespace kiln::agent::onednn
