//===- RandomBodies.h - scalar bodies of Kiln's random numbers ------------===//
//
// This file declares the scalar bodies of the aten.pointwise functions
// random_uniform, random_normal and random_bits: Philox4x32-10 (Random123's
// counter-based generator) keyed by a call's seed and counted by element,
// turned into the distributions the importer's random handlers build on
// (docs/architecture.md, "Random numbers").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Builders.h"

namespace kiln::aten {

/// Operands (index, seed), both i64; scalars (stream, draw, bits). A float
/// in [0, 1) with `bits` random bits: k * 2^-bits, where k is the top
/// `bits` bits of the first output words. f32 for bits <= 24, else f64.
mlir::Value randomUniform(mlir::OpBuilder &b, mlir::Location l,
                          mlir::ValueRange a, llvm::ArrayRef<double> s);

/// Operands (index, seed); scalars (stream, draw, bits): a standard normal
/// by Box-Muller, sqrt(-2 ln u1) cos(2 pi u2), with u1 in (0, 1] and u2 in
/// [0, 1) made as random_uniform makes its number: for bits <= 24 (in f32)
/// u1 from word 0 (plus one unit) and u2 from word 1; for 53 bits (f64) u1
/// from words (0, 1) and u2 from words (2, 3).
mlir::Value randomNormal(mlir::OpBuilder &b, mlir::Location l,
                         mlir::ValueRange a, llvm::ArrayRef<double> s);

/// Operands (index, seed); scalars (stream, draw): 63 random bits as a
/// non-negative i64, (word0 << 32 | word1) >> 1.
mlir::Value randomBits(mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a,
                       llvm::ArrayRef<double> s);

} // namespace kiln::aten
