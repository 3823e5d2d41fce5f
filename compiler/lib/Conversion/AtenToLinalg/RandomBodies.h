//===- RandomBodies.h - scalar bodies of Kiln's random numbers ------------===//
//
// This file declares the scalar bodies of the aten.pointwise functions
// random_uniform, random_normal, random_poisson and random_bits:
// Philox4x32-10 (Random123's counter-based generator) keyed by a call's seed and counted by element,
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

/// Operands (index, seed, rate), all i64, the rate an f64's bits (so that
/// the operands stay in the random functions' i64 domain); scalars
/// (stream). A Poisson(rate) count as f64, by eager's algorithms: below
/// rate 10 the product of uniforms until it falls to e^-rate, from 10
/// Hormann's PTRS (transformed rejection with squeeze). Draw d of element i
/// is Philox's counter (i, stream, d) and gives two 53-bit uniforms. Rate 0
/// gives 0, +inf gives +inf, a negative or NaN rate NaN (eager raises).
mlir::Value randomPoisson(mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a,
                          llvm::ArrayRef<double> s);

/// Operands (index, seed); scalars (stream, draw): 63 random bits as a
/// non-negative i64, (word0 << 32 | word1) >> 1.
mlir::Value randomBits(mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a,
                       llvm::ArrayRef<double> s);

} // namespace kiln::aten
