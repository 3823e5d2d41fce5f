//===- PerSampleLoop.h - per-sample ops over a symbolic batch -------------===//
//
// This file declares the import of an op that treats each sample of its
// batch on its own (convolution, pooling, eval-mode batch norm) when the
// batch is of symbolic size: a loop over the batch whose body is the op's
// static import for one sample.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ImportContext.h"
#include "OpHandlers.h"

#include <optional>

namespace kiln {

/// Imports `n` as a loop over its batch when `n` is a per-sample op whose
/// only symbolic size is the leading dimension of its batched arguments and
/// results, all the same size: each iteration slices one sample out of
/// every batched argument, runs `handler` on a copy of the node with static
/// one-sample types, and inserts its results. std::nullopt when that does
/// not apply (the caller then treats the node as any other).
absl::StatusOr<std::optional<llvm::SmallVector<mlir::Value>>>
importPerSample(NodeImporter &n, const OpHandler &handler,
                const ValueTable &values, const SymbolScope &symbols);

} // namespace kiln
