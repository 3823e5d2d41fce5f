// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// CHECK-LABEL: func @view
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
func.func @view(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = aten.view %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func @view_scalar
// CHECK: tensor.collapse_shape %arg0 [] : tensor<1x1xf32> into tensor<f32>
func.func @view_scalar(%x: tensor<1x1xf32>) -> tensor<f32> {
  %0 = aten.view %x : (tensor<1x1xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func @permute
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @permute(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = aten.permute %x {dims = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-DAG: #[[SRC:.+]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-LABEL: func @expand
// CHECK: linalg.generic {indexing_maps = [#[[SRC]], #{{.+}}]
func.func @expand(%x: tensor<1x4xf32>) -> tensor<5x3x4xf32> {
  %0 = aten.expand %x : (tensor<1x4xf32>) -> tensor<5x3x4xf32>
  return %0 : tensor<5x3x4xf32>
}
