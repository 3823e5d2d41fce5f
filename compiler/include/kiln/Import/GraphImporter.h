//===- GraphImporter.h - kiln.v1.Graph to the aten dialect ----------------===//
//
// This file declares the importer that turns a kiln.v1.Graph into a module
// holding `func.func @kiln_main` over `aten` ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/graph.pb.h"

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <vector>

namespace kiln {

/// Name of the function the importer creates.
inline constexpr const char *kGraphFunctionName = "kiln_main";

/// The attribute placement's import puts on every op a node imports to:
/// the node's position in the graph (i64).
inline constexpr const char *kNodeAttrName = "kiln.node";

struct ImportOptions {
  /// Placement's mode. A node the importer would refuse as UNIMPLEMENTED
  /// becomes one `aten.operator` (its op, the reason, its tensor arguments,
  /// results of its declared types) instead of failing the import, and
  /// every op a node imports to carries kNodeAttrName, so that
  /// kiln-place-nodes places the whole graph from one import. Malformed
  /// input is still INVALID_ARGUMENT.
  bool keepUnsupportedNodes = false;
};

/// Imports `graph` into a new module in `context`. Arguments are the graph's
/// parameters, then its inputs; results are its outputs. INVALID_ARGUMENT,
/// naming the node, op and argument, for anything malformed; UNIMPLEMENTED,
/// naming the node and op, for a valid op or attribute Kiln lacks (unless
/// `options` keep such nodes).
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
importGraph(const v1::Graph &graph, mlir::MLIRContext &context,
            const ImportOptions &options = {});

/// The builtin element type for a kiln.v1.DType; null for unknown values.
mlir::Type elementTypeFor(v1::DType dtype, mlir::MLIRContext &context);

/// Names of every ATen op (with overload) the importer accepts.
std::vector<std::string> supportedOps();

/// The largest value each data-dependent size of the imported graph can
/// take (Graph.symbols order, data-dependent ones only): the mask or tensor
/// size of the nonzero/x[mask] that computes it. Outputs are allocated at
/// these, whatever the graph declared. Empty when it has none.
std::vector<int64_t> dataDependentMaxima(mlir::ModuleOp module);

} // namespace kiln
