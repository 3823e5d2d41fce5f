// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// CHECK-LABEL: func @slice
// CHECK: tensor.extract_slice %{{.+}}[1, 0] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
func.func @slice(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %0 = aten.slice %x {offsets = array<i64: 1, 0>, strides = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// cat: insert_slice at running offsets; operands convert to the result type.
// CHECK-LABEL: func @cat
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x5xf32>
// CHECK: %[[A:.+]] = tensor.insert_slice %{{.+}} into %[[E]][0, 0] [2, 2] [1, 1]
// CHECK: arith.sitofp
// CHECK: tensor.insert_slice %{{.+}} into %[[A]][0, 2] [2, 3] [1, 1]
func.func @cat(%a: tensor<2x2xf32>, %b: tensor<2x3xi64>) -> tensor<2x5xf32> {
  %0 = aten.cat %a, %b {dim = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xi64>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// index_select with a 2-d index (embedding): the index is read through a
// map over the middle loops, wrapped and clamped, then tensor.extract.
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @embedding
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.+}}]
// CHECK: arith.addi
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[I:.+]] = arith.index_cast
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: tensor.extract %{{.+}}[%[[I]], %[[J]]] : tensor<10x4xf32>
func.func @embedding(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = aten.index_select %w, %ids {dim = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @gather
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: tensor.extract %{{.+}}[%[[I0]], %{{.+}}] : tensor<2x8xf32>
func.func @gather(%x: tensor<2x8xf32>, %i: tensor<2x3xi32>) -> tensor<2x3xf32> {
  %0 = aten.gather %x, %i {dim = 1 : i64} : (tensor<2x8xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @arange
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f64
// CHECK: arith.fptosi %{{.+}} : f64 to i64
func.func @arange() -> tensor<5xi64> {
  %0 = aten.arange {start = 1.0 : f64, step = 2.0 : f64} : tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

// slice_scatter: insert_slice into self; src converts to self's type.
// CHECK-LABEL: func @insert_slice
// CHECK: arith.sitofp
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 1] [4, 3] [1, 2] : tensor<4x3xf32> into tensor<4x8xf32>
func.func @insert_slice(%x: tensor<4x8xf32>, %src: tensor<4x3xi32>) -> tensor<4x8xf32> {
  %0 = aten.insert_slice %x, %src {offsets = array<i64: 0, 1>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>, tensor<4x3xi32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// constant_pad_nd: fill with the value, insert the input.
// CHECK-LABEL: func @pad
// CHECK: %[[V:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.fill ins(%[[V]] : f32) outs(%{{.+}} : tensor<2x6xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 1] [2, 3] [1, 1]
func.func @pad(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = aten.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Negative amounts crop first (the row at the top, 2 columns at the right),
// then what is left is padded (a column at the left).
// CHECK-LABEL: func @pad_crop
// CHECK: %[[KEPT:.+]] = tensor.extract_slice %arg0[1, 0] [2, 3] [1, 1] : tensor<3x5xf32> to tensor<2x3xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: tensor.insert_slice %[[KEPT]] into %{{.+}}[0, 1] [2, 3] [1, 1]
func.func @pad_crop(%x: tensor<3x5xf32>) -> tensor<2x4xf32> {
  %0 = aten.pad %x {low = array<i64: -1, 1>, high = array<i64: 0, -2>, value = 0.0 : f64} : (tensor<3x5xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// index_put: self is the accumulator; a reduction over the K index entries
// selects (or, accumulating, adds) the matching rows.
// CHECK-DAG: #[[K:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[V:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func @index_put
// CHECK: linalg.generic {indexing_maps = [#[[K]], #[[V]], #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<5x3xf32>)
// CHECK: linalg.index 0
// CHECK: arith.cmpi eq
// CHECK: arith.addf
// CHECK: arith.select
func.func @index_put(%x: tensor<5x3xf32>, %i: tensor<2xi64>, %v: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %0 = aten.index_put %x, %i, %v {accumulate = true} : (tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// scatter along dim 1: index and src read with that dim replaced by the
// reduction loop k; matching positions combine (here: sum).
// CHECK-DAG: #[[R:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @scatter_add
// CHECK: linalg.generic {indexing_maps = [#[[R]], #[[R]], #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: linalg.index 1
// CHECK: arith.cmpi eq
// CHECK: arith.addf
func.func @scatter_add(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) -> tensor<3x5xf32> {
  %0 = aten.scatter %x, %i, %s {dim = 1 : i64, reduce = "sum"} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// A scatter dim longer than 16: a loop nest over the index writes each
// value at its wrapped target, combined with the element there; an index
// out of range writes the element back unchanged (at position 0).
// CHECK-LABEL: func @scatter_long_dim
// CHECK: %[[OUT:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<2x20xf32>
// CHECK: scf.for %[[R:.+]] = %{{.+}} to %c2 {{.+}} iter_args(%{{.+}} = %[[OUT]])
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %c7 {{.+}} iter_args(%[[T:.+]] = %{{.+}})
// CHECK: %[[RAW:.+]] = tensor.extract %{{.+}}[%[[R]], %[[K]]] : tensor<2x7xi64>
// CHECK: %[[SRC:.+]] = tensor.extract %{{.+}}[%[[R]], %[[K]]] : tensor<2x7xf32>
// CHECK: %[[IN:.+]] = arith.andi
// CHECK: %[[AT:.+]] = arith.index_cast
// CHECK: %[[OLD:.+]] = tensor.extract %[[T]][%[[R]], %[[AT]]]
// CHECK: %[[MAX:.+]] = arith.maximumf %[[OLD]], %[[SRC]]
// CHECK: %[[NEW:.+]] = arith.select %[[IN]], %[[MAX]], %[[OLD]]
// CHECK: tensor.insert %[[NEW]] into %[[T]][%[[R]], %[[AT]]]
// CHECK-NOT: linalg.generic
func.func @scatter_long_dim(%x: tensor<2x20xf32>, %i: tensor<2x7xi64>, %s: tensor<2x7xf32>) -> tensor<2x20xf32> {
  %0 = aten.scatter %x, %i, %s {dim = 1 : i64, reduce = "amax"} : (tensor<2x20xf32>, tensor<2x7xi64>, tensor<2x7xf32>) -> tensor<2x20xf32>
  return %0 : tensor<2x20xf32>
}

// -----

// A bool tensor padded with 2.0 is padded with True (non-zero), not the
// value's low bit.
// CHECK-LABEL: func @pad_bool
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: linalg.fill ins(%[[TRUE]] : i1)
func.func @pad_bool(%x: tensor<1x3xi1>) -> tensor<1x4xi1> {
  %0 = aten.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 1>, value = 2.0 : f64} : (tensor<1x3xi1>) -> tensor<1x4xi1>
  return %0 : tensor<1x4xi1>
}
