// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s
// Ops whose row count the run computes: a counting loop, a tensor.empty of
// that many rows, then a loop that writes the selected rows in order.

// CHECK-LABEL: func @nonzero
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<4x5xf32> into tensor<20xf32>
// CHECK: %[[COUNT:.+]] = scf.for %[[I:[^ ]+]] = %c0 to %c20 step %c1 iter_args(%{{.+}} = %c0) -> (index)
// CHECK:   %[[V:.+]] = tensor.extract %[[FLAT]][%[[I]]]
// CHECK:   %[[NZ:.+]] = arith.cmpf une, %[[V]], %{{.+}} : f32
// CHECK:   arith.select %[[NZ]], %c1, %c0 : index
// CHECK: %[[INIT:.+]] = tensor.empty(%[[COUNT]]) : tensor<?x2xi64>
// CHECK: scf.for %[[J:[^ ]+]] = %{{.+}} iter_args(%[[T:[^ ]+]] = %[[INIT]], %[[ROW:[^ ]+]] = %{{.+}}) -> (tensor<?x2xi64>, index)
// CHECK:   scf.if %{{.+}} -> (tensor<?x2xi64>, index)
// Row-major coordinates: j / 5, then j % 5.
// CHECK:     %[[R:.+]] = arith.divui %[[J]], %c5
// CHECK-NOT: arith.remui %[[R]]
// CHECK:     tensor.insert %{{.+}} into %[[T]][%[[ROW]], %c0{{.*}}]
// CHECK-NOT: arith.divui
// CHECK:     arith.remui %[[J]], %c5
// CHECK:     tensor.insert %{{.+}} into %{{.+}}[%[[ROW]], %c1{{.*}}]
// CHECK:     arith.addi %[[ROW]], %c1
func.func @nonzero(%x: tensor<4x5xf32>) -> tensor<?x2xi64> {
  %0 = aten.nonzero %x : (tensor<4x5xf32>) -> tensor<?x2xi64>
  return %0 : tensor<?x2xi64>
}

// -----

// An integer input compares with cmpi; a 0-d one is one position.
// CHECK-LABEL: func @nonzero_0d_int
// CHECK: tensor.expand_shape %arg0 [] output_shape [1] : tensor<i32> into tensor<1xi32>
// CHECK: arith.cmpi ne
// CHECK: tensor.empty(%{{.+}}) : tensor<?x0xi64>
func.func @nonzero_0d_int(%x: tensor<i32>) -> tensor<?x0xi64> {
  %0 = aten.nonzero %x : (tensor<i32>) -> tensor<?x0xi64>
  return %0 : tensor<?x0xi64>
}

// -----

// x[mask] over the leading two dims: self as (12, 3) rows, the mask as 12
// positions; each selected row is one slice copy; the rows keep self's
// trailing dim.
// CHECK-LABEL: func @boolean_mask
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2]] : tensor<3x4x3xf32> into tensor<36xf32>
// CHECK: %[[ROWS:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [12, 3] : tensor<36xf32> into tensor<12x3xf32>
// CHECK: %[[MASK:.+]] = tensor.collapse_shape %arg1 {{\[}}[0, 1]] : tensor<3x4xi1> into tensor<12xi1>
// CHECK: %[[COUNT:.+]] = scf.for
// CHECK:   tensor.extract %[[MASK]]
// CHECK: %[[INIT:.+]] = tensor.empty(%[[COUNT]]) : tensor<?x3xf32>
// CHECK: scf.for %[[I:[^ ]+]] = %{{.+}} iter_args(%[[T:[^ ]+]] = %[[INIT]], %[[ROW:[^ ]+]] = %{{.+}})
// CHECK:   %[[PIECE:.+]] = tensor.extract_slice %[[ROWS]][%[[I]], 0] [1, 3] [1, 1]
// CHECK:   tensor.insert_slice %[[PIECE]] into %[[T]][%[[ROW]], 0] [1, 3] [1, 1]
func.func @boolean_mask(%x: tensor<3x4x3xf32>, %m: tensor<3x4xi1>) -> tensor<?x3xf32> {
  %0 = aten.boolean_mask %x, %m : (tensor<3x4x3xf32>, tensor<3x4xi1>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// A full-rank mask selects elements: rows of width 1, reshaped to 1-D.
// CHECK-LABEL: func @boolean_mask_elements
// CHECK: tensor.expand_shape %arg0 {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xi64> into tensor<4x1xi64>
// CHECK: scf.for
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
func.func @boolean_mask_elements(%x: tensor<4xi64>, %m: tensor<4xi1>) -> tensor<?xi64> {
  %0 = aten.boolean_mask %x, %m : (tensor<4xi64>, tensor<4xi1>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// repeat_interleave with a dynamic length: the repeats summed (each cut to
// [0, capacity + 1], the sum saturating there), a zero-filled tensor of
// that many elements, then each position's run of its index.
// CHECK-LABEL: func @repeat_interleave
// CHECK: %[[LIMIT:.+]] = arith.constant 9 : index
// CHECK: %[[SUM:.+]] = scf.for %[[J:[^ ]+]] = %c0 to %c3 step %c1 iter_args(%[[ACC:.+]] = %c0) -> (index)
// CHECK:   %[[R:.+]] = tensor.extract %arg0[%[[J]]] : tensor<3xi32>
// CHECK:   %[[POS:.+]] = arith.maxsi %[[R]], %{{.+}} : i32
// CHECK:   %[[STEPS:.+]] = arith.index_cast %[[POS]] : i32 to index
// CHECK:   %[[CUT:.+]] = arith.minui %[[STEPS]], %[[LIMIT]]
// CHECK:   %[[ADDED:.+]] = arith.addi %[[ACC]], %[[CUT]]
// CHECK:   arith.minui %[[ADDED]], %[[LIMIT]]
// CHECK: %[[INIT:.+]] = tensor.empty(%[[SUM]]) : tensor<?xi32>
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%[[INIT]] : tensor<?xi32>)
// CHECK: scf.for %[[K:[^ ]+]] = %c0 to %c3 step %c1 iter_args(%[[T:.+]] = %[[ZERO]], %[[START:.+]] = %c0) -> (tensor<?xi32>, index)
// CHECK:   %[[STOP:.+]] = arith.minui %{{.+}}, %[[SUM]]
// CHECK:   %[[VALUE:.+]] = arith.index_cast %[[K]] : index to i32
// CHECK:   scf.for %[[I:[^ ]+]] = %[[START]] to %[[STOP]] step %c1 iter_args(%[[U:.+]] = %[[T]])
// CHECK:     tensor.insert %[[VALUE]] into %[[U]][%[[I]]]
// CHECK:   scf.yield %{{.+}}, %[[STOP]]
func.func @repeat_interleave(%r: tensor<3xi32>) -> tensor<?xi32> {
  %0 = aten.repeat_interleave %r {capacity = 8 : i64} : (tensor<3xi32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// A static length (output_size): no sum; runs stop at the length, and
// positions past the repeats' sum keep 0.
// CHECK-LABEL: func @repeat_interleave_static
// CHECK-NOT: tensor.empty(
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<5xi64>
// CHECK: linalg.fill ins(%{{.+}} : i64) outs(%[[INIT]] : tensor<5xi64>)
// CHECK: scf.for
// CHECK:   arith.minui %{{.+}}, %c5
func.func @repeat_interleave_static(%r: tensor<2xi64>) -> tensor<5xi64> {
  %0 = aten.repeat_interleave %r {capacity = 5 : i64} : (tensor<2xi64>) -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

// bincount: the length is max(minlength, max(x) + 1), each element cut at
// the capacity first (so the length stops at capacity + 1 = 9, which the
// agent refuses, and nothing overflows); a zero-filled tensor of that
// length; then, in x's order, each element in [0, length) adds its weight
// to its bin (a negative one counts nowhere).
// CHECK-LABEL: func @bincount
// CHECK: %[[MIN:.+]] = arith.constant 2 : i64
// CHECK: %[[LEN:.+]] = scf.for %[[I:[^ ]+]] = %c0 to %c5 step %c1 iter_args(%[[LONGEST:.+]] = %[[MIN]]) -> (i64)
// CHECK:   %[[X:.+]] = arith.extsi %{{.+}} : i32 to i64
// CHECK:   %[[CUT:.+]] = arith.minsi %[[X]], %c8_i64
// CHECK:   %[[PAST:.+]] = arith.addi %[[CUT]], %c1_i64
// CHECK:   arith.maxsi %[[LONGEST]], %[[PAST]]
// CHECK: %[[N:.+]] = arith.index_cast %[[LEN]] : i64 to index
// CHECK: %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[INIT]] : tensor<?xf32>)
// CHECK: scf.for %[[J:[^ ]+]] = %c0 to %c5 step %c1 iter_args(%[[BINS:.+]] = %[[ZERO]]) -> (tensor<?xf32>)
// CHECK:   %[[V:.+]] = arith.extsi
// CHECK:   %[[GE:.+]] = arith.cmpi sge, %[[V]], %c0_i64
// CHECK:   %[[LT:.+]] = arith.cmpi slt, %[[V]], %[[LEN]]
// CHECK:   %[[IN:.+]] = arith.andi %[[GE]], %[[LT]]
// CHECK:   scf.if %[[IN]] -> (tensor<?xf32>)
// CHECK:     %[[OLD:.+]] = tensor.extract %[[BINS]]
// CHECK:     %[[W:.+]] = tensor.extract %arg1[%[[J]]] : tensor<5xf32>
// CHECK:     %[[SUM:.+]] = arith.addf %[[OLD]], %[[W]] : f32
// CHECK:     tensor.insert %[[SUM]] into %[[BINS]]
// CHECK:   } else {
// CHECK:     scf.yield %[[BINS]]
func.func @bincount(%x: tensor<5xi32>, %w: tensor<5xf32>) -> tensor<?xf32> {
  %0 = aten.bincount %x, %w {capacity = 8 : i64, minlength = 2 : i64} : (tensor<5xi32>, tensor<5xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Without weights: i64 counts, each element adding 1.
// CHECK-LABEL: func @bincount_counts
// CHECK: linalg.fill ins(%{{.+}} : i64) outs(%{{.+}} : tensor<?xi64>)
// CHECK: arith.addi %{{.+}}, %c1_i64{{.*}} : i64
// CHECK: tensor.insert
func.func @bincount_counts(%x: tensor<4xi64>) -> tensor<?xi64> {
  %0 = aten.bincount %x {capacity = 6 : i64, minlength = 0 : i64} : (tensor<4xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
