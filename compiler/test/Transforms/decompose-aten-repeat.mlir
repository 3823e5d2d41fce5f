// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// repeat: a unit dim before each dim (and unit dims for the counts past
// self's rank), one expand to the counts, and a view merging each pair.
// CHECK-LABEL: func @repeat
// CHECK: %[[U:.+]] = aten.view %arg0 : (tensor<4x5xf32>) -> tensor<1x1x1x4x1x5xf32>
// CHECK: %[[E:.+]] = aten.expand %[[U]] : (tensor<1x1x1x4x1x5xf32>) -> tensor<2x1x1x4x3x5xf32>
// CHECK: %[[R:.+]] = aten.view %[[E]] : (tensor<2x1x1x4x3x5xf32>) -> tensor<2x4x15xf32>
// CHECK-NOT: aten.repeat
// CHECK: return %[[R]]
func.func @repeat(%x: tensor<4x5xf32>) -> tensor<2x4x15xf32> {
  %0 = aten.repeat %x {repeats = array<i64: 2, 1, 3>} : (tensor<4x5xf32>) -> tensor<2x4x15xf32>
  return %0 : tensor<2x4x15xf32>
}

// -----

// A 0-d self repeated is a broadcast of its one element.
// CHECK-LABEL: func @repeat_scalar
// CHECK: aten.view %arg0 : (tensor<i64>) -> tensor<1x1xi64>
// CHECK: aten.expand %{{.+}} : (tensor<1x1xi64>) -> tensor<3x1xi64>
// CHECK: aten.view %{{.+}} : (tensor<3x1xi64>) -> tensor<3xi64>
func.func @repeat_scalar(%x: tensor<i64>) -> tensor<3xi64> {
  %0 = aten.repeat %x {repeats = array<i64: 3>} : (tensor<i64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
