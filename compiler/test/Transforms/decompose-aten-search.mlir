// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// One row for every value, right side: !(b > x) counted over the row, then
// the result's int32.
// CHECK-LABEL: func @bucketize_right
// CHECK-SAME: (%[[B:.+]]: tensor<4xf32>, %[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: aten.searchsorted
// CHECK: %[[ROW:.+]] = aten.view %[[B]] : (tensor<4xf32>) -> tensor<1x1x4xf32>
// CHECK: %[[COL:.+]] = aten.view %[[X]] : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[GT:.+]] = aten.pointwise "gt" %[[ROW]], %[[COL]] : (tensor<1x1x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xi1>
// CHECK: %[[BEFORE:.+]] = aten.pointwise "logical_not" %[[GT]]
// CHECK: %[[ONES:.+]] = aten.pointwise "copy" %[[BEFORE]] : (tensor<2x3x4xi1>) -> tensor<2x3x4xi64>
// CHECK: %[[COUNT:.+]] = aten.sum %[[ONES]] {dims = array<i64: 2>} : (tensor<2x3x4xi64>) -> tensor<2x3xi64>
// CHECK: %[[I32:.+]] = aten.pointwise "copy" %[[COUNT]] : (tensor<2x3xi64>) -> tensor<2x3xi32>
// CHECK: return %[[I32]]
func.func @bucketize_right(%b: tensor<4xf32>, %x: tensor<2x3xf32>) -> tensor<2x3xi32> {
  %i = aten.searchsorted %b, %x {right} : (tensor<4xf32>, tensor<2x3xf32>) -> tensor<2x3xi32>
  return %i : tensor<2x3xi32>
}

// -----

// Rows of a 2-d sequence, left side: !(b >= x), in i64 already.
// CHECK-LABEL: func @searchsorted_rows
// CHECK-SAME: (%[[S:.+]]: tensor<2x5xf64>, %[[V:.+]]: tensor<2x3xf64>)
// CHECK: %[[ROW:.+]] = aten.view %[[S]] : (tensor<2x5xf64>) -> tensor<2x1x5xf64>
// CHECK: %[[COL:.+]] = aten.view %[[V]] : (tensor<2x3xf64>) -> tensor<2x3x1xf64>
// CHECK: %[[GE:.+]] = aten.pointwise "ge" %[[ROW]], %[[COL]] : (tensor<2x1x5xf64>, tensor<2x3x1xf64>) -> tensor<2x3x5xi1>
// CHECK: aten.pointwise "logical_not" %[[GE]]
// CHECK: %[[COUNT:.+]] = aten.sum %{{.+}} {dims = array<i64: 2>} : (tensor<2x3x5xi64>) -> tensor<2x3xi64>
// CHECK: return %[[COUNT]]
func.func @searchsorted_rows(%s: tensor<2x5xf64>, %v: tensor<2x3xf64>) -> tensor<2x3xi64> {
  %i = aten.searchsorted %s, %v : (tensor<2x5xf64>, tensor<2x3xf64>) -> tensor<2x3xi64>
  return %i : tensor<2x3xi64>
}
