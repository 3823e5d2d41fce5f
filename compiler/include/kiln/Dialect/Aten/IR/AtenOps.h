//===- AtenOps.h - ATen dialect operations --------------------------------===//
//
// This file declares the operations of the `aten` dialect.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Dialect/Aten/IR/AtenDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "kiln/Dialect/Aten/IR/AtenOps.h.inc"

namespace kiln::aten {

/// The largest n aten.lu_factor takes: its decomposition unrolls n steps of
/// ~20 ops each.
inline constexpr int64_t kMaxLuOrder = 64;

} // namespace kiln::aten
