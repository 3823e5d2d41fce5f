// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// topk: a stable sort along the dim, descending when largest, and the first
// k of its values and indices.
// CHECK-LABEL: func @topk
// CHECK-NOT: aten.topk
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0 {descending = true, dim = 0 : i64} : (tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xi64>)
// CHECK: %[[TV:.+]] = aten.slice %[[V]] {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<6x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[TI:.+]] = aten.slice %[[I]] {{.+}} : (tensor<6x4xi64>) -> tensor<2x4xi64>
// CHECK: return %[[TV]], %[[TI]]
func.func @topk(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>) {
  %v, %i = aten.topk %x {k = 2 : i64, dim = 0 : i64, largest = true} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  return %v, %i : tensor<2x4xf32>, tensor<2x4xi64>
}

// -----

// kthvalue: entry k - 1 of an ascending sort, viewed without the dim.
// CHECK-LABEL: func @kthvalue
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0 {descending = false, dim = 1 : i64}
// CHECK: %[[PV:.+]] = aten.slice %[[V]] {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<3x7xi32>) -> tensor<3x1xi32>
// CHECK: %[[PI:.+]] = aten.slice %[[I]] {offsets = array<i64: 0, 2>, {{.+}}} : (tensor<3x7xi64>) -> tensor<3x1xi64>
// CHECK: aten.view %[[PV]] : (tensor<3x1xi32>) -> tensor<3xi32>
// CHECK: aten.view %[[PI]] : (tensor<3x1xi64>) -> tensor<3xi64>
func.func @kthvalue(%x: tensor<3x7xi32>) -> (tensor<3xi32>, tensor<3xi64>) {
  %v, %i = aten.kthvalue %x {k = 3 : i64, dim = 1 : i64, keepdim = false} : (tensor<3x7xi32>) -> (tensor<3xi32>, tensor<3xi64>)
  return %v, %i : tensor<3xi32>, tensor<3xi64>
}

// -----

// A 0-d topk is its own sort: nothing to cut.
// CHECK-LABEL: func @topk_0d
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0 {descending = true, dim = 0 : i64} : (tensor<i64>) -> (tensor<i64>, tensor<i64>)
// CHECK-NEXT: return %[[V]], %[[I]]
func.func @topk_0d(%x: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %v, %i = aten.topk %x {k = 1 : i64, dim = 0 : i64, largest = true} : (tensor<i64>) -> (tensor<i64>, tensor<i64>)
  return %v, %i : tensor<i64>, tensor<i64>
}
