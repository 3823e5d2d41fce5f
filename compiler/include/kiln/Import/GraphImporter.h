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

namespace kiln {

/// Name of the function the importer creates.
inline constexpr const char *kGraphFunctionName = "kiln_main";

/// Imports `graph` into a new module in `context`. Arguments are the graph's
/// parameters, then its inputs; results are its outputs. INVALID_ARGUMENT,
/// naming the node, op and argument, for anything malformed; UNIMPLEMENTED,
/// naming the node and op, for a valid op or attribute Kiln lacks.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
importGraph(const v1::Graph &graph, mlir::MLIRContext &context);

/// The builtin element type for a kiln.v1.DType; null for unknown values.
mlir::Type elementTypeFor(v1::DType dtype, mlir::MLIRContext &context);

/// Names of every ATen op (with overload) the importer accepts.
std::vector<std::string> supportedOps();

} // namespace kiln
