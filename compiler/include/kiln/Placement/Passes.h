//===- Passes.h - Kiln placement passes -------------------------*- C++ -*-===//
//
// This file declares the placement passes (Passes.td) and the attributes
// they write.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// Where kiln-place-nodes puts an op's node: kTargetPlacement or
/// kHostPlacement.
inline constexpr llvm::StringLiteral kPlacementAttrName = "kiln.placement";
/// Why a host node cannot run on the target.
inline constexpr llvm::StringLiteral kPlacementReasonAttrName =
    "kiln.placement_reason";
inline constexpr llvm::StringLiteral kTargetPlacement = "target";
inline constexpr llvm::StringLiteral kHostPlacement = "host";

#define GEN_PASS_DECL
#include "kiln/Placement/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Placement/Passes.h.inc"

} // namespace kiln
