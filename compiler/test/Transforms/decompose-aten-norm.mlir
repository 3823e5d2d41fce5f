// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// ord 2: sqrt of a sum of |x| * |x|.
// CHECK-LABEL: func @two
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x3xf32>)
// CHECK: %[[A:.+]] = aten.pointwise "abs" %[[X]] : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[S:.+]] = aten.mul %[[A]], %[[A]]
// CHECK: %[[SUM:.+]] = aten.sum %[[S]] {dims = array<i64: 2>} : (tensor<2x4x3xf32>) -> tensor<2x4xf32>
// CHECK: %[[N:.+]] = aten.pointwise "sqrt" %[[SUM]]
// CHECK: return %[[N]]
func.func @two(%x: tensor<2x4x3xf32>) -> tensor<2x4xf32> {
  %0 = aten.vector_norm %x {ord = 2.0 : f64, dims = array<i64: 2>} : (tensor<2x4x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// ord inf and -inf: amax and amin of |x|; an f16 input takes |x| in the
// f32 result type; keepdim carries over.
// CHECK-LABEL: func @infinities
// CHECK: %[[A:.+]] = aten.pointwise "abs" %{{.+}} : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK: aten.amax %[[A]] {dims = array<i64: 1>, keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK: aten.amin %{{.+}} {dims = array<i64>} : (tensor<2x3xf32>) -> tensor<f32>
func.func @infinities(%x: tensor<2x3xf16>) -> (tensor<2x1xf32>, tensor<f32>) {
  %0 = aten.vector_norm %x {ord = 0x7FF0000000000000 : f64, dims = array<i64: 1>, keepdim = true} : (tensor<2x3xf16>) -> tensor<2x1xf32>
  %1 = aten.vector_norm %x {ord = 0xFFF0000000000000 : f64, dims = array<i64>} : (tensor<2x3xf16>) -> tensor<f32>
  return %0, %1 : tensor<2x1xf32>, tensor<f32>
}

// -----

// ord 0 counts the nonzero elements; ord 1 sums |x|; ord 3 is
// (sum |x|^3)^(1/3).
// CHECK-LABEL: func @others
// CHECK: %[[NZ:.+]] = aten.pointwise "ne" %{{.+}}, %{{.+}} : (tensor<5xf64>, tensor<f64>) -> tensor<5xi1>
// CHECK: %[[ONES:.+]] = aten.pointwise "copy" %[[NZ]] : (tensor<5xi1>) -> tensor<5xf64>
// CHECK: aten.sum %[[ONES]] {dims = array<i64>}
// CHECK: %[[A1:.+]] = aten.pointwise "abs"
// CHECK: aten.sum %[[A1]] {dims = array<i64>}
// CHECK: %[[P:.+]] = aten.pointwise "pow" %{{.+}}, %{{.+}} : (tensor<5xf64>, tensor<f64>) -> tensor<5xf64>
// CHECK: %[[S3:.+]] = aten.sum %[[P]]
// CHECK: aten.pointwise "pow" %[[S3]], %{{.+}} : (tensor<f64>, tensor<f64>) -> tensor<f64>
func.func @others(%x: tensor<5xf64>) -> (tensor<f64>, tensor<f64>, tensor<f64>) {
  %0 = aten.vector_norm %x {ord = 0.0 : f64, dims = array<i64>} : (tensor<5xf64>) -> tensor<f64>
  %1 = aten.vector_norm %x {ord = 1.0 : f64, dims = array<i64>} : (tensor<5xf64>) -> tensor<f64>
  %2 = aten.vector_norm %x {ord = 3.0 : f64, dims = array<i64>} : (tensor<5xf64>) -> tensor<f64>
  return %0, %1, %2 : tensor<f64>, tensor<f64>, tensor<f64>
}

// -----

// Group norm over f16: each (sample, group) a row whose statistics a layer
// norm over it gives, in f32; the output (x - mean) * rstd * weight + bias
// in one (N, G, C/G, rest) view of x, where the statistics and the
// per-channel weight and bias broadcast (the layer norm's own output goes
// unused); the result and statistics rounded once to their declared types.
// CHECK-LABEL: func @group
// CHECK: %[[X:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<2x4x3xf16>) -> tensor<2x4x3xf32>
// CHECK: %[[G:.+]] = aten.view %[[X]] : (tensor<2x4x3xf32>) -> tensor<2x2x6xf32>
// CHECK: %[[N:.+]], %[[M:.+]], %[[R:.+]] = aten.native_layer_norm %[[G]] {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64} : (tensor<2x2x6xf32>) -> (tensor<2x2x6xf32>, tensor<2x2x1xf32>, tensor<2x2x1xf32>)
// CHECK-NOT: aten.var
// CHECK: %[[XV:.+]] = aten.view %[[G]] : (tensor<2x2x6xf32>) -> tensor<2x2x2x3xf32>
// CHECK: %[[MB:.+]] = aten.view %[[M]] : (tensor<2x2x1xf32>) -> tensor<2x2x1x1xf32>
// CHECK: %[[C:.+]] = aten.sub %[[XV]], %[[MB]] : (tensor<2x2x2x3xf32>, tensor<2x2x1x1xf32>) -> tensor<2x2x2x3xf32>
// CHECK: %[[RB:.+]] = aten.view %[[R]] : (tensor<2x2x1xf32>) -> tensor<2x2x1x1xf32>
// CHECK: %[[NR:.+]] = aten.mul %[[C]], %[[RB]]
// CHECK: %[[W:.+]] = aten.view %{{.+}} : (tensor<4xf32>) -> tensor<2x2x1xf32>
// CHECK: %[[NW:.+]] = aten.mul %[[NR]], %[[W]] : (tensor<2x2x2x3xf32>, tensor<2x2x1xf32>) -> tensor<2x2x2x3xf32>
// CHECK: %[[B:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: %[[BV:.+]] = aten.view %[[B]] : (tensor<4xf32>) -> tensor<2x2x1xf32>
// CHECK: %[[NB:.+]] = aten.add %[[NW]], %[[BV]]
// CHECK: %[[NV:.+]] = aten.view %[[NB]] : (tensor<2x2x2x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[Y:.+]] = aten.pointwise "copy" %[[NV]] : (tensor<2x4x3xf32>) -> tensor<2x4x3xf16>
// CHECK: %[[MH:.+]] = aten.pointwise "copy" %[[M]] : (tensor<2x2x1xf32>) -> tensor<2x2x1xf16>
// CHECK: %[[MV:.+]] = aten.view %[[MH]] : (tensor<2x2x1xf16>) -> tensor<2x2xf16>
// CHECK: %[[RV:.+]] = aten.view %[[R]] : (tensor<2x2x1xf32>) -> tensor<2x2xf32>
// CHECK: return %[[Y]], %[[MV]], %[[RV]]
func.func @group(%x: tensor<2x4x3xf16>, %w: tensor<4xf32>, %b: tensor<4xf16>)
    -> (tensor<2x4x3xf16>, tensor<2x2xf16>, tensor<2x2xf32>) {
  %y, %m, %r = aten.group_norm %x weight %w bias %b {groups = 2 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x3xf16>, tensor<4xf32>, tensor<4xf16>)
      -> (tensor<2x4x3xf16>, tensor<2x2xf16>, tensor<2x2xf32>)
  return %y, %m, %r : tensor<2x4x3xf16>, tensor<2x2xf16>, tensor<2x2xf32>
}

// -----

// Batch-statistics norm: each channel's statistics over (N, spatial), one
// batch_norm pointwise op (weight 1 and bias 0 when absent), 1/std last.
// CHECK-LABEL: func @batch_stats
// CHECK: %[[M:.+]] = aten.mean %[[X:.+]] {dims = array<i64: 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4xf32>
// CHECK: %[[V:.+]] = aten.var %[[X]] {correction = 0.000000e+00 : f64, dims = array<i64: 0, 2>}
// CHECK: %[[ONE:.+]] = aten.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ZERO:.+]] = aten.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[MV:.+]] = aten.view %[[M]] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: %[[VV:.+]] = aten.view %[[V]] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: %[[Y:.+]] = aten.pointwise "batch_norm" %[[X]], %[[MV]], %[[VV]], %[[ONE]], %[[ZERO]] {scalars = array<f64: 1.000000e-03>}
// CHECK: %[[R:.+]] = aten.pointwise "rsqrt"
// CHECK: return %[[Y]], %[[M]], %[[R]]
func.func @batch_stats(%x: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y, %m, %r = aten.batch_stats_norm %x {eps = 1.0e-3 : f64}
      : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %m, %r : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// cdist without use_mm: the differences of every pair of rows, broadcast
// to (P, R, M), then their vector norm over M (itself decomposed: p = 1
// is a sum of |d|).
// CHECK-LABEL: func @cdist_differences
// CHECK: %[[A:.+]] = aten.view %arg0 : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
// CHECK: %[[B:.+]] = aten.view %arg1 : (tensor<5x3xf32>) -> tensor<1x5x3xf32>
// CHECK: %[[D:.+]] = aten.sub %[[A]], %[[B]] {{.+}} -> tensor<4x5x3xf32>
// CHECK: %[[ABS:.+]] = aten.pointwise "abs" %[[D]]
// CHECK: aten.sum %[[ABS]] {dims = array<i64: 2>} : (tensor<4x5x3xf32>) -> tensor<4x5xf32>
func.func @cdist_differences(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<4x5xf32> {
  %0 = aten.cdist %a, %b {p = 1.0 : f64} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// cdist with use_mm (batched): eager's form, rows padded to
// [-2x, |x|^2, 1] and [y, 1, |y|^2], one bmm, clamped at 0, square-rooted.
// CHECK-LABEL: func @cdist_product
// CHECK: %[[LEFT:.+]] = aten.cat %{{.+}}, %{{.+}}, %{{.+}} {dim = 2 : i64} : (tensor<2x30x4xf32>, tensor<2x30x1xf32>, tensor<2x30x1xf32>) -> tensor<2x30x6xf32>
// CHECK: %[[RIGHT:.+]] = aten.cat %arg1, %{{.+}}, %{{.+}} {dim = 2 : i64} : (tensor<2x7x4xf32>, tensor<2x7x1xf32>, tensor<2x7x1xf32>) -> tensor<2x7x6xf32>
// CHECK: %[[RT:.+]] = aten.permute %[[RIGHT]] {dims = array<i64: 0, 2, 1>}
// CHECK: %[[P:.+]] = aten.bmm %[[LEFT]], %[[RT]] : (tensor<2x30x6xf32>, tensor<2x6x7xf32>) -> tensor<2x30x7xf32>
// CHECK: %[[C:.+]] = aten.pointwise "clamp" %[[P]] {scalars = array<f64: 0.000000e+00, 0x7FF8000000000000>}
// CHECK: %[[R:.+]] = aten.pointwise "sqrt" %[[C]]
// CHECK: return %[[R]]
func.func @cdist_product(%a: tensor<2x30x4xf32>, %b: tensor<2x7x4xf32>) -> tensor<2x30x7xf32> {
  %0 = aten.cdist %a, %b {p = 2.0 : f64, use_mm} : (tensor<2x30x4xf32>, tensor<2x7x4xf32>) -> tensor<2x30x7xf32>
  return %0 : tensor<2x30x7xf32>
}
