//===- Passes.td - Kiln conversion passes ------------------*- tablegen -*-===//
//
// This file declares the passes that convert between dialects.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAtenToLinalg : Pass<"kiln-convert-aten-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Lower the aten dialect to linalg-on-tensors, tensor, arith and math";
  let description = [{
    Every aten op becomes linalg (named ops for matrix products, generics for
    elementwise maps and reductions), tensor reshapes, arith and math. An op
    without a lowering fails the pass with a diagnostic naming it.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

#endif // KILN_CONVERSION_PASSES_TD
