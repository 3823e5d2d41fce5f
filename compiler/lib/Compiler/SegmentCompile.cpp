//===- SegmentCompile.cpp - a partitioned graph's target segments ---------===//
//
// This file implements compileTargetSegments(): the policy's fraction,
// partitionGraph, then compileGraph for each target segment's sub-graph.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/SegmentCompile.h"

#include "kiln/Compiler/GraphPartition.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <string>

namespace kiln::compiler {

std::vector<SegmentCompile>
compileTargetSegments(const v1::Graph &graph,
                      const std::vector<NodeSupport> &support,
                      const CompileOptions &options,
                      const PlacementRequest &request,
                      std::chrono::steady_clock::time_point start) {
  std::vector<SegmentCompile> compiled;
  if (static_cast<int>(support.size()) != graph.nodes_size() || support.empty())
    return compiled;
  std::vector<bool> onTarget(support.size());
  int cpuNodes = 0;
  for (size_t i = 0; i < support.size(); ++i) {
    onTarget[i] = support[i].supported;
    cpuNodes += !support[i].supported;
  }
  if (cpuNodes == 0 || cpuNodes == graph.nodes_size() ||
      static_cast<double>(cpuNodes) / graph.nodes_size() >
          request.maxFallbackFraction)
    return compiled;

  CompileOptions segmentOptions = options;
  segmentOptions.placement.reset(); // a segment compiles whole or fails
  // Stages are reported as "segment N STAGE": a worker that dies in one
  // tells kilnd it died compiling segments, not the graph itself.
  std::string stage;
  int current = 0;
  if (options.onStage)
    segmentOptions.onStage = [&stage, &current, report = options.onStage](
                                 const char *name) {
      stage = absl::StrCat("segment ", current, " ", name);
      report(stage.c_str());
    };
  std::vector<GraphSegment> segments = partitionGraph(graph, onTarget);
  for (int s = 0; s < static_cast<int>(segments.size()); ++s) {
    if (!segments[s].onTarget)
      continue;
    auto now = std::chrono::steady_clock::now();
    if (request.segmentBudget.count() > 0 && now - start >= request.segmentBudget)
      break;
    SegmentCompile &entry = compiled.emplace_back();
    current = entry.segment = s;
    entry.nodes = segments[s].nodes;
    entry.compiled = compileGraph(segments[s].graph, segmentOptions);
    entry.compileUs = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - now)
                          .count();
    if (!entry.compiled.ok())
      break;
  }
  return compiled;
}

} // namespace kiln::compiler
