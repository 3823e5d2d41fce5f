//===- OneDnnFolding.h - a batch norm folded into a site's weights --------===//
//
// This file declares ScaleFoldedWeights: a convolution's weights and bias
// with the per-output-channel scale and shift of its epilogue (a batch norm
// in eval) folded in, reordered once into the primitive's layout and kept
// while calls bring the same weight parameter and the same scale, shift and
// bias values. oneDNN then runs the convolution without the two binary
// post-ops the scale and shift would otherwise take, which cost 2-4x the
// convolution itself on its AVX2 kernels and push a residual sum off the
// fused path there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <dnnl.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace kiln::agent::onednn {

/// The folded operands a folded primitive runs with.
struct FoldedOperands {
  std::shared_ptr<const void> weights; // in the primitive's weight layout
  std::shared_ptr<const float> bias;   // one per output channel
};

/// What one call brings to fold: the weights in their dense row-major
/// layout, whose output channels are `channels` rows of equal size (also for
/// grouped weights, whose groups are consecutive rows), a parameter serial
/// naming them, and the epilogue's per-channel `scale` and `shift`, with the
/// convolution's own `bias` (nullptr without one).
struct FoldRequest {
  uint64_t serial = 0;
  const float *weights = nullptr;
  int64_t channels = 0;
  const float *bias = nullptr, *scale = nullptr, *shift = nullptr;
};

class ScaleFoldedWeights {
public:
  /// The folded operands for `request`: w'[o] = w[o] * scale[o] and
  /// b'[o] = b[o] * scale[o] + shift[o] (b = 0 without a bias), the weights
  /// reordered with `reorder` (dense `plain` -> the primitive's `packed`;
  /// none when the primitive takes them dense). The kept ones when the
  /// serial and the scale, shift and bias values are those of the last
  /// fold; several threads may ask at once. Throws std::bad_alloc or
  /// dnnl::error.
  FoldedOperands get(const FoldRequest &request,
                     const std::optional<dnnl::reorder> &reorder,
                     const dnnl::memory::desc &plain,
                     const dnnl::memory::desc &packed, dnnl::stream &stream);

private:
  bool matches(const FoldRequest &request) const;

  std::mutex mutex;
  uint64_t serial = 0;                     // guarded by mutex
  std::vector<float> scale, shift, bias;   // the values folded; guarded
  FoldedOperands kept;                     // guarded by mutex
};

} // namespace kiln::agent::onednn
