// RUN: kiln-opt %s -split-input-file -kiln-declare-libm-calls -kiln-convert-aten-to-linalg | FileCheck %s

// Y1 is libm's, declared for the module; an f32 operand widens to f64 and
// the result rounds once.
// CHECK-LABEL: module
// CHECK: func.func private @y1(f64) -> f64
// CHECK-LABEL: func @bessel_y1
// CHECK: %[[W:.+]] = arith.extf %{{.+}} : f32 to f64
// CHECK: %[[R:.+]] = func.call @y1(%[[W]]) : (f64) -> f64
// CHECK: %[[N:.+]] = arith.truncf %[[R]] : f64 to f32
// CHECK: linalg.yield %[[N]] : f32
func.func @bessel_y1(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "bessel_y1" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// K0 scaled: the power series (with I0's), the trapezoidal rule's 41 nodes
// (one exp each) up to 30, the asymptotic series past it, chosen by x;
// NaN below 0 and inf at 0. No libm call.
// CHECK-LABEL: module
// CHECK-NOT: func.func private
// CHECK-LABEL: func @k0e
// CHECK: math.log
// CHECK-COUNT-41: math.exp
// CHECK: %[[THIRTY:.+]] = arith.constant 3.000000e+01 : f64
// CHECK: arith.cmpf ole, %{{.+}}, %[[THIRTY]] : f64
// CHECK: %[[SEAM:.+]] = arith.constant 1.500000e+00 : f64
// CHECK: arith.cmpf ole, %{{.+}}, %[[SEAM]] : f64
// CHECK: arith.constant 0x7FF8000000000000 : f64
// CHECK: arith.constant 0x7FF0000000000000 : f64
// CHECK: linalg.yield
func.func @k0e(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "k0e" %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// The spherical j0: sin(x) / x, a Taylor series below 1/2, 0 at +-inf.
// CHECK-LABEL: func @spherical_j0
// CHECK: math.sin
// CHECK: arith.divf
// CHECK: %[[HALF:.+]] = arith.constant 5.000000e-01 : f64
// CHECK: arith.cmpf olt, %{{.+}}, %[[HALF]] : f64
// CHECK: arith.constant 0x7FF0000000000000 : f64
func.func @spherical_j0(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "spherical_bessel_j0" %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// Airy's Ai: the Maclaurin series in x^3, K_1/3's quadrature (41 exps) and
// asymptotic series past x = 2, the oscillating series with sin and cos
// of zeta + pi/4 below -8, and 0 at +-inf.
// CHECK-LABEL: func @airy_ai
// CHECK-NOT: func.call
// CHECK-COUNT-41: math.exp
// CHECK: math.sin
// CHECK: math.cos
// CHECK: %[[TWO:.+]] = arith.constant 2.000000e+00 : f64
// CHECK: arith.cmpf ole, %{{.+}}, %[[TWO]] : f64
// CHECK: %[[EIGHT:.+]] = arith.constant -8.000000e+00 : f64
// CHECK: arith.cmpf olt, %{{.+}}, %[[EIGHT]] : f64
// CHECK: arith.constant 0x7FF0000000000000 : f64
func.func @airy_ai(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "airy_ai" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
