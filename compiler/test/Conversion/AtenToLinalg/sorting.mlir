// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// Stable sort along the last dim: a rank-counting reduction over j, then a
// reduction over i picking the element of each rank.
// CHECK-DAG: #[[I:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[J:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @sort
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[I]], #[[J]], #[[I]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.cmpf olt
// CHECK: arith.extui %{{.+}} : i1 to i64
// CHECK: linalg.generic {indexing_maps = [#[[J]], #[[J]], #[[I]], #[[I]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[R]] : tensor<2x5xf32>, tensor<2x5xi64>)
// CHECK: linalg.yield %{{.+}}, %{{.+}} : f32, i64
func.func @sort(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>) {
  %v, %i = aten.sort %x {dim = 1 : i64, descending = false} : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>)
  return %v, %i : tensor<2x5xf32>, tensor<2x5xi64>
}

// -----

// Rows over 256 elements: a bottom-up merge sort per row (rows collapsed to
// one dim), passes in pairs values -> scratch -> values over alloc_tensor
// scratch (never CSE'd into one buffer), ceil(log2 300) = 9 passes, 5 pairs.
// The merge takes the right head only when it sorts strictly first (stable;
// descending here, so when the left head is the smaller).
// CHECK-LABEL: func @sort_long
// CHECK: %[[ROWS:.+]] = tensor.expand_shape %{{.+}} output_shape [6, 300] : tensor<1800xi64> into tensor<6x300xi64>
// CHECK: %[[SV:.+]] = bufferization.alloc_tensor() : tensor<6x300xi64>
// CHECK: %[[SI:.+]] = bufferization.alloc_tensor() : tensor<6x300xi64>
// CHECK: scf.for %[[ROW:.+]] = %{{.+}} to %c6 step %{{.+}} iter_args(%{{.+}} = %[[ROWS]], %{{.+}} = %{{.+}}, %{{.+}} = %[[SV]], %{{.+}} = %[[SI]])
// CHECK: scf.for %{{.+}} = %{{.+}} to %c5 step
// CHECK: arith.shli
// CHECK: scf.for %{{.+}} = %{{.+}} to %c300 step
// CHECK: scf.for
// CHECK: arith.cmpi slt, %[[LEFT:.+]], %[[RIGHT:.+]] : i64
// CHECK: arith.select %{{.+}}, %[[LEFT]], %[[RIGHT]] : i64
// CHECK: tensor.insert %{{.+}}[%[[ROW]], %{{.+}}] : tensor<6x300xi64>
// CHECK: tensor.insert %{{.+}}[%[[ROW]], %{{.+}}] : tensor<6x300xi64>
// CHECK: tensor.expand_shape
// CHECK-NOT: linalg.generic {{.*}}"reduction"
func.func @sort_long(%x: tensor<2x3x300xi64>) -> (tensor<2x3x300xi64>, tensor<2x3x300xi64>) {
  %v, %i = aten.sort %x {dim = 2 : i64, descending = true} : (tensor<2x3x300xi64>) -> (tensor<2x3x300xi64>, tensor<2x3x300xi64>)
  return %v, %i : tensor<2x3x300xi64>, tensor<2x3x300xi64>
}

// -----

// Another dim: transposed last, sorted, both results transposed back; a 0-d
// input is its own sort with index 0.
// CHECK-LABEL: func @sort_dim0
// CHECK: %[[T:.+]] = linalg.transpose ins(%arg0 : tensor<5x3xf32>) outs(%{{.+}} : tensor<3x5xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.+}} ins(%[[T]], %[[T]] : tensor<3x5xf32>, tensor<3x5xf32>)
// CHECK: linalg.transpose ins(%{{.+}} : tensor<3x5xf32>) outs(%{{.+}} : tensor<5x3xf32>) permutation = [1, 0]
// CHECK: linalg.transpose ins(%{{.+}} : tensor<3x5xi64>) outs(%{{.+}} : tensor<5x3xi64>) permutation = [1, 0]
func.func @sort_dim0(%x: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>) {
  %v, %i = aten.sort %x {dim = 0 : i64, descending = false} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>)
  return %v, %i : tensor<5x3xf32>, tensor<5x3xi64>
}

// CHECK-LABEL: func @sort_0d
// CHECK: %[[ZERO:.+]] = linalg.fill {{.+}} -> tensor<i64>
// CHECK: return %arg0, %[[ZERO]]
func.func @sort_0d(%x: tensor<f32>) -> (tensor<f32>, tensor<i64>) {
  %v, %i = aten.sort %x {dim = 0 : i64, descending = false} : (tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %v, %i : tensor<f32>, tensor<i64>
}
