//===- EmptyTensors.h - nodes over tensors with no elements ---------------===//
//
// This file declares how the importer treats tensors with a zero-sized
// dimension. Such a tensor carries a shape and no data, so no code ever
// reads or writes one: a result with no elements is an empty constant, and
// a node that computes a non-empty result from an empty argument (a sum
// over an empty dim, a product whose contraction is empty, a cat with an
// empty piece) is resolved by its op's rule, as PyTorch defines it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ImportContext.h"
#include "OpHandlers.h"

#include <optional>

namespace kiln {

/// True when `type` has a zero extent.
bool hasNoElements(mlir::RankedTensorType type);

/// The one value of `type`, which has no elements.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);

/// Imports node `n` without its handler when it touches a tensor with no
/// elements: every result empty, or an empty argument under its op's rule.
/// nullopt when no argument and not every result is empty (the handler
/// imports it); UNIMPLEMENTED naming the argument when an empty argument
/// feeds a non-empty result of an op without a rule.
absl::StatusOr<std::optional<llvm::SmallVector<mlir::Value>>>
importOverEmptyTensors(NodeImporter &n, const OpHandlerTable &handlers);

} // namespace kiln
