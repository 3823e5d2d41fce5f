// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// amax over integers starts from the smallest value.
// CHECK-LABEL: func @amax_int
// CHECK: %[[MIN:.+]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[MIN]] : i32)
// CHECK: arith.maxsi
func.func @amax_int(%x: tensor<4x5xi32>) -> tensor<4xi32> {
  %0 = aten.amax %x {dims = array<i64: 1>} : (tensor<4x5xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// amin over floats propagates NaN (minimumf) and leaves the sign of a zero
// minimum unordered (nsz), as eager's vectorized kernels do; ordering it
// cost two more dependent instructions a vector step.
// CHECK-LABEL: func @amin_f32
// CHECK: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[INF]] : f32)
// CHECK: arith.minimumf %{{.+}}, %{{.+}} fastmath<nsz> : f32
func.func @amin_f32(%x: tensor<4x5xf32>) -> tensor<4xf32> {
  %0 = aten.amin %x {dims = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @prod_keepdim
// CHECK: arith.mulf
// CHECK: tensor.expand_shape
func.func @prod_keepdim(%x: tensor<4x5xf32>) -> tensor<1x5xf32> {
  %0 = aten.prod %x {dims = array<i64: 0>, keepdim = true} : (tensor<4x5xf32>) -> tensor<1x5xf32>
  return %0 : tensor<1x5xf32>
}

// -----

// any: values convert to i1 (nonzero) and combine with ori.
// CHECK-LABEL: func @any
// CHECK: arith.cmpf une
// CHECK: arith.ori
func.func @any(%x: tensor<4x5xf32>) -> tensor<i1> {
  %0 = aten.any %x {dims = array<i64>} : (tensor<4x5xf32>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

// var in double whatever the input type (as eager): the mean, then the
// deviations' sum and their squares' sum, corrected for the mean's rounding:
// (sum(d^2) - sum(d)^2 / N) / (N - correction); std roots it, then the
// result rounds to f32 once. Each pass reads x as it is, widening each
// element, and its column's mean: no f64 or centred copy of x is made.
// CHECK-LABEL: func @std
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<4x5xf32>)
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: %[[MEAN:.+]] = linalg.generic
// CHECK: %[[N:.+]] = arith.constant 4.000000e+00 : f64
// CHECK: arith.divf %{{.+}}, %[[N]]
// CHECK-NOT: tensor<4x5xf64>
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%arg0, %[[MEAN]] : tensor<4x5xf32>, tensor<1x5xf64>)
// CHECK: arith.extf
// CHECK: arith.subf
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f64
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%arg0, %[[MEAN]] : tensor<4x5xf32>, tensor<1x5xf64>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f64
// CHECK: %[[DRIFT:.+]] = arith.mulf
// CHECK: arith.divf %[[DRIFT]], %{{.+}} : f64
// CHECK: arith.subf
// CHECK: %[[D:.+]] = arith.constant 3.000000e+00 : f64
// CHECK: arith.divf %{{.+}}, %[[D]]
// CHECK: math.sqrt %{{.+}} : f64
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @std(%x: tensor<4x5xf32>) -> tensor<5xf32> {
  %0 = aten.var %x {dims = array<i64: 0>, correction = 1.0 : f64, std = true} : (tensor<4x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// f16 var: the same double arithmetic, rounded to f16 once.
// CHECK-LABEL: func @var_f16
// CHECK: arith.extf %{{.+}} : f16 to f64
// CHECK-NOT: arith.addf %{{.+}} : f16
// CHECK: arith.truncf %{{.+}} : f64 to f16
func.func @var_f16(%x: tensor<4x5xf16>) -> tensor<4xf16> {
  %0 = aten.var %x {dims = array<i64: 1>, correction = 0.0 : f64, std = false} : (tensor<4x5xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// argmax in two passes that vectorize: the row's maximum (maximumf
// propagates NaN; nsz, a zero maximum's sign unordered, as in eager), then
// the least index holding it or a NaN (starting from the largest i64, which
// no row keeps).
// CHECK-LABEL: func @argmax
// CHECK: %[[BEST:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf %{{.+}}, %{{.+}} fastmath<nsz> : f32
// CHECK: %[[NONE:.+]] = arith.constant 9223372036854775807 : i64
// CHECK: %[[START:.+]] = linalg.fill ins(%[[NONE]] : i64)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %[[BEST]] : tensor<4x5xf32>, tensor<4xf32>) outs(%[[START]] : tensor<4xi64>)
// CHECK: %[[EQ:.+]] = arith.cmpf oeq
// CHECK: %[[NAN:.+]] = arith.cmpf uno
// CHECK: %[[HIT:.+]] = arith.ori %[[EQ]], %[[NAN]]
// CHECK: %[[I:.+]] = arith.index_cast
// CHECK: %[[CANDIDATE:.+]] = arith.select %[[HIT]], %[[I]], %[[NONE]]
// CHECK: arith.minsi %{{.+}}, %[[CANDIDATE]] : i64
func.func @argmax(%x: tensor<4x5xf32>) -> tensor<4xi64> {
  %0 = aten.arg_reduce %x {dim = 1 : i64, max = true} : (tensor<4x5xf32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// argmin over integers, in i64: minsi for the extreme, then equality alone.
// CHECK-LABEL: func @argmin_int
// CHECK: arith.constant 9223372036854775807 : i64
// CHECK: arith.minsi %{{.+}} : i64
// CHECK: arith.cmpi eq
// CHECK-NOT: arith.cmpf
// CHECK: arith.minsi %{{.+}} : i64
func.func @argmin_int(%x: tensor<3x7xi32>) -> tensor<7xi64> {
  %0 = aten.arg_reduce %x {dim = 0 : i64, max = false} : (tensor<3x7xi32>) -> tensor<7xi64>
  return %0 : tensor<7xi64>
}

// -----

// cumsum: a triangular reduction over an extra loop j <= i.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @cumsum
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.cmpi ule
func.func @cumsum(%x: tensor<2x6xi32>) -> tensor<2x6xi64> {
  %0 = aten.cumsum %x {dim = 1 : i64} : (tensor<2x6xi32>) -> tensor<2x6xi64>
  return %0 : tensor<2x6xi64>
}

// -----

// log_softmax: (x - max) - log(sum(exp(x - max))).
// CHECK-LABEL: func @log_softmax
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: math.log
// CHECK: arith.subf
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = aten.log_softmax %x {dim = 1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// cumprod: the same triangular reduction from 1 with multiplication.
// CHECK-LABEL: func @cumprod
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ONE]] : f32)
// CHECK: arith.mulf
// CHECK: arith.cmpi ule
func.func @cumprod(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = aten.cumsum %x {dim = 1 : i64, product = true} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// f16 accumulates in f32 (eager's acc_type) and rounds each running sum once.
// CHECK-LABEL: func @cumsum_f16
// CHECK: linalg.generic {{.+}} ins(%arg0 : tensor<6xf16>) outs(%{{.+}} : tensor<6xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.addf %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @cumsum_f16(%x: tensor<6xf16>) -> tensor<6xf16> {
  %0 = aten.cumsum %x {dim = 0 : i64, product = false} : (tensor<6xf16>) -> tensor<6xf16>
  return %0 : tensor<6xf16>
}

// -----

// A scanned dim over 128: one scf.forall over tiles of lines (here the 3
// rows in one tile), each tile a loop over the dim carrying the running
// slab (the dim cut to 1) in the accumulation type, updated in place by
// each slice and written into the tile's part of the result; no reduction
// loop.
// CHECK-LABEL: func @cumsum_long
// CHECK: scf.forall (%{{.+}}) in (1) shared_outs(%[[SHARED:.+]] = %{{.+}}) -> (tensor<3x300xf32>)
// CHECK: %[[TILE:.+]] = tensor.extract_slice %arg0[%[[AT:.+]], 0] [3, 300] [1, 1]
// CHECK: %[[OUT:.+]] = tensor.extract_slice %[[SHARED]][%[[AT]], 0] [3, 300] [1, 1]
// CHECK: %[[ZERO:.+]] = linalg.fill {{.+}} -> tensor<3x1xf32>
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[K:.+]] = %{{.+}} to %c300 step %{{.+}} iter_args(%[[CARRY:.+]] = %[[ZERO]], %[[ACC:.+]] = %[[OUT]])
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %[[TILE]][0, %[[K]]] [3, 1] [1, 1] : tensor<3x300xf16> to tensor<3x1xf16>
// CHECK: %[[NEXT:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} ins(%[[SLICE]] : tensor<3x1xf16>) outs(%[[CARRY]] : tensor<3x1xf32>)
// CHECK: arith.addf
// CHECK: %[[WRITTEN:.+]] = tensor.insert_slice %[[NEXT]] into %[[ACC]][0, %[[K]]] [3, 1] [1, 1]
// CHECK: scf.yield %[[NEXT]], %[[WRITTEN]]
// CHECK: tensor.parallel_insert_slice %[[LOOP]]#1 into %[[SHARED]][%[[AT]], 0] [3, 300] [1, 1]
// CHECK: arith.truncf
// CHECK-NOT: "reduction"
func.func @cumsum_long(%x: tensor<3x300xf16>) -> tensor<3x300xf16> {
  %0 = aten.cumsum %x {dim = 1 : i64} : (tensor<3x300xf16>) -> tensor<3x300xf16>
  return %0 : tensor<3x300xf16>
}
