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

/// The function attribute that holds dataDependentMaxima's values.
inline constexpr const char *kDataDependentMaxAttr = "kiln.data_dependent_max";

/// Binds each data-dependent size that `declared` (a node output's type)
/// uses, when `result` is the nonzero or boolean_mask computing it (its row
/// count, dim 0), to that dim, with the selection's element count as its
/// largest value. INVALID_ARGUMENT for a size used before a selection
/// computes it; UNIMPLEMENTED for a selection whose count is declared as
/// one computed before (a program that assumes two counts equal).
absl::Status bindDataDependentSizes(mlir::OpBuilder &b, mlir::Location loc,
                                    const v1::Graph &graph,
                                    const v1::TensorType &declared, mlir::Value result,
                                    SymbolScope &symbols);

/// Graph output `value` (of declared type `declared`, which uses a
/// data-dependent size) as a 1-D static buffer of its largest element
/// count (its sizes at their largest values, as `symbols` has them), its elements first in row-major order. UNIMPLEMENTED when the
/// type also uses a size the inputs bind.
absl::StatusOr<mlir::Value> paddedOutput(mlir::OpBuilder &b, mlir::Location loc,
                                         const v1::Graph &graph,
                                         const SymbolScope &symbols,
                                         const v1::TensorType &declared,
                                         mlir::Value value);

/// tensor<Nxi64>: the values of the graph's N data-dependent sizes, in
/// declaration order, with their largest values appended to `maxima`.
/// INVALID_ARGUMENT naming one that no selection computed.
absl::StatusOr<mlir::Value> dataDependentValues(mlir::OpBuilder &b, mlir::Location loc,
                                                const v1::Graph &graph,
                                                const SymbolScope &symbols,
                                                llvm::SmallVectorImpl<int64_t> &maxima);

} // namespace kiln
