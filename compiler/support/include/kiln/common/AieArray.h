//===- AieArray.h - Kiln's model of an AI Engine array --------------------===//
//
// This file declares what the acap target and the acap agent share about an
// AI Engine array: the arrays Kiln knows (tiles, data memory, DMA channels,
// throughput), a kernel call site seen as products, the memory one tile's
// block needs, the cycle model (docs/devices/acap.md), and the check that a
// plan fits an array. The figures are Kiln's model, after AMD's published
// AIE-ML architecture manual (AM020); they are not AMD's tools.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/aie_plan.pb.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::aie {

/// The array a plan is made for when the options name none.
inline constexpr std::string_view kDefaultArray = "aie-ml-304";
/// What the array computes in: operands rounded to bfloat16, products
/// accumulated in f32, the epilogue in f32.
inline constexpr std::string_view kNumericType = "bf16*bf16+f32";
/// The acap artifact's sections (an xclbin): the host code (SOFT_KERNEL)
/// and the plan (USER_METADATA).
inline constexpr const char *kHostSection = "kiln_host";
inline constexpr const char *kPlanSection = "kiln_aie_plan";

/// The array called `name`, or null.
const v1::AieArray *lookupArray(std::string_view name);
std::vector<std::string> arrayNames();

/// A call site (kind "convolution" or "matmul" and its kiln_rt geometry)
/// as `problems` independent products of (m x k) by (k x n). A convolution
/// is an implicit GEMM: m output pixels, n output channels of a group, k
/// input channels of a group times the kernel window. An "elementwise"
/// chain is one problem of m elements, n = 1, k steps, reading `inputs`
/// streams.
struct SiteProducts {
  int64_t problems = 0, m = 0, n = 0, k = 0;
  bool hasResidual = false;
  bool elementwise = false;
  int64_t inputs = 0;
};
/// INVALID_ARGUMENT naming the field for a malformed geometry, or one past
/// Kiln's bounds (2^20 per extent, 2^50 MACs; 2^32 elements of a chain,
/// whose steps must read only inputs and earlier steps).
absl::StatusOr<SiteProducts> siteProducts(std::string_view kind,
                                          std::span<const int64_t> geometry);

/// Data memory one tile uses for a block_m x block_n block fed block_k deep
/// slices: double-buffered bf16 operand slices, f32 accumulators, an f32
/// output staging buffer (and a residual buffer), the epilogue's vectors.
/// A chain's block: block_m f32 elements of each input and of the output,
/// double-buffered.
int64_t blockMemoryBytes(const SiteProducts &products, int64_t blockM,
                         int64_t blockN, int64_t blockK);

/// Cycles of one call of a site with `products` blocked as in `site`
/// (block_* and tiles set) on `array`: the slowest of the tiles' compute
/// and DMA, and the interface tiles' DDR bandwidth, plus the call's setup.
int64_t siteCycles(const SiteProducts &products, const v1::AieSite &site,
                   const v1::AieArray &array);

/// OK when every site of `plan` fits `array` (which must be the plan's
/// array): tiles in range and not shared, data memory and DMA channels per
/// tile. FAILED_PRECONDITION naming the site and the limit otherwise;
/// INVALID_ARGUMENT for a site that is malformed (geometry, block, cycles).
absl::Status checkPlanFits(const v1::AiePlan &plan, const v1::AieArray &array);

} // namespace kiln::aie
