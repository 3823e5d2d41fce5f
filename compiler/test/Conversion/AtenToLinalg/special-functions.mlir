// RUN: kiln-opt %s -split-input-file -kiln-declare-libm-calls -kiln-convert-aten-to-linalg | FileCheck %s

// lgamma is libm's, declared once for the module; an f32 operand widens to
// f64 and the result rounds once.
// CHECK-LABEL: module
// CHECK: func.func private @lgamma(f64) -> f64
// CHECK-NOT: func.func private @lgamma
// CHECK-LABEL: func @lgamma_f32
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[W:.+]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[R:.+]] = func.call @lgamma(%[[W]]) : (f64) -> f64
// CHECK: %[[N:.+]] = arith.truncf %[[R]] : f64 to f32
// CHECK: linalg.yield %[[N]] : f32
func.func @lgamma_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "lgamma" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @lgamma_again(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "lgamma" %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// digamma: tan(pi x) from x's distance to the nearest integer (the
// reflection), ten branch-free shift steps past 10, then the series.
// CHECK-LABEL: func @digamma
// CHECK-NOT: func.call
// CHECK: math.roundeven
// CHECK: math.tan
// CHECK-COUNT-10: arith.cmpf olt, %{{.+}}, %cst{{.*}} : f64
// CHECK: math.log
// CHECK: math.copysign
func.func @digamma(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "digamma" %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// polygamma(3; x) = 3! zeta(4, x): Hurwitz's zeta sums its direct terms in
// an scf.while (as long as q needs), then the Euler-Maclaurin tail.
// CHECK-LABEL: func @polygamma_3
// CHECK: %[[SIX:.+]] = arith.constant 6.000000e+00 : f64
// CHECK: %[[FOUR:.+]] = arith.constant 4.000000e+00 : f64
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: } do {
// CHECK: math.powf
// CHECK: scf.yield
// CHECK: arith.mulf %[[SIX]], %{{.+}} : f64
func.func @polygamma_3(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "polygamma" %x {scalars = array<f64: 3.0>} : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// erfinv: four Newton steps, each with libm's erfc for the tail.
// CHECK: func.func private @erfc(f64) -> f64
// CHECK-LABEL: func @erfinv
// CHECK-COUNT-4: func.call @erfc
// CHECK-NOT: func.call
// CHECK: math.copysign
func.func @erfinv(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "erfinv" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// i0: the power series in x^2/4 below 20 (41 coefficients 1/k!^2, the
// last 1/40!^2 = 1.5e-96) and the asymptotic series in 1/|x| past it.
// CHECK-LABEL: func @i0
// CHECK: math.absf
// CHECK: arith.constant {{[0-9.]+}}E-96 : f64
// CHECK-COUNT-40: arith.mulf
// CHECK: arith.constant 2.000000e+01 : f64
// CHECK: math.exp
func.func @i0(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "i0" %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// gcd: Euclid's loop on |x| and |y| (scf.while until the divisor is 0);
// lcm multiplies an i16's quotient in i32, as C++ does, then truncates.
// CHECK-LABEL: func @gcd_lcm
// CHECK: math.absi
// CHECK: scf.while
// CHECK: arith.cmpi ne
// CHECK: scf.condition
// CHECK: arith.remsi
// CHECK: linalg.generic
// CHECK: scf.while
// CHECK: arith.divsi
// CHECK: arith.extsi %{{.+}} : i16 to i32
// CHECK: arith.muli %{{.+}} : i32
// CHECK: math.absi %{{.+}} : i32
// CHECK: arith.trunci %{{.+}} : i32 to i16
func.func @gcd_lcm(%x: tensor<4xi64>, %y: tensor<4xi64>, %a: tensor<4xi16>, %b: tensor<4xi16>) -> (tensor<4xi64>, tensor<4xi16>) {
  %0 = aten.pointwise "gcd" %x, %y : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = aten.pointwise "lcm" %a, %b : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  return %0, %1 : tensor<4xi64>, tensor<4xi16>
}

// -----

// frexp's mantissa from the bits: the exponent field replaced by 1022.
// CHECK-LABEL: func @frexp_mantissa
// CHECK: arith.bitcast %{{.+}} : f64 to i64
// CHECK: arith.constant 52 : i64
// CHECK: arith.shrui
// CHECK: arith.constant 2047 : i64
// CHECK: arith.constant -9218868437227405313 : i64
// CHECK: arith.constant 4602678819172646912 : i64
// CHECK: arith.bitcast %{{.+}} : i64 to f64
func.func @frexp_mantissa(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "frexp_mantissa" %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// igamma(a, x): libm's lgamma declared, f32 widened to f64, and Cephes'
// three kernels (P's series, Q's continued fraction, Q's small-x series)
// as three scf.while loops, each gated by its region; the result rounds
// once.
// CHECK: func.func private @lgamma(f64) -> f64
// CHECK-LABEL: func @igamma_f32
// CHECK: ^bb0(%[[A:.+]]: f32, %[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: arith.extf %[[A]] : f32 to f64
// CHECK: arith.extf %[[X]] : f32 to f64
// CHECK-COUNT-3: scf.while
// CHECK-NOT: scf.while
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @igamma_f32(%a: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "igamma" %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// igammac(a, x) in f64: the same kernels; no widening.
// CHECK-LABEL: func @igammac_f64
// CHECK-NOT: arith.extf
// CHECK-COUNT-3: scf.while
// CHECK-NOT: arith.truncf
// CHECK: linalg.yield %{{.+}} : f64
func.func @igammac_f64(%a: tensor<2x3xf64>, %x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = aten.pointwise "igammac" %a, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}
