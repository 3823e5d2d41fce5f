// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// cummax along a dim over 128: a loop over the dim carrying the running
// value and its index; a NaN or a value >= a non-NaN best takes over (ties
// give the last index), written at k into both results.
// CHECK-LABEL: func @cummax_long
// CHECK-DAG: %[[LOWEST:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[V0:.+]] = linalg.fill ins(%[[LOWEST]] : f32) {{.+}} -> tensor<1x3xf32>
// CHECK-DAG: %[[I0:.+]] = linalg.fill {{.+}} -> tensor<1x3xi64>
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %c200 step %{{.+}} iter_args(%[[V:.+]] = %[[V0]], %[[I:.+]] = %[[I0]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %{{.+}}[%[[K]], 0] [1, 3] [1, 1]
// CHECK: %[[AT:.+]] = arith.index_cast %[[K]] : index to i64
// CHECK: linalg.generic {{.+}} ins(%[[SLICE]] : tensor<1x3xf32>) outs(%[[V]], %[[I]] : tensor<1x3xf32>, tensor<1x3xi64>)
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf uno
// CHECK: arith.select %{{.+}}, %[[AT]], %{{.+}} : i64
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
// CHECK-NOT: "reduction"
func.func @cummax_long(%x: tensor<200x3xf32>) -> (tensor<200x3xf32>, tensor<200x3xi64>) {
  %v, %i = aten.cummax %x {dim = 0 : i64} : (tensor<200x3xf32>) -> (tensor<200x3xf32>, tensor<200x3xi64>)
  return %v, %i : tensor<200x3xf32>, tensor<200x3xi64>
}

// -----

// logcumsumexp of f32 runs in f64: max + log1p(exp(min - max)), or the
// element itself when both are the same infinity.
// CHECK-LABEL: func @logcumsumexp_long
// CHECK: scf.for
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: math.exp
// CHECK: math.log1p
// CHECK: math.absf
// CHECK: arith.select
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @logcumsumexp_long(%x: tensor<2x300xf32>) -> tensor<2x300xf32> {
  %0 = aten.logcumsumexp %x {dim = 1 : i64} : (tensor<2x300xf32>) -> tensor<2x300xf32>
  return %0 : tensor<2x300xf32>
}

// -----

// logcumsumexp of complex parts is a loop at any length, scanning the real
// and imaginary parts together (two inputs, two carried values) in f64:
// the one of larger real part is max, exp(min - max) as a scale times
// (cos, sin), log1p's real part by log1p or log, its imaginary part
// atan2; the parts written back into the pairs.
// CHECK-LABEL: func @complex_logcumsumexp_short
// CHECK-SAME: (%[[Z:.+]]: tensor<3x4x2xf32>)
// CHECK-DAG: %[[RE:.+]] = tensor.extract_slice %[[Z]][0, 0, 0] [3, 4, 1] [1, 1, 1] : tensor<3x4x2xf32> to tensor<3x4xf32>
// CHECK-DAG: %[[IM:.+]] = tensor.extract_slice %[[Z]][0, 0, 1] [3, 4, 1] [1, 1, 1] : tensor<3x4x2xf32> to tensor<3x4xf32>
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<3x1xf32>, tensor<3x1xf32>) outs(%{{.+}}, %{{.+}} : tensor<3x1xf64>, tensor<3x1xf64>)
// CHECK: arith.cmpf olt
// CHECK: math.exp
// CHECK: math.cos
// CHECK: math.sin
// CHECK: math.log1p
// CHECK: math.log
// CHECK: math.atan2
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [3, 4, 1] [1, 1, 1] : tensor<3x4xf32> into tensor<3x4x2xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1] [3, 4, 1] [1, 1, 1] : tensor<3x4xf32> into tensor<3x4x2xf32>
func.func @complex_logcumsumexp_short(%z: tensor<3x4x2xf32>) -> tensor<3x4x2xf32> {
  %0 = aten.logcumsumexp %z {complex, dim = 1 : i64} : (tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

// Long scans of static tensors run a tile of lines at a time, the tiles one
// scf.forall: along the last dim, 4 lines a tile (lines 4 KiB apart share
// an L1 set); along another dim, up to 512 elements of the contiguous dim.
// CHECK-LABEL: func @cumsum_tiles_last
// CHECK: scf.forall (%[[T:.+]]) in (2) shared_outs(%[[SHARED:.+]] = %{{.+}}) -> (tensor<8x300xf32>)
// CHECK: %[[ROW:.+]] = arith.muli %[[T]], %c4
// CHECK: tensor.extract_slice %arg0[%[[ROW]], 0] [4, 300] [1, 1]
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}}[0, %{{.+}}] [4, 1] [1, 1]
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[SHARED]][%[[ROW]], 0] [4, 300] [1, 1]
func.func @cumsum_tiles_last(%x: tensor<8x300xf32>) -> tensor<8x300xf32> {
  %0 = aten.cumsum %x {dim = 1 : i64} : (tensor<8x300xf32>) -> tensor<8x300xf32>
  return %0 : tensor<8x300xf32>
}

// CHECK-LABEL: func @cumsum_tiles_outer
// CHECK: scf.forall (%[[T:.+]]) in (6) shared_outs(%[[SHARED:.+]] = %{{.+}}) -> (tensor<3x200x1024xf32>)
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[LANE:.+]] = arith.remui %[[T]], %[[C2]]
// CHECK-DAG: %[[BATCH:.+]] = arith.divui %[[T]], %[[C2]]
// CHECK: %[[COL:.+]] = arith.muli %[[LANE]], %c512
// CHECK: tensor.extract_slice %arg0[%[[BATCH]], 0, %[[COL]]] [1, 200, 512] [1, 1, 1]
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}}[0, %{{.+}}, 0] [1, 1, 512] [1, 1, 1]
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[SHARED]][%[[BATCH]], 0, %[[COL]]] [1, 200, 512] [1, 1, 1]
func.func @cumsum_tiles_outer(%x: tensor<3x200x1024xf32>) -> tensor<3x200x1024xf32> {
  %0 = aten.cumsum %x {dim = 1 : i64} : (tensor<3x200x1024xf32>) -> tensor<3x200x1024xf32>
  return %0 : tensor<3x200x1024xf32>
}
