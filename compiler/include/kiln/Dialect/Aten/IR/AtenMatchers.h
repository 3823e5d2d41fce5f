//===- AtenMatchers.h - small facts about aten values ----------*- C++ -*-===//
//
// This file declares helpers the passes over the aten dialect share: what a
// value is (a splat constant), and the permutations between channels-first
// and channels-last data.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_ATEN_IR_ATENMATCHERS_H
#define KILN_DIALECT_ATEN_IR_ATENMATCHERS_H

#include "mlir/IR/Value.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln::aten {

/// The value of every element of `value` when it is an aten.constant of a
/// float type with one value throughout (a splat).
std::optional<double> floatSplatValue(mlir::Value value);

/// The value of every element of `value` when it is an aten.constant of an
/// integer type (not bool) with one value throughout, sign-extended.
std::optional<int64_t> integerSplatValue(mlir::Value value);

/// True when `value` is an aten.constant of a float type whose every
/// element is `expected`.
bool isFloatSplat(mlir::Value value, double expected);

/// The aten.permute dims from channels first (n, c, spatial...) to channels
/// last (n, spatial..., c) for `rank` dims: (0, 2, ..., rank-1, 1).
llvm::SmallVector<int64_t> toChannelsLast(int64_t rank);
/// Their inverse, channels last back to first: (0, rank-1, 1, ..., rank-2).
llvm::SmallVector<int64_t> fromChannelsLast(int64_t rank);

} // namespace kiln::aten

#endif // KILN_DIALECT_ATEN_IR_ATENMATCHERS_H
