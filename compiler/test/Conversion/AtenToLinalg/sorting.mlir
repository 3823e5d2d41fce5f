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
  %v, %i = aten.sort %x {descending = false} : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>)
  return %v, %i : tensor<2x5xf32>, tensor<2x5xi64>
}
