//===- ComplexScalars.h - complex scalars in the factorisation loops ------===//
//
// This file declares a complex scalar as its two parts and the arithmetic
// the loops over complex matrices need (dtrevc3's complex solves in
// GeneralEigen.cpp; zgetf2, zpotf2 and ztrtrs in ComplexFactorisations.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ScalarLoops.h"

namespace kiln::aten {

/// A complex scalar as its parts.
struct Complex {
  mlir::Value re, im;
};

inline Complex times(Arithmetic &a, Complex x, Complex y) {
  return {a.sub(a.mul(x.re, y.re), a.mul(x.im, y.im)), a.add(a.mul(x.re, y.im), a.mul(x.im, y.re))};
}
/// x times the conjugate of y.
inline Complex timesConjugate(Arithmetic &a, Complex x, Complex y) {
  return {a.add(a.mul(x.re, y.re), a.mul(x.im, y.im)), a.sub(a.mul(x.im, y.re), a.mul(x.re, y.im))};
}
inline Complex plus(Arithmetic &a, Complex x, Complex y) {
  return {a.add(x.re, y.re), a.add(x.im, y.im)};
}
inline Complex minus(Arithmetic &a, Complex x, Complex y) {
  return {a.sub(x.re, y.re), a.sub(x.im, y.im)};
}
inline Complex scaled(Arithmetic &a, Complex x, mlir::Value r) {
  return {a.mul(x.re, r), a.mul(x.im, r)};
}
/// x / y as Smith's algorithm (and LAPACK's dladiv) scales it: by y's
/// larger part, so that no square of y overflows.
inline Complex quotient(Arithmetic &a, Complex x, Complex y) {
  mlir::Value wide = a.ge(a.abs(y.re), a.abs(y.im));
  mlir::Value ratio = a.select(wide, a.div(y.im, y.re), a.div(y.re, y.im));
  mlir::Value denom =
      a.select(wide, a.add(y.re, a.mul(y.im, ratio)), a.add(y.im, a.mul(y.re, ratio)));
  mlir::Value re = a.select(wide, a.add(x.re, a.mul(x.im, ratio)), a.add(a.mul(x.re, ratio), x.im));
  mlir::Value im = a.select(wide, a.sub(x.im, a.mul(x.re, ratio)), a.sub(a.mul(x.im, ratio), x.re));
  return {a.div(re, denom), a.div(im, denom)};
}
/// |re| + |im|: the measure LAPACK's izamax and dcabs1 compare.
inline mlir::Value absSum(Arithmetic &a, Complex x) { return a.add(a.abs(x.re), a.abs(x.im)); }
inline Complex conjugate(Arithmetic &a, Complex x) { return {x.re, a.neg(x.im)}; }

/// Entry `at` of a tensor of pairs (the pair's index appended).
inline Complex pairAt(mlir::OpBuilder &b, mlir::Location l, mlir::Value t, mlir::ValueRange at) {
  llvm::SmallVector<mlir::Value> index(at);
  index.push_back(Scalars(b, l).index(0));
  mlir::Value re = Scalars::at(b, l, t, index);
  index.back() = Scalars(b, l).index(1);
  return {re, Scalars::at(b, l, t, index)};
}

/// `t` with entry `at` of its pairs set to `v`.
inline mlir::Value putPair(mlir::OpBuilder &b, mlir::Location l, Complex v, mlir::Value t,
                           mlir::ValueRange at) {
  llvm::SmallVector<mlir::Value> index(at);
  index.push_back(Scalars(b, l).index(0));
  t = Scalars::put(b, l, v.re, t, index);
  index.back() = Scalars(b, l).index(1);
  return Scalars::put(b, l, v.im, t, index);
}

} // namespace kiln::aten
