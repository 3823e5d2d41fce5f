//===- FloatMath.h - scalar float formulas for the special functions -----===//
//
// This file declares the builder the special functions write their
// formulas with (SpecialFunctions.cpp, BesselFunctions.cpp,
// OrthogonalPolynomials.cpp): Arithmetic's operations plus constants,
// elementary functions and libm calls in one float type, and inF64, which
// runs a formula in f64 on operands of any float type.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ScalarLoops.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::aten {

/// Float arithmetic, constants and libm calls in one float type (f64 unless
/// given).
class FloatMath : public Arithmetic {
public:
  FloatMath(mlir::OpBuilder &b, mlir::Location l, mlir::Type type = {})
      : Arithmetic(b, l), b(b), l(l), type(type ? type : b.getF64Type()) {}

  mlir::Value c(double v) {
    return b.create<mlir::arith::ConstantOp>(l, b.getFloatAttr(type, v));
  }
  mlir::Value exp(mlir::Value x) { return b.create<mlir::math::ExpOp>(l, x); }
  mlir::Value log(mlir::Value x) { return b.create<mlir::math::LogOp>(l, x); }
  mlir::Value log1p(mlir::Value x) { return b.create<mlir::math::Log1pOp>(l, x); }
  mlir::Value expm1(mlir::Value x) { return b.create<mlir::math::ExpM1Op>(l, x); }
  mlir::Value sin(mlir::Value x) { return b.create<mlir::math::SinOp>(l, x); }
  mlir::Value cos(mlir::Value x) { return b.create<mlir::math::CosOp>(l, x); }
  mlir::Value acos(mlir::Value x) { return b.create<mlir::math::AcosOp>(l, x); }
  mlir::Value tan(mlir::Value x) { return b.create<mlir::math::TanOp>(l, x); }
  mlir::Value erf(mlir::Value x) { return b.create<mlir::math::ErfOp>(l, x); }
  mlir::Value pow(mlir::Value x, mlir::Value y) { return b.create<mlir::math::PowFOp>(l, x, y); }
  mlir::Value trunc(mlir::Value x) { return b.create<mlir::math::TruncOp>(l, x); }
  mlir::Value floor(mlir::Value x) { return b.create<mlir::math::FloorOp>(l, x); }
  mlir::Value nearest(mlir::Value x) { return b.create<mlir::math::RoundEvenOp>(l, x); }
  mlir::Value isNaN(mlir::Value x) { return cmp(mlir::arith::CmpFPredicate::UNO, x, x); }
  /// libm's double `fn`(double), declared by kiln-declare-libm-calls.
  mlir::Value libm(llvm::StringRef fn, mlir::Value x) {
    return b.create<mlir::func::CallOp>(l, fn, mlir::TypeRange{b.getF64Type()},
                                        mlir::ValueRange{x})
        .getResult(0);
  }
  /// c[0] + x (c[1] + x (c[2] + ...)), by Horner's rule.
  mlir::Value polynomial(mlir::Value x, llvm::ArrayRef<double> coefficients) {
    mlir::Value r = c(coefficients.back());
    for (double k : llvm::reverse(coefficients.drop_back()))
      r = add(mul(r, x), c(k));
    return r;
  }
  /// `v` where `condition` holds, else `otherwise`.
  mlir::Value where(mlir::Value condition, double v, mlir::Value otherwise) {
    return select(condition, c(v), otherwise);
  }

  mlir::OpBuilder &builder() { return b; }
  mlir::Location loc() { return l; }
  mlir::Type floatType() { return type; }

private:
  mlir::OpBuilder &b;
  mlir::Location l;
  mlir::Type type;
};

using F64Body = mlir::Value (*)(FloatMath &, mlir::ValueRange, llvm::ArrayRef<double>);

/// Runs `body` on the operands widened to f64 and rounds its result to the
/// operands' type (f32 or f64: Pointwise.cpp widens f16/bf16 to f32).
inline mlir::Value inF64(mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a,
                         llvm::ArrayRef<double> s, F64Body body) {
  mlir::Type type = a[0].getType();
  llvm::SmallVector<mlir::Value> wide;
  for (mlir::Value v : a)
    wide.push_back(v.getType().isF64()
                       ? v
                       : b.create<mlir::arith::ExtFOp>(l, b.getF64Type(), v).getResult());
  FloatMath m(b, l);
  mlir::Value r = body(m, wide, s);
  return type.isF64() ? r : b.create<mlir::arith::TruncFOp>(l, type, r).getResult();
}

/// Defines the aten.pointwise body NAME that runs EXPRESSION (of `m`, a
/// FloatMath, and `x`, the operands) in f64 by inF64.
#define KILN_F64_BODY(NAME, EXPRESSION)                                        \
  mlir::Value NAME(mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a,   \
                   llvm::ArrayRef<double> s) {                                 \
    return inF64(b, l, a, s,                                                   \
                 [](FloatMath &m, mlir::ValueRange x, llvm::ArrayRef<double>) { \
                   return EXPRESSION;                                          \
                 });                                                           \
  }

} // namespace kiln::aten
