//===- SymbolicAgreement.h - symbolic sizes that must agree ---------------===//
//
// This file declares the importer's check that a node's symbolic sizes agree
// where the op needs them equal: a view keeps its element count, the
// operands of an elementwise op (or expand, slice) match the result dim by
// dim or broadcast a static 1, and a product's operands agree on its depth,
// rows and columns.
// Static extents are the verifiers' to check; symbolic ones are only known
// by their size expressions, and generated code that trusted two unequal
// ones would read past a buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/graph.pb.h"

#include "absl/status/status.h"

#include <functional>
#include <string>

namespace kiln {

/// The declared type of a value by name (null when unknown).
using DeclaredTypeLookup = std::function<const v1::TensorType *(const std::string &)>;

/// INVALID_ARGUMENT naming the node (`index`) and the sizes that disagree
/// when `node` is a view whose input and output element counts differ as
/// size expressions, an elementwise op (expand, slice) whose tensor
/// operands and result have different sizes in one dim (a static 1
/// broadcasts), or an mm/addmm/bmm whose operands disagree. Other ops, and
/// nodes without symbolic sizes, pass.
absl::Status checkSymbolicAgreement(const v1::Node &node, int index,
                                    const DeclaredTypeLookup &declared);

} // namespace kiln
