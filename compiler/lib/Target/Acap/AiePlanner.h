//===- AiePlanner.h - kernel call sites onto an AI Engine array -----------===//
//
// This file declares the acap target's planner: it gives every kernel call
// site of the host code (a convolution or matrix product with its epilogue)
// tiles of an AI Engine array, blocks it to fit one tile's data memory and
// DMA channels, and estimates its cycles (kiln/common/AieArray.h). It knows
// no MLIR or LLVM.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/aie_plan.pb.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::compiler::acap {

/// One call site as the host code makes it: "convolution" with a
/// kiln_rt_convolution geometry, "matmul" with a kiln_rt_matmul one, or
/// "elementwise" with a kiln_rt_elementwise one.
struct KernelSite {
  std::string kind;
  std::vector<int64_t> geometry;
};

/// The plan for `sites` on `array` using at most `tiles` tiles (0: all of
/// them). Each site gets tiles of its own (a tile holds one kernel), the
/// rest where they cut the most cycles. FAILED_PRECONDITION naming the limit when the
/// sites do not fit; INVALID_ARGUMENT for a malformed geometry.
absl::StatusOr<v1::AiePlan> planSites(const std::vector<KernelSite> &sites,
                                      const v1::AieArray &array, int tiles);

} // namespace kiln::compiler::acap
