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

// -----

// Views of symbolic size: one dynamic extent in the result is an
// expand_shape with its size; two are a reshape by a shape tensor (two
// dynamic extents in one expanded group do not bufferize in MLIR 19).
// CHECK-LABEL: func @symbolic_views
// CHECK-SAME: (%[[X:.+]]: tensor<?x96xf32>, %[[B:.+]]: index, %[[T:.+]]: index)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<?x96xf32> into tensor<?xf32>
// CHECK: %[[SHAPE:.+]] = tensor.from_elements %[[B]], %[[T]], %{{.+}} : tensor<3xindex>
// CHECK: tensor.reshape %[[FLAT]](%[[SHAPE]]) : (tensor<?xf32>, tensor<3xindex>) -> tensor<?x?x96xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [%[[B]], 192] : tensor<?xf32> into tensor<?x192xf32>
func.func @symbolic_views(%x: tensor<?x96xf32>, %b: index, %t: index) -> (tensor<?x?x96xf32>, tensor<?x192xf32>) {
  %0 = aten.view %x sizes(%b, %t) : (tensor<?x96xf32>) -> tensor<?x?x96xf32>
  %1 = aten.view %x sizes(%b) : (tensor<?x96xf32>) -> tensor<?x192xf32>
  return %0, %1 : tensor<?x?x96xf32>, tensor<?x192xf32>
}

// -----

// Flipped dims read backwards (extent - 1 - i); the others as they are.
// CHECK: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (-d0 + 3, d1, -d2 + 4)>
// CHECK: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @flip
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<4x2x5xf32>) outs(%{{.+}} : tensor<4x2x5xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[A]]
func.func @flip(%x: tensor<4x2x5xf32>) -> tensor<4x2x5xf32> {
  %0 = aten.flip %x {dims = array<i64: 0, 2>} : tensor<4x2x5xf32>
  return %0 : tensor<4x2x5xf32>
}

// -----

// Offset 1 along dims 0 and 2: the 4x2x4 square from (0, 0, 1), read at
// (i, j, i) into result (j, i); offset -2 the 2x2x2 square from (2, 0, 0).
// CHECK-DAG: #[[DIAG:.+]] = affine_map<(d0, d1) -> (d1, d0, d1)>
// CHECK-LABEL: func @diagonal
// CHECK: %[[SQ:.+]] = tensor.extract_slice %arg0[0, 0, 1] [4, 2, 4] [1, 1, 1] : tensor<4x2x5xf32> to tensor<4x2x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[DIAG]], #{{.+}}]{{.+}} ins(%[[SQ]] : tensor<4x2x4xf32>) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: %[[SQ2:.+]] = tensor.extract_slice %arg0[2, 0, 0] [2, 2, 2] [1, 1, 1] : tensor<4x2x5xf32> to tensor<2x2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[DIAG]], #{{.+}}]{{.+}} ins(%[[SQ2]] : tensor<2x2x2xf32>) outs(%{{.+}} : tensor<2x2xf32>)
func.func @diagonal(%x: tensor<4x2x5xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>) {
  %0 = aten.diagonal %x {offset = 1 : i64, dim1 = 0 : i64, dim2 = 2 : i64} : (tensor<4x2x5xf32>) -> tensor<2x4xf32>
  %1 = aten.diagonal %x {offset = -2 : i64, dim1 = 0 : i64, dim2 = 2 : i64} : (tensor<4x2x5xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x2xf32>
}

// -----

// as_strided: self's row-major elements cut to the span the window reads
// ([1, 1 + (2-1)*1 + (2-1)*3] = 5 elements from 1), then one copy that
// reads the span at i*1 + j*3: no index table.
// CHECK: #[[READ:.+]] = affine_map<(d0, d1) -> (d0 + d1 * 3)>
// CHECK-LABEL: func @as_strided
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: %[[SPAN:.+]] = tensor.extract_slice %[[FLAT]][1] [5] [1] : tensor<6xf32> to tensor<5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[READ]], #{{.+}}]
// CHECK-SAME: ins(%[[SPAN]] : tensor<5xf32>)
// CHECK-NOT: aten.
func.func @as_strided(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %0 = aten.as_strided %x {stride = array<i64: 1, 3>, storage_offset = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// A window that is one dim alone over its span (stride 1 where the other
// dims are 1 long or have stride 0) reads it as is; a 0-d window is the
// element at the offset.
// CHECK: #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func @as_strided_broadcast_and_scalar
// CHECK: tensor.extract_slice %{{.+}}[2] [4] [1] : tensor<12xi64> to tensor<4xi64>
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #{{.+}}]
// CHECK: tensor.extract_slice %{{.+}}[7] [1] [1] : tensor<12xi64> to tensor<1xi64>
// CHECK: tensor.collapse_shape %{{.+}} [] : tensor<1xi64> into tensor<i64>
func.func @as_strided_broadcast_and_scalar(%x: tensor<3x4xi64>) -> (tensor<1x3x4xi64>, tensor<i64>) {
  %0 = aten.as_strided %x {stride = array<i64: 5, 0, 1>, storage_offset = 2 : i64} : (tensor<3x4xi64>) -> tensor<1x3x4xi64>
  %1 = aten.as_strided %x {stride = array<i64>, storage_offset = 7 : i64} : (tensor<3x4xi64>) -> tensor<i64>
  return %0, %1 : tensor<1x3x4xi64>, tensor<i64>
}
