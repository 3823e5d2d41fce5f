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

/// aten.embedding_bag's bounds: (bag, index) pairs of its membership mask,
/// and (bag, index, column) triples of max mode's window.
inline constexpr int64_t kMaxEmbeddingBagPairs = int64_t{1} << 24;
inline constexpr int64_t kMaxEmbeddingBagWindow = int64_t{1} << 26;
/// ... and of the (index, column) rows it gathers.
inline constexpr int64_t kMaxEmbeddingBagRows = int64_t{1} << 40;

/// aten.embedding_bag's modes.
enum EmbeddingBagMode : int64_t {
  kEmbeddingBagSum = 0,
  kEmbeddingBagMean = 1,
  kEmbeddingBagMax = 2
};

/// The type aten.group_norm and aten.batch_stats_norm compute their
/// statistics in for an input of `element`: f32 for f16/bf16, as eager's
/// CPU kernels do; the input's type otherwise.
inline mlir::Type normStatisticsType(mlir::Type element) {
  return element.isF16() || element.isBF16()
             ? mlir::Float32Type::get(element.getContext())
             : element;
}

} // namespace kiln::aten
