// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// The embedding's 2n eigenvector columns as complex working columns (rows
// [0, n) and [n, 2n)); n steps of pivoted complex Gram-Schmidt: the column
// not taken with the largest squared norm (a scan carrying the best index),
// projected once more against the taken ones, normalised (a zero column
// stays zero), marked taken and projected out of the others (masked
// projections over every column, not branches: ComplexGramSchmidt.h); then
// the taken columns written in column order.
// CHECK-LABEL: func @hermitian_eigenvectors
// CHECK-SAME: (%[[V:.+]]: tensor<2x6x6xf64>)
// CHECK: scf.for %[[M:[^ ]+]] = %{{.+}} to %c2 step
// CHECK: tensor.extract %[[V]][%[[M]], %{{.+}}, %{{.+}}] : tensor<2x6x6xf64>
// CHECK: linalg.fill {{.*}} -> tensor<6xf64>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c3{{(_[0-9]+)?}} step
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: math.sqrt
// CHECK: tensor.insert %{{.+}} into %{{.+}}[%{{.+}}] : tensor<6xf64>
// CHECK: arith.cmpf oeq
// CHECK: scf.for %{{.+}} = %{{.+}} to %c6{{(_[0-9]+)?}} step %{{.+}} iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %[[POS:[^ ]+]] = %c0
// CHECK: scf.if
// CHECK: tensor.insert %{{.+}} into %{{.+}}[%[[M]], %{{.+}}, %[[POS]], %{{.+}}] : tensor<2x3x3x2xf64>
func.func @hermitian_eigenvectors(%v: tensor<2x6x6xf64>) -> tensor<2x3x3x2xf64> {
  %z = aten.hermitian_eigenvectors %v : (tensor<2x6x6xf64>) -> tensor<2x3x3x2xf64>
  return %z : tensor<2x3x3x2xf64>
}
