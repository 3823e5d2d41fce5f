//===- NodeSupport.h - which graph nodes a target can compile ---*- C++ -*-===//
//
// This file declares the capability check behind placement: each node of a
// graph is compiled on its own, as far as the linalg level, to learn whether
// the target can run it and, if not, why. Like Compile.h it includes no MLIR
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

/// Checks every node of `graph` for `options.target`: each is imported on its
/// own (its tensor arguments become inputs of their declared types) and
/// lowered to linalg. A node the importer reports UNIMPLEMENTED for (an op
/// or attribute Kiln lacks) or whose lowering fails is unsupported, with the
/// reason. Nodes with the same op, arguments and types are checked once.
/// INVALID_ARGUMENT, naming the node, for a malformed node (an unknown value,
/// a missing argument), as compileGraph would report it.
absl::StatusOr<std::vector<NodeSupport>>
checkNodeSupport(const v1::Graph &graph, const CompileOptions &options);

} // namespace kiln::compiler
