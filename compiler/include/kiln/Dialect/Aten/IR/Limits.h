//===- Limits.h - the size bounds of the aten dialect ---------------------===//
//
// This file declares the bounds on untrusted sizes that the importer, the
// aten verifiers and the decompositions share: the most elements a tensor
// may declare and the most entries of a constant table built from a
// graph's extents.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace kiln::aten {

/// The most elements a tensor in a graph may declare (2^40): a client's
/// shapes are untrusted, and under this bound no product of extents wraps.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

/// The most entries of a constant table (indices, masks) built from a
/// graph's extents: 16M.
inline constexpr int64_t kMaxConstantTable = int64_t{1} << 24;

} // namespace kiln::aten
