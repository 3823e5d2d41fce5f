// RUN: kiln-opt %s -canonicalize | FileCheck %s

// A view to the same type folds away.
// CHECK-LABEL: func @view_identity
// CHECK-NEXT: return %arg0
func.func @view_identity(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = aten.view %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Constants of one type with different values stay apart (without a folder
// the greedy driver merged them all into the first), and equal ones merge.
// CHECK-LABEL: func @distinct_constants
// CHECK-DAG: %[[THREE:.+]] = aten.constant dense<3.000000e+00> : tensor<f32>
// CHECK-DAG: %[[SIX:.+]] = aten.constant dense<6.000000e+00> : tensor<f32>
// CHECK: %[[A:.+]] = aten.add %arg0, %[[THREE]]
// CHECK: %[[B:.+]] = aten.add %[[A]], %[[SIX]]
// CHECK: aten.add %[[B]], %[[THREE]]
func.func @distinct_constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %three = aten.constant dense<3.0> : tensor<f32>
  %a = aten.add %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %six = aten.constant dense<6.0> : tensor<f32>
  %b = aten.add %a, %six : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %three2 = aten.constant dense<3.0> : tensor<f32>
  %c = aten.add %b, %three2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
