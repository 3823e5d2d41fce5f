// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// dsytf2 ('L') per matrix on the transposed lower triangle: one scf.while
// over k carrying (W, pivots, info, k); a zero column sets info, else the
// pivot search (colmax, then rowmax), Bunch-Kaufman's alpha = (1 +
// sqrt(17)) / 8, the exchanges, then a 2 x 2 (k += 2) or 1 x 1 (k += 1)
// update; LD written from W's upper triangle.
// CHECK-LABEL: func @ldl
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %c2 {{.+}} -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>, tensor<2x3x3xf64>)
// CHECK: scf.while ({{.+}}) : (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>, index)
// CHECK: arith.cmpi slt
// CHECK: scf.condition
// CHECK: arith.constant 0.640388203202207
// CHECK: scf.if
// CHECK: } else {
// CHECK: scf.if
// CHECK: arith.subi
// CHECK: } else {
// CHECK: arith.divf
func.func @ldl(%a: tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>) {
  %ld, %pivots, %info = aten.ldl_factor %a : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>)
  return %ld, %pivots, %info : tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>
}

// dsytrs: per matrix, a forward scf.while over the pivots (a negative
// pivot: a 2 x 2 block) and a backward one from the last.
// CHECK-LABEL: func @ldl_solve
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2 {{.+}} -> (tensor<2x3x4xf64>)
// CHECK: scf.while ({{.+}}) : (tensor<2x3x4xf64>, index)
// CHECK: arith.cmpi slt
// CHECK: scf.if
// CHECK: scf.while ({{.+}}) : (tensor<2x3x4xf64>, index)
// CHECK: arith.cmpi sge
func.func @ldl_solve(%ld: tensor<2x3x3xf64>, %p: tensor<2x3xi64>, %b: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %x = aten.ldl_solve %ld, %p, %b : (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  return %x : tensor<2x3x4xf64>
}
