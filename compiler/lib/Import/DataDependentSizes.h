//===- DataDependentSizes.h - sizes the run computes ----------------------===//
//
// This file declares the importer's side of data-dependent sizes
// (SymbolicDim.data_dependent, torch.export's u0): binding one to the first
// node result that has it as a whole dim, padding the graph outputs that use
// one into buffers of their largest size, and the int64 array of their
// values that the graph function returns last (executable.proto).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ImportContext.h"

#include "kiln/v1/graph.pb.h"

#include "absl/status/statusor.h"
#include "mlir/IR/Builders.h"

namespace kiln {

/// True when the graph declares a data-dependent size.
bool hasDataDependentSizes(const v1::Graph &graph);

/// True when `type` has a dimension whose size uses a data-dependent size.
bool usesDataDependentSize(const v1::Graph &graph, const v1::TensorType &type);

/// Binds each data-dependent size that `declared` (a node output's type)
/// has as a whole dimension, and `symbols` does not have yet, to that dim
/// of `result`. INVALID_ARGUMENT when the op computing it (nonzero,
/// boolean_mask) could select more rows than the size's max.
absl::Status bindDataDependentSizes(mlir::OpBuilder &b, mlir::Location loc,
                                    const v1::Graph &graph,
                                    const v1::TensorType &declared, mlir::Value result,
                                    SymbolScope &symbols);

/// Graph output `value` (of declared type `declared`, which uses a
/// data-dependent size) as a 1-D static buffer of its largest element
/// count, its elements first in row-major order. UNIMPLEMENTED when the
/// type also uses a size the inputs bind.
absl::StatusOr<mlir::Value> paddedOutput(mlir::OpBuilder &b, mlir::Location loc,
                                         const v1::Graph &graph,
                                         const v1::TensorType &declared,
                                         mlir::Value value);

/// tensor<Nxi64>: the values of the graph's N data-dependent sizes, in
/// declaration order. INVALID_ARGUMENT naming one that no node result bound.
absl::StatusOr<mlir::Value> dataDependentValues(mlir::OpBuilder &b, mlir::Location loc,
                                                const v1::Graph &graph,
                                                const SymbolScope &symbols);

} // namespace kiln
