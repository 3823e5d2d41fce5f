// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// The embedding's 2n eigenvector columns, in order, as complex vectors
// (rows [0, n) and [n, 2n)): made orthogonal to the kept ones by complex
// Gram-Schmidt twice (a loop over the kept count each time), kept,
// normalised, where the squared norm left is over 1/2 or where the columns
// left are as many as the vectors missing.
// CHECK-LABEL: func @hermitian_eigenvectors
// CHECK-SAME: (%[[V:.+]]: tensor<2x6x6xf64>)
// CHECK: linalg.fill {{.*}} -> tensor<2x3x3x2xf64>
// CHECK: scf.for %[[M:[^ ]+]] = %{{.+}} to %c2 step
// CHECK: scf.for %[[COL:[^ ]+]] = %{{.+}} to %c6 step %{{.+}} iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %[[KEPT:[^ ]+]] = %c0
// CHECK: tensor.extract %[[V]][%[[M]], %{{.+}}, %[[COL]]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[KEPT]] step
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[KEPT]] step
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpi sle
// CHECK: scf.if
// CHECK: math.sqrt
// CHECK: arith.addi %[[KEPT]], %c1
func.func @hermitian_eigenvectors(%v: tensor<2x6x6xf64>) -> tensor<2x3x3x2xf64> {
  %z = aten.hermitian_eigenvectors %v : (tensor<2x6x6xf64>) -> tensor<2x3x3x2xf64>
  return %z : tensor<2x3x3x2xf64>
}
