// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// Chebyshev's T in f32 (the operands' type, as eager's): n truncates to
// i64 (NaN and infinities read as INT64_MIN), the trigonometric form
// cos(n acos x), then the recurrence in an scf.while that stops at k > n or
// a NaN q.
// CHECK-LABEL: func @chebyshev_t
// CHECK: ^bb0(%[[X:.+]]: f32, %[[N:.+]]: f32, %{{.+}}: f32):
// CHECK-NOT: arith.extf
// CHECK: %[[INRANGE:.+]] = arith.cmpf olt, %{{.+}}, %{{.+}} : f32
// CHECK: %[[SAFE:.+]] = arith.select %[[INRANGE]], %[[N]], %{{.+}} : f32
// CHECK: %[[TRUNC:.+]] = arith.fptosi %[[SAFE]] : f32 to i64
// CHECK: %[[DEGREE:.+]] = arith.select %[[INRANGE]], %[[TRUNC]], %c-9223372036854775808_i64 : i64
// CHECK: math.acos %[[X]] : f32
// CHECK: math.cos
// CHECK: scf.while (%[[K:.+]] = %c2_i64, %{{.+}} = %{{.+}}, %[[Q:.+]] = %[[X]]) : (i64, f32, f32)
// CHECK: arith.cmpi sle, %[[K]], %{{.+}} : i64
// CHECK: arith.cmpf uno, %[[Q]], %[[Q]] : f32
// CHECK: scf.condition
// CHECK: } do {
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: scf.yield
// CHECK: linalg.yield %{{.+}} : f32
func.func @chebyshev_t(%x: tensor<4xf32>, %n: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "chebyshev_polynomial_t" %x, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Hermite's H steps k by 2 with no stop at NaN, and is NaN above degree
// 512 in f64 (128 in f32).
// CHECK-LABEL: func @hermite_h
// CHECK: %[[LIMIT:.+]] = arith.constant 512 : i64
// CHECK: arith.cmpi sgt, %{{.+}}, %[[LIMIT]] : i64
// CHECK: scf.while
// CHECK-NOT: arith.cmpf uno
// CHECK: scf.condition
// CHECK: %[[TWO:.+]] = arith.constant 2 : i64
// CHECK: arith.addi %{{.+}}, %[[TWO]] : i64
// CHECK: scf.yield
// CHECK-LABEL: func @hermite_he_f32
// CHECK: arith.constant 128 : i64
func.func @hermite_h(%x: tensor<4xf64>, %n: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "hermite_polynomial_h" %x, %n : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
func.func @hermite_he_f32(%x: tensor<4xf32>, %n: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "hermite_polynomial_he" %x, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Legendre's P: the recurrence divides by k + 1, and an element needing
// more than 2^22 steps gives NaN.
// CHECK-LABEL: func @legendre_p
// CHECK: %[[CAP:.+]] = arith.constant 4194304 : i64
// CHECK: arith.cmpi sgt, %{{.+}}, %[[CAP]] : i64
// CHECK: scf.while
// CHECK: } do {
// CHECK: arith.divf
// CHECK: scf.yield
// CHECK: arith.constant 0x7FF8000000000000 : f64
func.func @legendre_p(%x: tensor<4xf64>, %n: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "legendre_polynomial_p" %x, %n : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
