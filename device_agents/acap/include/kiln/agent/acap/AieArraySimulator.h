//===- AieArraySimulator.h - Kiln's functional model of an AI Engine array -===//
//
// This file declares AieArraySimulator, the kernel library ("aie",
// compiler/runtime/kiln_rt_kernels.h) a simulated acap device installs in
// the host code it loads. Each call runs the call site's plan
// (kiln.v1.AiePlan) on host threads in the array's numeric type: operands
// rounded to bfloat16, products accumulated in f32 in k order, the epilogue
// in f32; elementwise chains in f32. It counts the plan's estimated cycles
// for every call. It is Kiln's model of the array, not AMD's aiesimulator.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/aie_plan.pb.h"

#include "kiln_rt_kernels.h"

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::agent::acap {

class AieArraySimulator {
public:
  /// Runs `plan`'s sites on up to `threads` host threads (at least one).
  AieArraySimulator(v1::AiePlan plan, int threads);
  AieArraySimulator(const AieArraySimulator &) = delete;
  AieArraySimulator &operator=(const AieArraySimulator &) = delete;

  /// The table to install with the artifact's kiln_rt_set_kernel_library.
  const kiln_rt_kernel_library *table() const { return &installed.table; }
  const v1::AiePlan &plan() const { return sitePlan; }

  /// What the calls of one run on this thread count; `reference` makes
  /// them compute in f32 (no rounding, no cycles), for numeric_error.
  struct RunCounters {
    bool reference = false;
    int64_t cycles = 0;
    int64_t calls = 0;
    /// Set by a call that matches no site of the plan (the call then
    /// leaves its output untouched); the run fails with it.
    std::string error;
  };
  /// Makes the calls on this thread count into `counters` while it lives.
  class RunScope {
  public:
    explicit RunScope(RunCounters &counters);
    ~RunScope();
    RunScope(const RunScope &) = delete;
    RunScope &operator=(const RunScope &) = delete;

  private:
    RunCounters *previous;
  };

private:
  struct Installed {
    kiln_rt_kernel_library table; // first: the library pointer is this
    AieArraySimulator *self;
  };
  static void convolution(const kiln_rt_kernel_library *library,
                          const kiln_rt_convolution *geometry, void **state,
                          const float *input, const float *weight,
                          const float *bias, const float *scale,
                          const float *shift, const float *residual,
                          float *output);
  static void matmul(const kiln_rt_kernel_library *library,
                     const kiln_rt_matmul *geometry, void **state,
                     const float *a, const float *b, const float *bias,
                     const float *scale, const float *shift,
                     const float *residual, float *c);
  static void elementwise(const kiln_rt_kernel_library *library,
                          const kiln_rt_elementwise *geometry, void **state,
                          const float *input0, const float *input1,
                          const float *input2, const float *input3,
                          float *output);
  /// The calls' work, which convolution, matmul and elementwise run with
  /// every exception turned into the run's error.
  static void runElementwise(
      const kiln_rt_kernel_library *library, const kiln_rt_elementwise *geometry,
      void **state,
      const std::array<const float *, KILN_RT_ELEMENTWISE_MAX_INPUTS> &inputs,
      float *output);
  static void runConvolution(const kiln_rt_kernel_library *library,
                             const kiln_rt_convolution *geometry, void **state,
                             const float *input, const float *weight,
                             const float *bias, const float *scale,
                             const float *shift, const float *residual,
                             float *output);
  static void runMatmul(const kiln_rt_kernel_library *library,
                        const kiln_rt_matmul *geometry, void **state,
                        const float *a, const float *b, const float *bias,
                        const float *scale, const float *shift,
                        const float *residual, float *c);
  /// One call: its site (null when the plan has none) and whether it
  /// computes in f32 (a reference run) or in the array's type.
  struct Call {
    const v1::AieSite *site;
    bool reference;
    /// An operand as the array holds it: rounded to bfloat16, or not.
    float operand(float value) const;
  };
  /// Starts a call: finds its site and counts its cycles in the run.
  Call begin(const char *kind, const int64_t *geometry, int fields,
             void **state) const;
  /// The plan's site for a call, remembered in the call site's state slot;
  /// null (and the run's error set) when the plan has none.
  const v1::AieSite *siteFor(const char *kind, const int64_t *geometry,
                             int fields, void **state) const;

  v1::AiePlan sitePlan;
  int threads;
  Installed installed;
  /// Which plan sites a call site is bound to (siteFor).
  mutable std::mutex bindMutex;
  mutable std::vector<bool> bound; // guarded by bindMutex
};

} // namespace kiln::agent::acap
