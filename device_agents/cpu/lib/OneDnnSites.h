//===- OneDnnSites.h - the call sites oneDNN serves -----------------------===//
//
// This file declares the kinds of call site OneDnnKernels creates: one
// convolution or matmul of an artifact, with the oneDNN primitive made for
// it on its first call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OneDnnEpilogue.h"
#include "OneDnnFolding.h"
#include "OneDnnSupport.h"

#include "kiln/agent/cpu/OneDnnKernels.h"
#include "kiln_rt_kernels.h"

#include <atomic>
#include <memory>
#include <string>

namespace kiln::agent::onednn {

/// One kiln_rt_convolution_f32 call site. When oneDNN refuses its geometry
/// (it never should for what the compiler hands it) it runs a direct loop.
/// A batch norm in its epilogue is folded into its weights when they are a
/// parameter of the call (a second primitive, made on the first such call).
/// With ConvolutionAlgorithms::Fastest, a 3x3 stride-1 site runs oneDNN's
/// Winograd kernel where it has one.
class ConvolutionSite final : public KernelSite {
public:
  explicit ConvolutionSite(
      const kiln_rt_convolution &geometry,
      ConvolutionAlgorithms algorithms = ConvolutionAlgorithms::Direct);
  ~ConvolutionSite() override;
  void run(int threads, const float *input, const float *weight,
           const float *bias, const EpilogueOperands &post, float *output);
  /// oneDNN's name for the kernel the site runs ("direct loop" without one;
  /// the folded primitive's once it is made).
  std::string implementation() const;

private:
  struct Primitive;
  void runPrimitive(int threads, const float *input, const float *weight,
                    const float *bias, const EpilogueOperands &post,
                    float *output);
  /// Runs primitive `p`; `packedWeights` is in p's weight layout already,
  /// or nullptr to reorder `weight` for this call.
  void execute(const Primitive &p, dnnl::stream &stream, const float *input,
               const void *packedWeights, const float *weight,
               const float *bias, const EpilogueOperands &post,
               float *output);
  /// The primitive with the scale and shift folded into the weights, made
  /// once; nullptr when oneDNN refused it.
  const Primitive *foldedPrimitive();

  kiln_rt_convolution geometry;
  ConvolutionAlgorithms algorithms;
  std::unique_ptr<Primitive> primitive;
  std::atomic<bool> failed{false}; // no primitive, or it failed: direct loop
  PrepackedWeights prepacked;
  std::mutex foldMutex;
  std::unique_ptr<Primitive> foldedOwner; // guarded by foldMutex
  bool foldRefused = false;               // guarded by foldMutex
  std::atomic<const Primitive *> folded{nullptr};
  ScaleFoldedWeights foldedWeights;
};

/// A convolution and its epilogue as plain loops, in the geometry's layout:
/// what a call site runs where oneDNN refuses it.
void runDirectConvolution(const kiln_rt_convolution &geometry,
                          const float *input, const float *weight,
                          const float *bias, const EpilogueOperands &post,
                          float *output);

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
