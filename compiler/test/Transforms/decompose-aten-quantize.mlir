// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Per tensor with a constant scale: 1/scale folds (in f64, then f32), as
// does the zero point (f32); the arithmetic is f32; round half to even,
// shift, clamp, then the integer.
// CHECK-LABEL: func @quantize_per_tensor
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: aten.quantize
// CHECK-DAG: %[[INV:.+]] = aten.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: %[[ZP:.+]] = aten.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[S:.+]] = aten.mul %[[X]], %[[INV]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[R:.+]] = aten.pointwise "round" %[[S]]
// CHECK: %[[A:.+]] = aten.add %[[R]], %[[ZP]] {{.*}}: (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[C:.+]] = aten.pointwise "clamp" %[[A]] {scalars = array<f64: -1.280000e+02, 1.270000e+02>}
// CHECK: %[[Q:.+]] = aten.pointwise "copy" %[[C]] : (tensor<2x3xf32>) -> tensor<2x3xi8>
// CHECK: return %[[Q]]
func.func @quantize_per_tensor(%x: tensor<2x3xf32>) -> tensor<2x3xi8> {
  %s = aten.constant dense<0.5> : tensor<f64>
  %zp = aten.constant dense<3> : tensor<i64>
  %q = aten.quantize %x, %s, %zp {quant_min = -128 : i64, quant_max = 127 : i64}
      : (tensor<2x3xf32>, tensor<f64>, tensor<i64>) -> tensor<2x3xi8>
  return %q : tensor<2x3xi8>
}

// -----

// Per tensor with a scale read from a tensor (the .tensor overload), and an
// f16 input: 1.0 / scale in f64 at run time, the input widened to f32.
// CHECK-LABEL: func @quantize_tensor_scale
// CHECK-SAME: (%[[X:.+]]: tensor<4xf16>, %[[SC:.+]]: tensor<f32>, %[[ZP:.+]]: tensor<i64>)
// CHECK-DAG: %[[XF:.+]] = aten.pointwise "copy" %[[X]] : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-DAG: %[[ONE:.+]] = aten.constant dense<1.000000e+00> : tensor<f64>
// CHECK-DAG: %[[S64:.+]] = aten.pointwise "copy" %[[SC]] : (tensor<f32>) -> tensor<f64>
// CHECK: %[[INV:.+]] = aten.div %[[ONE]], %[[S64]] : (tensor<f64>, tensor<f64>) -> tensor<f64>
// CHECK: %[[S:.+]] = aten.mul %[[XF]], %[[INV]] : (tensor<4xf32>, tensor<f64>) -> tensor<4xf32>
// CHECK: aten.pointwise "round" %[[S]]
// CHECK: aten.add %{{.+}}, %[[ZP]]
// CHECK: aten.pointwise "clamp" %{{.+}} {scalars = array<f64: 0.000000e+00, 2.550000e+02>}
// CHECK: aten.pointwise "copy" %{{.+}} : (tensor<4xf32>) -> tensor<4xi16>
func.func @quantize_tensor_scale(%x: tensor<4xf16>, %s: tensor<f32>, %zp: tensor<i64>) -> tensor<4xi16> {
  %q = aten.quantize %x, %s, %zp {quant_min = 0 : i64, quant_max = 255 : i64}
      : (tensor<4xf16>, tensor<f32>, tensor<i64>) -> tensor<4xi16>
  return %q : tensor<4xi16>
}

// -----

// Per channel along dim 1: the parameters are viewed to (1, C, 1); 1/scales
// in the scales' type; an f64 scale vector makes the arithmetic f64.
// CHECK-LABEL: func @quantize_per_channel
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[SC:.+]]: tensor<3xf64>, %[[ZP:.+]]: tensor<3xi64>)
// CHECK-DAG: %[[SV:.+]] = aten.view %[[SC]] : (tensor<3xf64>) -> tensor<1x3x1xf64>
// CHECK-DAG: %[[ZV:.+]] = aten.view %[[ZP]] : (tensor<3xi64>) -> tensor<1x3x1xi64>
// CHECK-DAG: %[[ONE:.+]] = aten.constant dense<1.000000e+00> : tensor<f64>
// CHECK: %[[INV:.+]] = aten.div %[[ONE]], %[[SV]] : (tensor<f64>, tensor<1x3x1xf64>) -> tensor<1x3x1xf64>
// CHECK: %[[S:.+]] = aten.mul %[[X]], %[[INV]] : (tensor<2x3x4xf32>, tensor<1x3x1xf64>) -> tensor<2x3x4xf64>
// CHECK: %[[R:.+]] = aten.pointwise "round" %[[S]]
// CHECK: %[[A:.+]] = aten.add %[[R]], %[[ZV]] {{.*}}-> tensor<2x3x4xf64>
// CHECK: %[[C:.+]] = aten.pointwise "clamp" %[[A]]
// CHECK: aten.pointwise "copy" %[[C]] : (tensor<2x3x4xf64>) -> tensor<2x3x4xi8>
func.func @quantize_per_channel(%x: tensor<2x3x4xf32>, %s: tensor<3xf64>, %zp: tensor<3xi64>) -> tensor<2x3x4xi8> {
  %q = aten.quantize %x, %s, %zp {axis = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64}
      : (tensor<2x3x4xf32>, tensor<3xf64>, tensor<3xi64>) -> tensor<2x3x4xi8>
  return %q : tensor<2x3x4xi8>
}

// -----

// Per tensor: (q.to(out) - zp) * scale in the output type; bf16 multiplies
// in f32 and rounds once.
// CHECK-LABEL: func @dequantize_per_tensor
// CHECK-SAME: (%[[Q:.+]]: tensor<2x3xi8>, %[[SC:.+]]: tensor<f32>, %[[ZP:.+]]: tensor<i32>)
// CHECK-DAG: %[[Z64:.+]] = aten.pointwise "copy" %[[ZP]] : (tensor<i32>) -> tensor<i64>
// CHECK-DAG: %[[S64:.+]] = aten.pointwise "copy" %[[SC]] : (tensor<f32>) -> tensor<f64>
// CHECK-DAG: %[[QF:.+]] = aten.pointwise "copy" %[[Q]] : (tensor<2x3xi8>) -> tensor<2x3xbf16>
// CHECK: %[[SUB:.+]] = aten.sub %[[QF]], %[[Z64]] {{.*}}: (tensor<2x3xbf16>, tensor<i64>) -> tensor<2x3xbf16>
// CHECK: %[[M:.+]] = aten.mul %[[SUB]], %[[S64]] : (tensor<2x3xbf16>, tensor<f64>) -> tensor<2x3xf32>
// CHECK: %[[D:.+]] = aten.pointwise "copy" %[[M]] : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK: return %[[D]]
func.func @dequantize_per_tensor(%q: tensor<2x3xi8>, %s: tensor<f32>, %zp: tensor<i32>) -> tensor<2x3xbf16> {
  %d = aten.dequantize %q, %s, zero_point %zp : (tensor<2x3xi8>, tensor<f32>, tensor<i32>) -> tensor<2x3xbf16>
  return %d : tensor<2x3xbf16>
}

// -----

// Per channel along dim 0, with and without zero points: PyTorch's promoted
// types (i8 - i64 is i64; i64 * f32 is f32), then the output type.
// CHECK-LABEL: func @dequantize_per_channel
// CHECK-SAME: (%[[Q:.+]]: tensor<3x2xi8>, %[[SC:.+]]: tensor<3xf32>, %[[ZP:.+]]: tensor<3xi64>)
// CHECK-DAG: %[[SV:.+]] = aten.view %[[SC]] : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK-DAG: %[[ZV:.+]] = aten.view %[[ZP]] : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK: %[[SUB:.+]] = aten.sub %[[Q]], %[[ZV]] {{.*}}: (tensor<3x2xi8>, tensor<3x1xi64>) -> tensor<3x2xi64>
// CHECK: %[[M:.+]] = aten.mul %[[SUB]], %[[SV]] : (tensor<3x2xi64>, tensor<3x1xf32>) -> tensor<3x2xf32>
// CHECK: %[[SV2:.+]] = aten.view %[[SC]] : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: %[[NZ:.+]] = aten.mul %[[Q]], %[[SV2]] : (tensor<3x2xi8>, tensor<3x1xf32>) -> tensor<3x2xf32>
// CHECK: %[[H:.+]] = aten.pointwise "copy" %[[NZ]] : (tensor<3x2xf32>) -> tensor<3x2xf16>
// CHECK: return %[[M]], %[[H]]
func.func @dequantize_per_channel(%q: tensor<3x2xi8>, %s: tensor<3xf32>, %zp: tensor<3xi64>) -> (tensor<3x2xf32>, tensor<3x2xf16>) {
  %d = aten.dequantize %q, %s, zero_point %zp {axis = 0 : i64} : (tensor<3x2xi8>, tensor<3xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  %h = aten.dequantize %q, %s {axis = 0 : i64} : (tensor<3x2xi8>, tensor<3xf32>) -> tensor<3x2xf16>
  return %d, %h : tensor<3x2xf32>, tensor<3x2xf16>
}

// -----

// Fake quantize per tensor (scalar qparams): 1.0f / scale in f32, qval =
// round(x * inv) + zp computed once, clamped with NaN as quant_min, the
// mask qmin <= qval <= qmax, and (clamped - zp) * scale from an i64
// difference.
// CHECK-LABEL: func @fake_quantize_per_tensor
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-DAG: %[[FZ:.+]] = aten.constant dense<1> : tensor<i64>
// CHECK-DAG: %[[FS:.+]] = aten.constant dense<2.500000e-01> : tensor<f32>
// CHECK-DAG: %[[ONE:.+]] = aten.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[INV:.+]] = aten.div %[[ONE]], %[[FS]]
// CHECK: %[[FM:.+]] = aten.mul %[[X]], %[[INV]]
// CHECK: %[[FR:.+]] = aten.pointwise "round" %[[FM]]
// CHECK: %[[QV:.+]] = aten.add %[[FR]], %[[FZ]] : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK-DAG: %[[LO:.+]] = aten.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[HI:.+]] = aten.constant dense<2.550000e+02> : tensor<f32>
// CHECK: %[[CL:.+]] = aten.pointwise "clamp" %[[QV]] {scalars = array<f64: 0.000000e+00, 2.550000e+02>}
// CHECK: %[[NAN:.+]] = aten.pointwise "isnan" %[[QV]]
// CHECK: %[[CLN:.+]] = aten.pointwise "where" %[[NAN]], %[[LO]], %[[CL]]
// CHECK: %[[GE:.+]] = aten.pointwise "ge" %[[QV]], %[[LO]]
// CHECK: %[[LE:.+]] = aten.pointwise "le" %[[QV]], %[[HI]]
// CHECK: %[[MASK:.+]] = aten.pointwise "logical_and" %[[GE]], %[[LE]]
// CHECK: %[[QI:.+]] = aten.pointwise "copy" %[[CLN]] : (tensor<2x3xf32>) -> tensor<2x3xi64>
// CHECK: %[[DIFF:.+]] = aten.sub %[[QI]], %[[FZ]] : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
// CHECK: %[[OUT:.+]] = aten.mul %[[DIFF]], %[[FS]] : (tensor<2x3xi64>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: return %[[OUT]], %[[MASK]]
func.func @fake_quantize_per_tensor(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  %s = aten.constant dense<0.25> : tensor<f64>
  %zp = aten.constant dense<1> : tensor<i64>
  %y, %m = aten.fake_quantize %x, %s, %zp {quant_min = 0 : i64, quant_max = 255 : i64}
      : (tensor<2x3xf32>, tensor<f64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %y, %m : tensor<2x3xf32>, tensor<2x3xi1>
}

// -----

// QAT's enable flag: 0 passes x through with the mask all true.
// CHECK-LABEL: func @fake_quantize_enabled
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[S:.+]]: tensor<f32>, %[[Z:.+]]: tensor<i32>, %[[E:.+]]: tensor<i64>)
// CHECK: %[[MASK:.+]] = aten.pointwise "logical_and"
// CHECK: %[[OUT:.+]] = aten.mul
// CHECK: %[[ON:.+]] = aten.pointwise "ne" %[[E]], %{{.+}} : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK: %[[SEL:.+]] = aten.pointwise "where" %[[ON]], %[[OUT]], %[[X]] : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[OFF:.+]] = aten.pointwise "logical_not" %[[ON]]
// CHECK: %[[M:.+]] = aten.pointwise "logical_or" %[[OFF]], %[[MASK]]
// CHECK: return %[[SEL]], %[[M]]
func.func @fake_quantize_enabled(%x: tensor<4xf32>, %s: tensor<f32>, %zp: tensor<i32>, %on: tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>) {
  %y, %m = aten.fake_quantize %x, %s, %zp, enabled %on {quant_min = -128 : i64, quant_max = 127 : i64}
      : (tensor<4xf32>, tensor<f32>, tensor<i32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>)
  return %y, %m : tensor<4xf32>, tensor<4xi1>
}

// -----

// Per channel: an integer zero point (read as i32) adds after rounding; a
// float one before, rounding in f32; the output is computed in f64.
// CHECK-LABEL: func @fake_quantize_per_channel
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[S:.+]]: tensor<3xf32>, %[[ZI:.+]]: tensor<3xi64>, %[[ZF:.+]]: tensor<3xf32>)
// CHECK: %[[ZV:.+]] = aten.view %[[ZI]] : (tensor<3xi64>) -> tensor<1x3xi64>
// CHECK: %[[Z32:.+]] = aten.pointwise "copy" %[[ZV]] : (tensor<1x3xi64>) -> tensor<1x3xi32>
// CHECK: %[[QV:.+]] = aten.add %{{.+}}, %[[Z32]] : (tensor<2x3xf32>, tensor<1x3xi32>) -> tensor<2x3xf32>
// CHECK: %[[D:.+]] = aten.sub %{{.+}}, %[[Z32]] : (tensor<2x3xi64>, tensor<1x3xi32>) -> tensor<2x3xf64>
// CHECK: %[[O:.+]] = aten.mul %[[D]], %{{.+}} : (tensor<2x3xf64>, tensor<1x3xf32>) -> tensor<2x3xf64>
// CHECK: aten.pointwise "copy" %[[O]] : (tensor<2x3xf64>) -> tensor<2x3xf32>
// CHECK: %[[SUM:.+]] = aten.add %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK: aten.pointwise "round" %[[SUM]]
func.func @fake_quantize_per_channel(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %zi: tensor<3xi64>, %zf: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %a, %am = aten.fake_quantize %x, %s, %zi {axis = 1 : i64, quant_min = 0 : i64, quant_max = 255 : i64}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  %b, %bm = aten.fake_quantize %x, %s, %zf {axis = 1 : i64, quant_min = 0 : i64, quant_max = 255 : i64}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A function without composite ops is left as it is: its equal constants
// are not merged nor its ops folded.
// CHECK-LABEL: func @untouched
// CHECK: aten.constant dense<2.000000e+00> : tensor<f32>
// CHECK: aten.constant dense<2.000000e+00> : tensor<f32>
// CHECK: aten.view %{{.+}} : (tensor<4xf32>) -> tensor<4xf32>
func.func @untouched(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = aten.constant dense<2.0> : tensor<f32>
  %b = aten.constant dense<2.0> : tensor<f32>
  %v = aten.view %x : (tensor<4xf32>) -> tensor<4xf32>
  %0 = aten.mul %v, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = aten.mul %x, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
