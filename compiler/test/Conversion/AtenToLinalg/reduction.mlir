// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// Float sums reassociate: vector partial sums, as eager's kernels take them.
// CHECK-LABEL: func @sum_keepdim
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:   arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: tensor.expand_shape {{.*}} : tensor<8xf32> into tensor<2x1x4xf32>
func.func @sum_keepdim(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = aten.sum %x {dims = array<i64: 1>, keepdim = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Integer sums add exactly, in order or not.
// CHECK-LABEL: func @sum_i64
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:   arith.addi %{{.+}}, %{{.+}} : i64
func.func @sum_i64(%x: tensor<3x5xi64>) -> tensor<3xi64> {
  %0 = aten.sum %x {dims = array<i64: 1>, keepdim = false} : (tensor<3x5xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// mean divides the sum by the number of reduced elements (3 * 4).
// CHECK-LABEL: func @mean_two_dims
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: arith.divf
func.func @mean_two_dims(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  %0 = aten.mean %x {dims = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Stable softmax over the last dim: one scf.forall over tiles of rows. Each
// tile takes its rows' maxima, writes exp(x - max) into its part of the
// result, sums them (reassociating, as eager's vectorized sum does) and
// divides them in place.
// CHECK-LABEL: func @softmax
// CHECK: scf.forall (%{{.+}}) in (1) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<2x8xf32>)
// CHECK: %[[ROWS:.+]] = tensor.extract_slice %arg0[%{{.+}}, 0] [2, 8] [1, 1]
// CHECK: %[[TILE:.+]] = tensor.extract_slice %[[OUT]][%{{.+}}, 0] [2, 8] [1, 1]
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<2x8xf32>)
// CHECK: arith.maximumf %{{.+}}, %{{.+}} fastmath<nsz> : f32
// CHECK: %[[EXP:.+]] = linalg.generic {{.*}} ins(%[[ROWS]], %[[MAX]] : tensor<2x8xf32>, tensor<2xf32>) outs(%[[TILE]] : tensor<2x8xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<2x8xf32>)
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: %[[Q:.+]] = linalg.generic {{.*}} ins(%[[SUM]], %[[MAX]] : tensor<2xf32>, tensor<2xf32>) outs(%[[EXP]] : tensor<2x8xf32>)
// CHECK: ^bb0(%[[S:.+]]: f32, %{{.+}}: f32, %[[E:.+]]: f32):
// CHECK: arith.divf %[[E]], %[[S]] : f32
// CHECK-NOT: arith.select
// CHECK: tensor.parallel_insert_slice %[[Q]] into %[[OUT]][%{{.+}}, 0] [2, 8] [1, 1]
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = aten.softmax %x {dim = 1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tiles of 64 rows of 128 (32 KiB of f32): the dim before the last counts
// 8 tiles, and the loop's one index is split row-major over [4, 3, 8].
// CHECK-LABEL: func @softmax_tiles
// CHECK: scf.forall (%[[T:.+]]) in (96)
// CHECK: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[R2:.+]] = arith.remui %[[T]], %[[C8]] : index
// CHECK: %[[Q2:.+]] = arith.divui %[[T]], %[[C8]] : index
// CHECK: %[[C64:.+]] = arith.constant 64 : index
// CHECK: %[[D2:.+]] = arith.muli %[[R2]], %[[C64]] : index
// CHECK: %[[C3:.+]] = arith.constant 3 : index
// CHECK: %[[D1:.+]] = arith.remui %[[Q2]], %[[C3]] : index
// CHECK: %[[D0:.+]] = arith.divui %[[Q2]], %[[C3]] : index
// CHECK: tensor.extract_slice %arg0[%[[D0]], %[[D1]], %[[D2]], 0] [1, 1, 64, 128] [1, 1, 1, 1] : tensor<4x3x512x128xf32> to tensor<1x1x64x128xf32>
// CHECK: tensor.empty() : tensor<1x1x64xf32>
func.func @softmax_tiles(%x: tensor<4x3x512x128xf32>) -> tensor<4x3x512x128xf32> {
  %0 = aten.softmax %x {dim = 3 : i64} : tensor<4x3x512x128xf32>
  return %0 : tensor<4x3x512x128xf32>
}

// -----

// With zero_masked_rows (_safe_softmax), the division also reads the row
// maximum and gives 0 where it is -inf.
// CHECK-LABEL: func @safe_softmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2xf32>, tensor<2xf32>) outs(%{{.+}} : tensor<2x8xf32>)
// CHECK: %[[Q:.+]] = arith.divf
// CHECK: %[[M:.+]] = arith.cmpf oeq, %{{.+}}, %{{.+}} : f32
// CHECK: arith.select %[[M]], %{{.+}}, %[[Q]] : f32
func.func @safe_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = aten.softmax %x {dim = 1 : i64, zero_masked_rows} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// log_softmax: the exponentials are only summed; the result is
// (x - max) - log(sum), written over them.
// CHECK-LABEL: func @log_softmax
// CHECK: scf.forall
// CHECK: math.exp
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %[[M:.+]]: f32, %[[S:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[C:.+]] = arith.subf %[[X]], %[[M]] : f32
// CHECK: %[[L:.+]] = math.log %[[S]] : f32
// CHECK: arith.subf %[[C]], %[[L]] : f32
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = aten.log_softmax %x {dim = 1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Over another dim than the last: whole-tensor reductions, the maximum
// kept as extent 1 to broadcast back.
// CHECK-LABEL: func @softmax_first_dim
// CHECK-NOT: scf.forall
// CHECK: arith.maximumf %{{.+}}, %{{.+}} fastmath<nsz> : f32
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax_first_dim(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = aten.softmax %x {dim = 0 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// f16 sums and means accumulate in f32 and round once, as eager does
// (2304 f16 values near 40 overflow f16 summed in f16).
// CHECK-LABEL: func @mean_f16
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: arith.constant 2.304000e+03 : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @mean_f16(%x: tensor<3x2304xf16>) -> tensor<3xf16> {
  %0 = aten.mean %x {dims = array<i64: 1>, keepdim = false} : (tensor<3x2304xf16>) -> tensor<3xf16>
  return %0 : tensor<3xf16>
}
