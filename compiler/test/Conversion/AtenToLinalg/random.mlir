// RUN: kiln-opt %s -split-input-file -kiln-declare-libm-calls -kiln-convert-aten-to-linalg | FileCheck %s

// random_uniform: Philox4x32-10 on i64 words. The counter is (index low,
// index high, stream, draw), the key the seed's halves; each round
// multiplies by Random123's constants and the key grows by its Weyl
// increments. A 24-bit result is word 0's top 24 bits times 2^-24, in f32.
// CHECK-LABEL: func @uniform_f32
// CHECK: linalg.generic
// CHECK: ^bb0(%[[I:.+]]: i64, %[[S:.+]]: i64, %{{.+}}: f32):
// CHECK: arith.constant 7 : i64
// CHECK: arith.constant 2 : i64
// CHECK: arith.muli %c3528531795_i64
// CHECK: arith.muli %c3449720151_i64
// CHECK: arith.constant 2654435769 : i64
// CHECK: arith.constant 3144134277 : i64
// CHECK-COUNT-18: arith.muli
// CHECK-NOT: arith.muli
// CHECK: %[[EIGHT:.+]] = arith.constant 8 : i64
// CHECK: %[[TOP:.+]] = arith.shrui %{{.+}}, %[[EIGHT]] : i64
// CHECK: %[[F:.+]] = arith.sitofp %[[TOP]] : i64 to f32
// CHECK: %[[SCALE:.+]] = arith.constant 5.96046448E-8 : f32
// CHECK: %[[U:.+]] = arith.mulf %[[F]], %[[SCALE]] : f32
// CHECK: linalg.yield %[[U]] : f32
func.func @uniform_f32(%i: tensor<2x3xi64>, %seed: tensor<i64>) -> tensor<2x3xf32> {
  %0 = aten.pointwise "random_uniform" %i, %seed {scalars = array<f64: 7.0, 2.0, 24.0>} : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// random_normal in f64 (53 bits): Box-Muller over two 53-bit numbers.
// CHECK-LABEL: func @normal_f64
// CHECK: linalg.generic
// CHECK: arith.sitofp %{{.+}} : i64 to f64
// CHECK: math.log %{{.+}} : f64
// CHECK: math.sqrt %{{.+}} : f64
// CHECK: math.cos %{{.+}} : f64
// CHECK: linalg.yield %{{.+}} : f64
func.func @normal_f64(%i: tensor<4xi64>, %seed: tensor<i64>) -> tensor<4xf64> {
  %0 = aten.pointwise "random_normal" %i, %seed {scalars = array<f64: 0.0, 0.0, 53.0>} : (tensor<4xi64>, tensor<i64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// random_bits: the first two words as 63 non-negative bits.
// CHECK-LABEL: func @bits
// CHECK: linalg.generic
// CHECK: %[[HI:.+]] = arith.shli %{{.+}}, %{{.+}} : i64
// CHECK: %[[BOTH:.+]] = arith.ori %[[HI]], %{{.+}} : i64
// CHECK: %[[B:.+]] = arith.shrui %[[BOTH]], %{{.+}} : i64
// CHECK: linalg.yield %[[B]] : i64
func.func @bits(%i: tensor<4xi64>, %seed: tensor<i64>) -> tensor<4xi64> {
  %0 = aten.pointwise "random_bits" %i, %seed {scalars = array<f64: 1.0, 0.0>} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// random_poisson: the rate's bits read back as f64, then one scf.while per
// element whose draw number is Philox's last counter word (two 53-bit
// uniforms per draw): the product method below rate 10, PTRS from 10 with
// libm's lgamma in its acceptance test.
// CHECK-LABEL: func @poisson
// CHECK: linalg.generic
// CHECK: ^bb0(%[[I:.+]]: i64, %[[S:.+]]: i64, %[[B:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[RATE:.+]] = arith.bitcast %[[B]] : i64 to f64
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: } do {
// CHECK-COUNT-20: arith.muli
// CHECK: math.floor
// CHECK: func.call @lgamma
// CHECK: scf.yield
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @poisson(%i: tensor<4xi64>, %seed: tensor<i64>, %rate: tensor<4xi64>) -> tensor<4xf32> {
  %0 = aten.pointwise "random_poisson" %i, %seed, %rate {scalars = array<f64: 3.0>} : (tensor<4xi64>, tensor<i64>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
