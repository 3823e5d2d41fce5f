// RUN: kiln-opt %s -kiln-approximate-math | FileCheck %s

// Transcendentals become arithmetic: no math.erf/tanh/exp remain, so the
// loops around them vectorize instead of calling libm per element.
// CHECK-LABEL: func @transcendentals
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: return
func.func @transcendentals(%x: f32) -> (f32, f32, f32) {
  %0 = math.erf %x : f32
  %1 = math.tanh %x : f32
  %2 = math.exp %x : f32
  return %0, %1, %2 : f32, f32, f32
}
