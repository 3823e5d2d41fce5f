//===- GraphPartition.h - split a graph into target and CPU runs -*- C++ -*-===//
//
// This file declares partitionGraph(): given which nodes the target compiles,
// it orders the graph into segments, each a run of nodes with one placement,
// and cuts a compilable sub-graph out of every target segment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/graph.pb.h"

#include <string>
#include <vector>

namespace kiln::compiler {

/// A run of nodes with one placement.
struct GraphSegment {
  bool onTarget = true;
  /// Indices into Graph.nodes, in the order they run.
  std::vector<int> nodes;
  /// Values read but not defined here (graph inputs, parameters, earlier
  /// segments' outputs), sorted by name.
  std::vector<std::string> inputs;
  /// Values defined here that later segments or the graph's outputs read,
  /// in definition order. Never empty: a segment nothing reads is dropped.
  std::vector<std::string> outputs;
  /// Target segments: the sub-graph to compile. Its parameters are the
  /// graph's parameters it reads (in graph order, digests kept), its inputs
  /// the other values it reads (sorted by name), its outputs `outputs`.
  v1::Graph graph;
};

/// The segments of `graph` when node i runs on the target iff onTarget[i].
/// Nodes are ordered topologically, preferring a ready node of the current
/// segment's placement (lowest index first), so that independent nodes
/// cluster and the graph switches placement as rarely as this greedy order
/// allows. Segments whose results nothing reads (dead code) are dropped.
/// The graph must be well formed (values defined before use), as the
/// importer has checked by the time anyone partitions.
std::vector<GraphSegment> partitionGraph(const v1::Graph &graph,
                                         const std::vector<bool> &onTarget);

} // namespace kiln::compiler
