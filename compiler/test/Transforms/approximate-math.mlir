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

// f32 sin, cos, atan, atan2, asin and acos compute in f64 and round once
// (MLIR's f32 approximations of them lose accuracy): sin reduces |x| mod
// 4 quarter turns with 2/pi's nine 24-bit chunks (eight floors: six
// chunks whose product can pass 4, the nearest quarter turn and the
// quadrant), on scalars and vectors alike; f64 sin is left to libm.
// CHECK-LABEL: func @trigonometry
// CHECK: %[[W:.+]] = arith.extf %{{.+}} : f32 to f64
// CHECK: math.absf %[[W]] : f64
// CHECK-COUNT-8: math.floor %{{.+}} : f64
// CHECK: math.copysign
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: arith.extf %{{.+}} : vector<8xf32> to vector<8xf64>
// CHECK-COUNT-8: math.floor %{{.+}} : vector<8xf64>
// CHECK: arith.truncf %{{.+}} : vector<8xf64> to vector<8xf32>
// CHECK-NOT: math.atan2
// CHECK: %[[LIBM:.+]] = math.sin %{{.+}} : f64
// CHECK: return
func.func @trigonometry(%x: f32, %y: f32, %v: vector<8xf32>, %d: f64) -> (f32, f32, vector<8xf32>, f64) {
  %0 = math.sin %x : f32
  %1 = math.atan2 %y, %x : f32
  %2 = math.cos %v : vector<8xf32>
  %3 = math.sin %d : f64
  return %0, %1, %2, %3 : f32, f32, vector<8xf32>, f64
}
