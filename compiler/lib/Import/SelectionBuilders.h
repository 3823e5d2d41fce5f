//===- SelectionBuilders.h - sorting and searching for other handlers -----===//
//
// This file declares the building blocks that sort and search along a
// dim, shared by the handlers of the ops built from them (topk, kthvalue,
// searchsorted, randperm, multinomial).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ImportContext.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln {

/// A stable sort of `self` along `dim` (one aten.sort), or with `k` its
/// first k (one aten.topk): (values, i64 indices). TensorHandlers.cpp.
absl::StatusOr<llvm::SmallVector<mlir::Value>>
sortAlong(NodeImporter &n, mlir::Value self, int64_t dim, bool descending,
          std::optional<int64_t> k);

/// Insertion indices of `values` in the rows of `sorted` (its last dim),
/// in `type`: one aten.searchsorted (`right`: an upper bound), after the
/// checks that name what is wrong. A 1-d `sorted` is one row for every
/// value; otherwise its leading dims match the values'. SearchHandlers.cpp.
absl::StatusOr<mlir::Value> insertionIndices(NodeImporter &n,
                                             mlir::RankedTensorType type,
                                             mlir::Value sorted,
                                             mlir::Value values, bool right);

} // namespace kiln
