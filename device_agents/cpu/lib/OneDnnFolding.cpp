//===- OneDnnFolding.cpp - a batch norm folded into a site's weights ------===//
//
// This file implements ScaleFoldedWeights.
//
//===----------------------------------------------------------------------===//
#include "OneDnnFolding.h"

#include "OneDnnSupport.h"

#include <cstring>

namespace kiln::agent::onednn {
namespace {

/// Whether `kept` holds exactly the `count` values at `values` (bit for
/// bit: a NaN scale is the same scale again). An absent operand (nullptr)
/// matches only an empty `kept`.
bool sameValues(const std::vector<float> &kept, const float *values,
                int64_t count) {
  if (!values)
    return kept.empty();
  return static_cast<int64_t>(kept.size()) == count &&
         std::memcmp(kept.data(), values, count * sizeof(float)) == 0;
}

std::vector<float> copyOf(const float *values, int64_t count) {
  return values ? std::vector<float>(values, values + count)
                : std::vector<float>();
}

} // namespace

bool ScaleFoldedWeights::matches(const FoldRequest &request) const {
  return kept.weights && serial == request.serial &&
         sameValues(scale, request.scale, request.channels) &&
         sameValues(shift, request.shift, request.channels) &&
         sameValues(bias, request.bias, request.channels);
}

FoldedOperands ScaleFoldedWeights::get(
    const FoldRequest &request, const std::optional<dnnl::reorder> &reorder,
    const dnnl::memory::desc &plain, const dnnl::memory::desc &packed,
    dnnl::stream &stream) {
  std::lock_guard<std::mutex> lock(mutex);
  if (matches(request))
    return kept;

  int64_t channels = request.channels;
  size_t elements = plain.get_size() / sizeof(float);
  size_t row = elements / channels;
  std::shared_ptr<void> scaled = alignedBuffer(plain.get_size());
  auto *w = static_cast<float *>(scaled.get());
  for (int64_t o = 0; o < channels; ++o)
    for (size_t i = 0; i < row; ++i)
      w[o * row + i] = request.weights[o * row + i] * request.scale[o];
  std::shared_ptr<void> weights =
      reorder ? reorderedCopy(*reorder, plain, packed, scaled.get(), stream)
              : scaled;
  std::shared_ptr<void> foldedBias =
      alignedBuffer(channels * sizeof(float));
  auto *b = static_cast<float *>(foldedBias.get());
  for (int64_t o = 0; o < channels; ++o)
    b[o] = (request.bias ? request.bias[o] : 0.0f) * request.scale[o] +
           request.shift[o];

  serial = request.serial;
  scale = copyOf(request.scale, channels);
  shift = copyOf(request.shift, channels);
  bias = copyOf(request.bias, channels);
  kept = {std::move(weights),
          std::shared_ptr<const float>(foldedBias, b)};
  return kept;
}

} // namespace kiln::agent::onednn
