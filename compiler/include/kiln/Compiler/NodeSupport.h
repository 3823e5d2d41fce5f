//===- NodeSupport.h - which graph nodes a target can compile ---*- C++ -*-===//
//
// This file declares the capability check behind placement: where each node
// of a graph can run (kiln-place-nodes' plan, read back per node) and, if
// not on the target, why. Like Compile.h it includes no MLIR
// headers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Compiler/Compile.h"

#include <string>
#include <vector>

namespace kiln::compiler {

/// Whether the target compiles one graph node.
struct NodeSupport {
  bool supported = true;
  /// Why not, in the compiler's words (without the "node N (op): " prefix);
  /// empty when supported.
  std::string reason;
};

/// Checks every node of `graph` for `options.target`, from one import of
/// the whole graph: a node the importer reports UNIMPLEMENTED for (an op or
/// attribute Kiln lacks) stays as one op with the reason, and
/// kiln-place-nodes checks each node's ops on their own, lowering them as
/// the target does (to linalg, or the target's own emitter). A node that
/// fails is unsupported, with the reason. Nodes whose ops copy alike are
/// checked once. INVALID_ARGUMENT, naming the node, for a malformed node
/// (an unknown value, a missing argument), as compileGraph would report it;
/// UNIMPLEMENTED for a graph with symbolic sizes (never partitioned).
absl::StatusOr<std::vector<NodeSupport>>
checkNodeSupport(const v1::Graph &graph, const CompileOptions &options);

} // namespace kiln::compiler
