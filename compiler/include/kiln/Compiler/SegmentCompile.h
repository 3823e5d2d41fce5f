//===- SegmentCompile.h - a partitioned graph's target segments -*- C++ -*-===//
//
// This file declares compileTargetSegments(): the second half of placement's
// one call. Once the capability check has found which nodes the target
// lacks, the graph is partitioned (partitionGraph) and every target segment
// compiled in the same process. Like Compile.h it includes no MLIR headers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Compiler/Compile.h"
#include "kiln/Compiler/NodeSupport.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace kiln::compiler {

/// One target segment's compile.
struct SegmentCompile {
  /// Its index among partitionGraph's segments (CPU segments included).
  int segment = 0;
  /// Its nodes, in the order they run: the caller checks that it cut the
  /// same segment before it uses the executable.
  std::vector<int> nodes;
  absl::StatusOr<CompiledExecutable> compiled =
      absl::UnknownError("segment not compiled");
  /// Wall time of this segment's compile.
  int64_t compileUs = 0;
};

/// The target segments of `graph`, compiled in segment order, when node i
/// runs on the target iff support[i].supported and the CPU's share of the
/// nodes is within `request.maxFallbackFraction`. Empty when every node is
/// supported (the graph's own error stands), when none is, or past the
/// fraction. Stops after the first segment that fails (its status is the
/// last entry) and, once `request.segmentBudget` has passed since `start`,
/// before the next segment: the caller compiles what is missing. Stages
/// reach `options.onStage` as "segment N STAGE".
std::vector<SegmentCompile>
compileTargetSegments(const v1::Graph &graph,
                      const std::vector<NodeSupport> &support,
                      const CompileOptions &options,
                      const PlacementRequest &request,
                      std::chrono::steady_clock::time_point start);

} // namespace kiln::compiler
