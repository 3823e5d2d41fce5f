//===- OneDnnEpilogue.h - a call's epilogue on oneDNN and in loops -*- C++ -*-===//
//
// This file declares how a kernel-library call site applies its epilogue
// (kiln_rt_epilogue: per-channel scale and shift, a residual, an
// activation): as oneDNN post-ops fused into the primitive, as a oneDNN
// binary or eltwise step after it when the fused form leaves oneDNN only its
// reference kernel, and in place after a direct loop when oneDNN is not used.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_rt_kernels.h"

#include <dnnl.hpp>

#include <cstdint>
#include <unordered_map>

namespace kiln::agent::onednn {

/// True when oneDNN chose its reference implementation for `pd` (a
/// correctness fallback, far slower than its jit kernels).
bool isReferenceImplementation(const dnnl::primitive_desc_base &pd);
/// Logs a warning when `pd` is a reference implementation (`what`: the
/// kind of call site).
void warnIfReference(const dnnl::primitive_desc_base &pd, const char *what);

/// One call's epilogue operands (null when the epilogue has none).
struct EpilogueOperands {
  const float *scale = nullptr, *shift = nullptr, *residual = nullptr;
};

/// The post-ops of an epilogue on a primitive whose destination has `rank`
/// dims with `channels` channels in dim `channelDim`.
class EpiloguePostOps {
public:
  EpiloguePostOps(const kiln_rt_epilogue &epilogue, int64_t rank,
                  int64_t channelDim, int64_t channels);

  /// Sets the post-ops on `attributes`.
  void attach(dnnl::primitive_attr &attributes) const;
  /// Adds the scale and shift memories to a primitive's arguments.
  void addArguments(const EpilogueOperands &operands,
                    std::unordered_map<int, dnnl::memory> &arguments) const;
  /// Whether the residual goes as a sum: the destination must hold it
  /// before the primitive runs.
  bool sumsResidual() const { return residual; }

  /// The primitive descriptor `make(attributes)` returns with these
  /// post-ops attached (and a user scratchpad). When the fused form leaves
  /// oneDNN only its reference kernel, the tail is deferred (deferTail on
  /// `plainDst`) and it is made again; a reference kernel even then is
  /// logged, naming `what`.
  template <typename PrimitiveDesc, typename Make>
  PrimitiveDesc choose(const dnnl::memory::desc &plainDst, const char *what,
                       Make make) {
    auto attempt = [&] {
      dnnl::primitive_attr attributes;
      attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      attach(attributes);
      return PrimitiveDesc(make(attributes));
    };
    PrimitiveDesc pd = attempt();
    if (isReferenceImplementation(pd) && hasTail()) {
      deferTail(plainDst);
      pd = attempt();
    }
    warnIfReference(pd, what);
    return pd;
  }

  /// Whether there is a tail (residual, activation) to defer.
  bool hasTail() const { return tailResidual || tailActivation; }
  /// Takes the residual and the activation out of the post-ops and applies
  /// them after the primitive instead, as one oneDNN binary add (with the
  /// activation as its post-op) or eltwise step over the dense destination
  /// `plainDst`. For primitives whose fused form oneDNN has only a
  /// reference kernel for: oneDNN 2.6's AVX2 convolutions take a sum only
  /// as their first post-op, so a batch norm's scale and shift followed by
  /// a residual ran ~100x slower on AVX2-only CPUs.
  void deferTail(const dnnl::memory::desc &plainDst);
  /// Runs the deferred tail, if any, in place on `output` (the primitive's
  /// dense destination) on `stream`.
  void runTail(dnnl::stream &stream, float *output,
               const EpilogueOperands &operands) const;

private:
  void append(bool withTail);

  kiln_rt_epilogue epilogue;
  dnnl::post_ops ops;
  dnnl::memory::desc perChannel;
  int scaleIndex = -1, shiftIndex = -1;
  bool residual = false;
  bool tailResidual = false, tailActivation = false;
  dnnl::memory::desc tailDst;
  dnnl::primitive tail; // empty until deferTail
};

/// Applies `epilogue` in place to a dense output of shape
/// (outer, channels, inner), as the direct loops' last step.
void applyEpilogue(const kiln_rt_epilogue &epilogue,
                   const EpilogueOperands &operands, float *output,
                   int64_t outer, int64_t channels, int64_t inner);

} // namespace kiln::agent::onednn
