// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// Unary math from the pointwise table: one broadcasting generic, the body
// from the table (sqrt of an integer tensor converts to the float result).
// CHECK-LABEL: func @sqrt_int
// CHECK: linalg.generic
// CHECK: %[[F:.+]] = arith.sitofp %{{.+}} : i64 to f32
// CHECK: math.sqrt %[[F]] : f32
func.func @sqrt_int(%x: tensor<4xi64>) -> tensor<4xf32> {
  %0 = aten.pointwise "sqrt" %x : (tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Comparisons compute in the promoted operand type: a 0-d f32 operand
// raises an integer tensor to float; the result is i1.
// CHECK-LABEL: func @lt_promotes
// CHECK: ^bb0(%[[A:.+]]: i32, %[[B:.+]]: f32, %{{.+}}: i1):
// CHECK: %[[AF:.+]] = arith.sitofp %[[A]] : i32 to f32
// CHECK: arith.cmpf olt, %[[AF]], %[[B]] : f32
func.func @lt_promotes(%x: tensor<2x3xi32>, %s: tensor<f32>) -> tensor<2x3xi1> {
  %0 = aten.pointwise "lt" %x, %s : (tensor<2x3xi32>, tensor<f32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// A dimensioned operand wins over a 0-d one of the same category: i64 0-d
// against an i32 tensor compares in i32 (signed).
// CHECK-LABEL: func @eq_zero_dim
// CHECK: arith.trunci %{{.+}} : i64 to i32
// CHECK: arith.cmpi eq
func.func @eq_zero_dim(%x: tensor<3xi32>, %s: tensor<i64>) -> tensor<3xi1> {
  %0 = aten.pointwise "eq" %x, %s : (tensor<3xi32>, tensor<i64>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// where: the condition converts to i1, the branches to the result type.
// CHECK-LABEL: func @where
// CHECK: ^bb0(%[[C:.+]]: i1, %[[A:.+]]: f32, %[[B:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[BF:.+]] = arith.sitofp %[[B]] : i64 to f32
// CHECK: arith.select %[[C]], %[[A]], %[[BF]] : f32
func.func @where(%c: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<i64>) -> tensor<2x3xf32> {
  %0 = aten.pointwise "where" %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// clamp: NaN bounds are absent; float bounds use NaN-propagating max/min.
// CHECK-LABEL: func @clamp_min_only
// CHECK: arith.maximumf
// CHECK-NOT: arith.minimumf
// CHECK: linalg.yield
func.func @clamp_min_only(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "clamp" %x {scalars = array<f64: 0.0, 0x7FF8000000000000>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// f16 computes in f32 and rounds once.
// CHECK-LABEL: func @hardswish_f16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @hardswish_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = aten.pointwise "hardswish" %x : (tensor<8xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// Integer division never traps: 0 and -1 divisors are replaced.
// CHECK-LABEL: func @div_trunc_int
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: arith.divsi
func.func @div_trunc_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = aten.pointwise "div_trunc" %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Inference batch norm, as PyTorch's CPU kernel computes it: per channel
// alpha = w / sqrt(v + eps) and beta = b - m * alpha over the (C, 1, 1)
// statistics (one square root per channel, not per element), then
// x * alpha + beta with the statistics broadcast.
// CHECK-DAG: #[[STAT:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func @batch_norm
// CHECK: %[[ALPHA:.+]] = linalg.generic {{.*}} ins(%arg2, %arg3 : tensor<4x1x1xf32>, tensor<4x1x1xf32>) outs(%{{.+}} : tensor<4x1x1xf32>)
// CHECK:   math.sqrt
// CHECK:   arith.divf
// CHECK: %[[BETA:.+]] = linalg.generic {{.*}} ins(%arg1, %arg4, %[[ALPHA]] : tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) outs(%{{.+}} : tensor<4x1x1xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[STAT]], #[[STAT]], #{{.+}}], {{.*}} ins(%arg0, %[[ALPHA]], %[[BETA]] :
// CHECK-NOT: math.sqrt
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @batch_norm(%x: tensor<2x4x5x5xf32>, %m: tensor<4x1x1xf32>, %v: tensor<4x1x1xf32>,
                      %w: tensor<4x1x1xf32>, %b: tensor<4x1x1xf32>) -> tensor<2x4x5x5xf32> {
  %0 = aten.pointwise "batch_norm" %x, %m, %v, %w, %b {scalars = array<f64: 1.0e-05>}
      : (tensor<2x4x5x5xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) -> tensor<2x4x5x5xf32>
  return %0 : tensor<2x4x5x5xf32>
}

// -----

// asin stays math.asin: kiln-approximate-math computes f32's in f64
// (accurate near +-1), and libm takes f64's.
// CHECK-LABEL: func @asin
// CHECK: math.asin %{{.+}} : f32
func.func @asin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "asin" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer pow is repeated squaring in the integer type (wrapping as eager's
// does), unrolled over the exponent's bits 0..6 for i8, branch-free; a
// negative exponent selects 1, +-1 or 0 from the base.
// CHECK-LABEL: func @pow_i8
// CHECK: linalg.generic
// CHECK-NOT: math.powf
// CHECK-COUNT-7: arith.shrsi
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK-NOT: arith.sitofp
func.func @pow_i8(%x: tensor<4xi8>, %e: tensor<4xi8>) -> tensor<4xi8> {
  %0 = aten.pointwise "pow" %x, %e : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// atan2 keeps C's answers at the origin (the sign of y; pi for x = -0), which
// the polynomial approximation of math.atan2 does not.
// CHECK-LABEL: func @atan2_origin
// CHECK: arith.cmpf oeq
// CHECK: math.copysign
// CHECK: %[[A:.+]] = math.atan2
// CHECK: arith.select %{{.+}}, %{{.+}}, %[[A]]
func.func @atan2_origin(%y: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "atan2" %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// fmax/fmin pass over a NaN operand (maxnumf/minnumf), on integers they are
// maximum/minimum; copysign is math.copysign (-0.0 and NaN signs kept).
// CHECK-LABEL: func @fmax_fmin_copysign
// CHECK: arith.maxnumf %{{.+}}, %{{.+}} : f32
// CHECK: arith.minsi %{{.+}}, %{{.+}} : i32
// CHECK: math.copysign %{{.+}}, %{{.+}} : f64
func.func @fmax_fmin_copysign(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>,
                              %x: tensor<4xf64>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf64>) {
  %0 = aten.pointwise "fmax" %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = aten.pointwise "fmin" %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = aten.pointwise "copysign" %x, %y : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi32>, tensor<4xf64>
}

// -----

// signbit reads the sign bit itself (a comparison with 0 misses -0.0 and
// -NaN): the float (bf16 widened to f32, which keeps the sign) bitcast to
// an integer of its width, compared with 0.
// CHECK-LABEL: func @signbit_bf16
// CHECK: %[[WIDE:.+]] = arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[BITS:.+]] = arith.bitcast %[[WIDE]] : f32 to i32
// CHECK: arith.cmpi slt, %[[BITS]], %{{.+}} : i32
func.func @signbit_bf16(%x: tensor<4xbf16>) -> tensor<4xi1> {
  %0 = aten.pointwise "signbit" %x : (tensor<4xbf16>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// hypot as big * sqrt(1 + (small / big)^2) (no square overflows), 0 for two
// zeros, +inf where either operand is infinite (even beside a NaN).
// CHECK-LABEL: func @hypot
// CHECK: %[[BIG:.+]] = arith.maximumf
// CHECK: %[[SMALL:.+]] = arith.minimumf
// CHECK: arith.divf %[[SMALL]], %[[BIG]]
// CHECK: math.sqrt
// CHECK: arith.select
// CHECK: arith.select
func.func @hypot(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.pointwise "hypot" %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Shifts by an amount outside [0, bits) are defined as PyTorch defines
// them: a left shift gives 0 (the amount is zeroed first, so that shli
// never sees a poison amount), a right shift gives the sign (bits - 1).
// CHECK-LABEL: func @shift_left
// CHECK: ^bb0(%[[X:.+]]: i8, %[[Y:.+]]: i8, %{{.+}}: i8):
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[Y]], %{{.+}} : i8
// CHECK: %[[BITS:.+]] = arith.constant 8 : i8
// CHECK: %[[WIDE:.+]] = arith.cmpi sge, %[[Y]], %[[BITS]] : i8
// CHECK: %[[OUT:.+]] = arith.ori %[[NEG]], %[[WIDE]] : i1
// CHECK: %[[SAFE:.+]] = arith.select %[[OUT]], %{{.+}}, %[[Y]] : i8
// CHECK: %[[SHL:.+]] = arith.shli %[[X]], %[[SAFE]] : i8
// CHECK: %[[R:.+]] = arith.select %[[OUT]], %{{.+}}, %[[SHL]] : i8
// CHECK: linalg.yield %[[R]] : i8
func.func @shift_left(%x: tensor<4xi8>, %y: tensor<4xi8>) -> tensor<4xi8> {
  %0 = aten.pointwise "bitwise_left_shift" %x, %y : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CHECK-LABEL: func @shift_right
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK: %[[OUT:.+]] = arith.ori %{{.+}}, %{{.+}} : i1
// CHECK: %[[SIGN:.+]] = arith.constant 31 : i32
// CHECK: %[[AMOUNT:.+]] = arith.select %[[OUT]], %[[SIGN]], %[[Y]] : i32
// CHECK: %[[R:.+]] = arith.shrsi %[[X]], %[[AMOUNT]] : i32
// CHECK: linalg.yield %[[R]] : i32
func.func @shift_right(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = aten.pointwise "bitwise_right_shift" %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// nextafter steps the bit pattern of the operands' own type: bf16 is not
// widened to f32 (one step of f32 would round back to x). The pattern moves
// down (toward zero) when |x| > |y| or the signs differ, up otherwise; from
// a zero it is the smallest subnormal with y's sign; equal bits give x; a
// NaN operand gives bf16's canonical quiet NaN.
// CHECK-LABEL: func @nextafter_bf16
// CHECK: ^bb0(%[[X:.+]]: bf16, %[[Y:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NOT: arith.extf
// CHECK: %[[XI:.+]] = arith.bitcast %[[X]] : bf16 to i16
// CHECK: %[[YI:.+]] = arith.bitcast %[[Y]] : bf16 to i16
// CHECK: %[[GT:.+]] = arith.cmpi ugt
// CHECK: %[[AWAY:.+]] = arith.ori %[[GT]], %{{.+}} : i1
// CHECK: %[[DOWN:.+]] = arith.subi %[[XI]], %{{.+}} : i16
// CHECK: %[[UP:.+]] = arith.addi %[[XI]], %{{.+}} : i16
// CHECK: arith.select %[[AWAY]], %[[DOWN]], %[[UP]] : i16
// CHECK: arith.cmpi eq, %[[XI]], %[[YI]] : i16
// CHECK: %[[UNO:.+]] = arith.cmpf uno, %[[X]], %[[Y]] : bf16
// CHECK: %[[NAN:.+]] = arith.constant 0x7FC0 : bf16
// CHECK: %[[R:.+]] = arith.select %[[UNO]], %[[NAN]], %{{.+}} : bf16
// CHECK: linalg.yield %[[R]] : bf16
func.func @nextafter_bf16(%x: tensor<4xbf16>, %y: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = aten.pointwise "nextafter" %x, %y : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// f64 nextafter: a NaN operand gives x + y, as C's.
// CHECK-LABEL: func @nextafter_f64
// CHECK: arith.bitcast %{{.+}} : f64 to i64
// CHECK: %[[SUM:.+]] = arith.addf
// CHECK: arith.select %{{.+}}, %[[SUM]], %{{.+}} : f64
func.func @nextafter_f64(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xf64> {
  %0 = aten.pointwise "nextafter" %x, %y : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
