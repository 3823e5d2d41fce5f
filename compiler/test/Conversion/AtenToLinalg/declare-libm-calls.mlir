// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-declare-libm-calls | FileCheck %s

// Each libm function the module's pointwise ops call, once; erfc serves
// erfc, erfcx, erfinv and ndtri alike.
// CHECK-LABEL: module
// CHECK-DAG: func.func private @erfc(f64) -> f64
// CHECK-DAG: func.func private @lgamma(f64) -> f64
// CHECK-NOT: func.func private
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = aten.pointwise "erfinv" %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = aten.pointwise "ndtri" %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = aten.pointwise "lgamma" %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = aten.pointwise "erfc" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// No call, no declaration.
// CHECK-LABEL: module
// CHECK-NOT: func.func private
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "digamma" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A declaration already there is kept.
// CHECK-LABEL: module
// CHECK: func.func private @erfc(f64) -> f64
// CHECK-NOT: func.func private @erfc
func.func private @erfc(f64) -> f64
func.func @h(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "erfc" %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// A function of that name that is not libm's is refused, by name.
// expected-error @+1 {{the symbol 'lgamma' is libm's double lgamma(double), which the pointwise lowering calls}}
func.func @lgamma(%x: f32) -> f32 {
  return %x : f32
}
func.func @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "lgamma" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
