//===- FixedPointModel.h - Kiln's numeric model of the MDLA -----*- C++ -*-===//
//
// This file declares evaluate(): an MdlaProgram run on the host, either in
// f32 (the reference) or in Kiln's 16-bit fixed-point model of the device
// (Numerics::kQ16). The fixed-point model is Kiln's, documented in
// docs/devices/mdla.md, and not Micron's:
//
// - every tensor between layers, every graph input and every weight is an
//   int16 with a power-of-two scale of its own, chosen per layer output
//   from its largest magnitude (per-layer scaling);
// - convolutions and matrix products multiply int16 by int16 and
//   accumulate exactly (a 64-bit accumulator; the bias is added at its
//   precision), then round to the output's scale, saturating;
// - a batch norm right after the convolution it reads is folded into that
//   convolution's weights and bias before they are quantized;
// - other ops compute on the dequantized values and round their result.
//
// It also counts each layer's work for the cycle model (CycleModel.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/mdla/MdlaProgram.h"

#include "absl/status/statusor.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::agent::mdla {

enum class Numerics {
  kF32,  // the reference: f32 values, f64 accumulation
  kQ16,  // Kiln's fixed-point model of the MDLA
};

/// What one layer did, for the cycle model. Bytes count the device's
/// 16-bit elements.
struct LayerWork {
  std::string name;
  std::string op;
  /// Multiply-accumulates (Conv, Gemm).
  int64_t macs = 0;
  /// Element operations of the vector unit (elementwise ops, pooling
  /// windows, batch norm); 0 for layout-only layers (Reshape, Identity).
  int64_t vectorOps = 0;
  int64_t activationBytes = 0;  // read and written
  int64_t weightBytes = 0;
  /// Output channels (Conv) or columns (Gemm) the MAC array's lanes split.
  int64_t outputChannels = 0;
};

struct Evaluation {
  /// The program's outputs, in its output order.
  std::vector<Tensor> outputs;
  std::vector<LayerWork> work;
};

/// The most multiply-accumulates and window reads one evaluation may do by
/// default: 2^36 (resnet50 at 224x224 does about 2^32).
inline constexpr int64_t kDefaultWorkBudget = int64_t{1} << 36;

/// Runs `program` with every graph input bound by name. INVALID_ARGUMENT
/// naming the input for one missing or of the wrong shape, naming the
/// layer for shapes its op cannot take, or naming the layer that would take
/// the evaluation past `workBudget` multiply-accumulates and window reads.
absl::StatusOr<Evaluation> evaluate(const MdlaProgram &program,
                                    const std::map<std::string, TensorView> &bound,
                                    Numerics numerics,
                                    int64_t workBudget = kDefaultWorkBudget);

/// Rounds `data` in place to int16 with the largest power-of-two scale
/// that holds its largest finite magnitude (NaN becomes 0, infinities
/// saturate); returns the scale's fraction bits.
int quantizeQ16(std::vector<float> &data);

} // namespace kiln::agent::mdla
