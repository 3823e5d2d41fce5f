//===- OpHandlers.h - ATen op name to aten dialect builders ---------------===//
//
// This file declares the table of handlers the importer dispatches on, keyed
// by the ATen op name with overload ("aten.add.Tensor").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ImportContext.h"

#include <functional>
#include <map>

namespace kiln {

/// Builds the aten ops for one node; returns one value per declared output.
using OpHandler =
    std::function<absl::StatusOr<llvm::SmallVector<mlir::Value>>(NodeImporter &)>;

using OpHandlerTable = std::map<std::string, OpHandler>;

/// Table parts by family, each in its own file.
void addTensorHandlers(OpHandlerTable &table);
void addSpecialFunctionHandlers(OpHandlerTable &table);
void addIndexHandlers(OpHandlerTable &table);
void addScanHandlers(OpHandlerTable &table);
void addNNHandlers(OpHandlerTable &table);
void addAdaptivePoolHandlers(OpHandlerTable &table);
void addFractionalPoolHandlers(OpHandlerTable &table);
void addNormHandlers(OpHandlerTable &table);
void addBackwardHandlers(OpHandlerTable &table);
void addFlatIndexHandlers(OpHandlerTable &table);
void addQuantizeHandlers(OpHandlerTable &table);
void addSearchHandlers(OpHandlerTable &table);
void addTrilinearHandler(OpHandlerTable &table);
void addSegmentReduceHandler(OpHandlerTable &table);
void addEmbeddingHandlers(OpHandlerTable &table);
void addLinalgHandlers(OpHandlerTable &table);
void addRandomHandlers(OpHandlerTable &table);
void addDataDependentHandlers(OpHandlerTable &table);

/// A handler building the aten.pointwise `fn` over the node's arguments
/// `names`, in order; a number argument becomes a 0-d constant of the
/// result's element type (TensorHandlers.cpp).
OpHandler pointwiseHandler(llvm::StringRef fn, std::vector<std::string> names = {"self"});

/// masked_select, of a real or a complex self (its pairs kept together):
/// one aten.boolean_mask (DataDependentHandlers.cpp).
absl::StatusOr<llvm::SmallVector<mlir::Value>> maskedSelect(NodeImporter &n);

/// index.Tensor's one boolean index (x[mask]), or nullopt when its indices
/// are anything else (IndexHandlers.cpp).
absl::StatusOr<std::optional<mlir::Value>> soleBooleanIndex(NodeImporter &n);

/// x[mask]: the rows of `self` where `mask` (over self's leading dims) is
/// true, as one aten.boolean_mask (DataDependentHandlers.cpp).
absl::StatusOr<llvm::SmallVector<mlir::Value>>
indexByMask(NodeImporter &n, mlir::RankedTensorType type, mlir::Value self,
            mlir::Value mask);

/// Every supported op, by name.
const std::map<std::string, OpHandler> &opHandlers();

/// The ops Kiln compiles on complex tensors (held as (real, imaginary)
/// pairs in a trailing dim of 2), by name: a node that reads or declares a
/// complex value is imported through this table (ComplexHandlers.cpp).
const std::map<std::string, OpHandler> &complexHandlers();

} // namespace kiln
