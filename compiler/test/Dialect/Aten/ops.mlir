// RUN: kiln-opt %s -split-input-file | kiln-opt | FileCheck %s
// Round trip: every aten op prints and parses back to itself.

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: aten.constant dense<5.000000e-01> : tensor<f32>
  %half = aten.constant dense<0.5> : tensor<f32>
  // CHECK: aten.add %{{.*}}, %{{.*}} {alpha = 2.000000e+00 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = aten.add %a, %b {alpha = 2.0 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: aten.sub
  %1 = aten.sub %0, %half : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK: aten.mul
  %2 = aten.mul %1, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: aten.div
  %3 = aten.div %2, %half : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK: aten.neg
  %4 = aten.neg %3 : tensor<2x3xf32>
  // CHECK: aten.relu
  %5 = aten.relu %4 : tensor<2x3xf32>
  // CHECK: aten.tanh
  %6 = aten.tanh %5 : tensor<2x3xf32>
  // CHECK: aten.sigmoid
  %7 = aten.sigmoid %6 : tensor<2x3xf32>
  // CHECK: aten.exp
  %8 = aten.exp %7 : tensor<2x3xf32>
  // CHECK: aten.gelu %{{.*}} {approximate = "tanh"}
  %9 = aten.gelu %8 {approximate = "tanh"} : tensor<2x3xf32>
  return %9 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @linear
func.func @linear(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>,
                  %p: tensor<2x4x8xf32>, %q: tensor<2x8x5xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x5xf32>) {
  // CHECK: aten.mm
  %0 = aten.mm %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: aten.addmm {{.*}} {beta = 5.000000e-01 : f64}
  %1 = aten.addmm %b, %x, %w {alpha = 1.0 : f64, beta = 0.5 : f64} : (tensor<16xf32>, tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: aten.bmm
  %2 = aten.bmm %p, %q : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x5xf32>
}

// -----

// CHECK-LABEL: func @shapes_and_reductions
func.func @shapes_and_reductions(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>) -> (tensor<6x4xf32>, tensor<2x4x3xf32>, tensor<5x2x3x4xf32>, tensor<2x1x4xf32>, tensor<4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: aten.view
  %0 = aten.view %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: aten.permute %{{.*}} {dims = array<i64: 0, 2, 1>}
  %1 = aten.permute %x {dims = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  // CHECK: aten.expand
  %2 = aten.expand %x : (tensor<2x3x4xf32>) -> tensor<5x2x3x4xf32>
  // CHECK: aten.sum %{{.*}} {dims = array<i64: 1>, keepdim = true}
  %3 = aten.sum %x {dims = array<i64: 1>, keepdim = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  // CHECK: aten.mean %{{.*}} {dims = array<i64: 0, 1>}
  %4 = aten.mean %x {dims = array<i64: 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4xf32>
  // CHECK: aten.softmax %{{.*}} {dim = 2 : i64}
  %5 = aten.softmax %x {dim = 2 : i64} : tensor<2x3x4xf32>
  // CHECK: aten.native_layer_norm %{{.*}}, weight %{{.*}} {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64}
  %6, %7, %8 = aten.native_layer_norm %x, weight %w {normalized_rank = 1 : i64, eps = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  return %0, %1, %2, %3, %4, %5, %6 : tensor<6x4xf32>, tensor<2x4x3xf32>, tensor<5x2x3x4xf32>, tensor<2x1x4xf32>, tensor<4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @quantization
func.func @quantization(%x: tensor<2x3xf32>, %s: tensor<f64>, %zp: tensor<i64>,
                        %cs: tensor<3xf32>, %czp: tensor<3xi64>)
    -> (tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>) {
  // CHECK: aten.quantize %{{.*}}, %{{.*}}, %{{.*}} {quant_max = 127 : i64, quant_min = -128 : i64} : (tensor<2x3xf32>, tensor<f64>, tensor<i64>) -> tensor<2x3xi8>
  %q = aten.quantize %x, %s, %zp {quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<2x3xf32>, tensor<f64>, tensor<i64>) -> tensor<2x3xi8>
  // CHECK: aten.dequantize %{{.*}}, %{{.*}}, zero_point %{{.*}} : (tensor<2x3xi8>, tensor<f64>, tensor<i64>) -> tensor<2x3xf32>
  %d = aten.dequantize %q, %s, zero_point %zp : (tensor<2x3xi8>, tensor<f64>, tensor<i64>) -> tensor<2x3xf32>
  // CHECK: aten.quantize %{{.*}} {axis = 1 : i64, quant_max = 255 : i64, quant_min = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi64>) -> tensor<2x3xi16>
  %cq = aten.quantize %x, %cs, %czp {axis = 1 : i64, quant_min = 0 : i64, quant_max = 255 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi64>) -> tensor<2x3xi16>
  // CHECK: aten.dequantize %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3xi16>, tensor<3xf32>) -> tensor<2x3xf16>
  %cd = aten.dequantize %cq, %cs {axis = 1 : i64} : (tensor<2x3xi16>, tensor<3xf32>) -> tensor<2x3xf16>
  // CHECK: aten.dequantize %{{.*}}, %{{.*}}, zero_point %{{.*}} {axis = 1 : i64}
  %cz = aten.dequantize %cq, %cs, zero_point %czp {axis = 1 : i64} : (tensor<2x3xi16>, tensor<3xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  // CHECK: aten.fake_quantize %{{.*}}, %{{.*}}, %{{.*}}, enabled %{{.*}} {quant_max = 127 : i64, quant_min = -128 : i64} : (tensor<2x3xf32>, tensor<f64>, tensor<i64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  %f, %m = aten.fake_quantize %x, %s, %zp, enabled %zp {quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<2x3xf32>, tensor<f64>, tensor<i64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  // CHECK: aten.fake_quantize %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, quant_max = 255 : i64, quant_min = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  %cf, %cm = aten.fake_quantize %x, %cs, %czp {axis = 1 : i64, quant_min = 0 : i64, quant_max = 255 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %d, %cd, %cz, %f, %m, %cf : tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @search
func.func @search(%b: tensor<4xf32>, %x: tensor<2x3xf32>, %s: tensor<2x5xf32>) -> (tensor<2x3xi64>, tensor<2x3xi32>) {
  // CHECK: aten.searchsorted %{{.*}}, %{{.*}} {right} : (tensor<4xf32>, tensor<2x3xf32>) -> tensor<2x3xi64>
  %0 = aten.searchsorted %b, %x {right} : (tensor<4xf32>, tensor<2x3xf32>) -> tensor<2x3xi64>
  // CHECK: aten.searchsorted %{{.*}}, %{{.*}} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x3xi32>
  %1 = aten.searchsorted %s, %x : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x3xi32>
  return %0, %1 : tensor<2x3xi64>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func @scans
func.func @scans(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: aten.cummax %{{.*}} {dim = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  %v, %i = aten.cummax %x {dim = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  // CHECK: aten.cummin %{{.*}} {dim = 0 : i64}
  %w, %j = aten.cummin %x {dim = 0 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  // CHECK: aten.logcumsumexp %{{.*}} {dim = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = aten.logcumsumexp %x {dim = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %v, %i, %w, %l : tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @hermitian_eigenvectors
func.func @hermitian_eigenvectors(%v: tensor<2x6x6xf32>) -> tensor<2x3x3x2xf32> {
  // CHECK: aten.hermitian_eigenvectors %{{.*}} : (tensor<2x6x6xf32>) -> tensor<2x3x3x2xf32>
  %z = aten.hermitian_eigenvectors %v : (tensor<2x6x6xf32>) -> tensor<2x3x3x2xf32>
  return %z : tensor<2x3x3x2xf32>
}

// -----

// CHECK-LABEL: func @complex_logcumsumexp
func.func @complex_logcumsumexp(%z: tensor<2x3x2xf64>) -> tensor<2x3x2xf64> {
  // CHECK: aten.logcumsumexp %{{.*}} {complex, dim = 1 : i64} : (tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
  %l = aten.logcumsumexp %z {complex, dim = 1 : i64} : (tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
  return %l : tensor<2x3x2xf64>
}

// -----

// CHECK-LABEL: func @norms
func.func @norms(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // CHECK: aten.vector_norm %{{.*}} {dims = array<i64: 1>, keepdim = true, ord = 3.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %0 = aten.vector_norm %x {ord = 3.0 : f64, dims = array<i64: 1>, keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func @statistics_norms
func.func @statistics_norms(%x: tensor<2x4x3xf16>, %w: tensor<4xf32>, %b: tensor<4xf16>)
    -> (tensor<2x4x3xf16>, tensor<2x2xf32>, tensor<4xf16>) {
  // CHECK: aten.group_norm %{{.+}} weight %{{.+}} bias %{{.+}} {eps = 1.000000e-05 : f64, groups = 2 : i64}
  %y, %m, %r = aten.group_norm %x weight %w bias %b {groups = 2 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x3xf16>, tensor<4xf32>, tensor<4xf16>)
      -> (tensor<2x4x3xf16>, tensor<2x2xf32>, tensor<2x2xf32>)
  // CHECK: aten.batch_stats_norm %{{.+}} bias %{{.+}} {eps = 1.000000e-03 : f64}
  %z, %bm, %br = aten.batch_stats_norm %y bias %b {eps = 1.0e-3 : f64}
      : (tensor<2x4x3xf16>, tensor<4xf16>) -> (tensor<2x4x3xf16>, tensor<4xf16>, tensor<4xf16>)
  return %z, %m, %br : tensor<2x4x3xf16>, tensor<2x2xf32>, tensor<4xf16>
}

// -----

// CHECK-LABEL: func @trilinear
func.func @trilinear(%a: tensor<4x1x3xf32>, %w: tensor<1x6x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<4x6xf32> {
  // CHECK: aten.trilinear %{{.+}}, %{{.+}}, %{{.+}} {sumdim = array<i64: 2>} : (tensor<4x1x3xf32>, tensor<1x6x3xf32>, tensor<4x1x1xf32>) -> tensor<4x6xf32>
  %0 = aten.trilinear %a, %w, %b {sumdim = array<i64: 2>}
      : (tensor<4x1x3xf32>, tensor<1x6x3xf32>, tensor<4x1x1xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func @adaptive_pools
func.func @adaptive_pools(%x: tensor<2x4x7x9xf32>, %y: tensor<4x9xf32>) -> (tensor<2x4x3x3xf32>, tensor<4x2xi64>) {
  // CHECK: aten.adaptive_avg_pool %{{.+}} {pooled_dims = 2 : i64} : (tensor<2x4x7x9xf32>) -> tensor<2x4x3x3xf32>
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 2 : i64} : (tensor<2x4x7x9xf32>) -> tensor<2x4x3x3xf32>
  // CHECK: aten.adaptive_max_pool %{{.+}} {pooled_dims = 1 : i64} : (tensor<4x9xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %v, %i = aten.adaptive_max_pool %y {pooled_dims = 1 : i64} : (tensor<4x9xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  return %0, %i : tensor<2x4x3x3xf32>, tensor<4x2xi64>
}

// -----

// CHECK-LABEL: func @embedding_bag
func.func @embedding_bag(%w: tensor<10x3xf32>, %i: tensor<5xi32>, %o: tensor<3xi64>, %p: tensor<5xf32>) -> tensor<2x3xf32> {
  // CHECK: aten.embedding_bag %{{.+}}, %{{.+}}, %{{.+}} per_sample_weights %{{.+}} {include_last_offset = true, mode = 0 : i64, padding_idx = -1 : i64} : (tensor<10x3xf32>, tensor<5xi32>, tensor<3xi64>, tensor<5xf32>) -> (tensor<2x3xf32>, tensor<0xi32>, tensor<3xi32>, tensor<3xi32>)
  %r, %o2b, %size, %max = aten.embedding_bag %w, %i, %o per_sample_weights %p {mode = 0 : i64, include_last_offset = true, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi32>, tensor<3xi64>, tensor<5xf32>) -> (tensor<2x3xf32>, tensor<0xi32>, tensor<3xi32>, tensor<3xi32>)
  return %r : tensor<2x3xf32>
}

// -----

// Eager's sum off its fast path (f64 weights) fills offset2bag.
// CHECK-LABEL: func @embedding_bag_sum_f64
func.func @embedding_bag_sum_f64(%w: tensor<10x3xf64>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf64> {
  // CHECK: aten.embedding_bag {{.+}} -> (tensor<2x3xf64>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>)
  %r, %o2b, %size, %max = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf64>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf64>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf64>
}

// -----

// CHECK-LABEL: func @embedding_renorm
func.func @embedding_renorm(%w: tensor<10x3xf16>, %i: tensor<2x4xi32>) -> tensor<10x3xf16> {
  // CHECK: aten.embedding_renorm %{{.+}}, %{{.+}} {max_norm = 1.000000e+00 : f64, norm_type = 2.000000e+00 : f64} : (tensor<10x3xf16>, tensor<2x4xi32>) -> tensor<10x3xf16>
  %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<10x3xf16>, tensor<2x4xi32>) -> tensor<10x3xf16>
  return %0 : tensor<10x3xf16>
}

// -----

// CHECK-LABEL: func @convolution_backward
func.func @convolution_backward(%dy: tensor<2x4x8x8xf32>, %x: tensor<2x2x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4xf32> {
  // CHECK: aten.convolution_backward %{{.+}}, %{{.+}}, %{{.+}} {dilation = array<i64: 1, 1>, groups = 2 : i64, output_mask = array<i1: false, true, true>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>) -> (tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>)
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64, output_mask = array<i1: false, true, true>}
      : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>) -> (tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>)
  return %db : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @max_pool_backward
func.func @max_pool_backward(%dy: tensor<2x3x3x3xf32>, %x: tensor<2x3x6x6xf32>, %i: tensor<2x3x3x3xi64>) -> tensor<2x3x6x6xf32> {
  // CHECK: aten.max_pool_backward %{{.+}}, %{{.+}}, %{{.+}} {dilation = array<i64: 1, 1>, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x3x3xf32>, tensor<2x3x6x6xf32>, tensor<2x3x3x3xi64>) -> tensor<2x3x6x6xf32>
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<2x3x3x3xf32>, tensor<2x3x6x6xf32>, tensor<2x3x3x3xi64>) -> tensor<2x3x6x6xf32>
  return %0 : tensor<2x3x6x6xf32>
}

// -----

// CHECK-LABEL: func @linalg_solve
func.func @linalg_solve(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: aten.linalg_solve %{{.+}}, %{{.+}} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %x = aten.linalg_solve %a, %b : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %x : tensor<2x3x4xf32>
}

// CHECK-LABEL: func @triangular_solve
func.func @triangular_solve(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: aten.triangular_solve %{{.+}}, %{{.+}} {unitriangular, upper} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %x = aten.triangular_solve %a, %b {upper, unitriangular} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %x : tensor<2x3x4xf32>
}

// CHECK-LABEL: func @cholesky
func.func @cholesky(%a: tensor<2x3x3xf64>) -> tensor<2x1xi64> {
  // CHECK: aten.cholesky %{{.+}} : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x1xi64>)
  %l, %info = aten.cholesky %a : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x1xi64>)
  return %info : tensor<2x1xi64>
}

// CHECK-LABEL: func @lu_permutation
func.func @lu_permutation(%pivots: tensor<2x3xi64>) -> tensor<2x4xi64> {
  // CHECK: aten.lu_permutation %{{.+}} : (tensor<2x3xi64>) -> tensor<2x4xi64>
  %p = aten.lu_permutation %pivots : (tensor<2x3xi64>) -> tensor<2x4xi64>
  return %p : tensor<2x4xi64>
}

// CHECK-LABEL: func @reflectors
func.func @reflectors(%a: tensor<1x4x3xf32>, %c: tensor<1x4x2xf32>) -> (tensor<1x4x3xf32>, tensor<1x4x2xf32>) {
  // CHECK: aten.geqrf %{{.+}} : (tensor<1x4x3xf32>) -> (tensor<1x4x3xf32>, tensor<1x3xf32>)
  %r, %tau = aten.geqrf %a : (tensor<1x4x3xf32>) -> (tensor<1x4x3xf32>, tensor<1x3xf32>)
  // CHECK: aten.householder_product %{{.+}}, %{{.+}} : (tensor<1x4x3xf32>, tensor<1x3xf32>) -> tensor<1x4x3xf32>
  %q = aten.householder_product %r, %tau : (tensor<1x4x3xf32>, tensor<1x3xf32>) -> tensor<1x4x3xf32>
  // CHECK: aten.ormqr %{{.+}}, %{{.+}}, %{{.+}} {transpose} : (tensor<1x4x3xf32>, tensor<1x3xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %y = aten.ormqr %r, %tau, %c {transpose} : (tensor<1x4x3xf32>, tensor<1x3xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  return %q, %y : tensor<1x4x3xf32>, tensor<1x4x2xf32>
}

// CHECK-LABEL: func @complex_reflectors
func.func @complex_reflectors(%a: tensor<1x4x3x2xf64>, %c: tensor<1x4x2x2xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x4x2x2xf64>, tensor<1x3x3x2xf64>) {
  // CHECK: aten.geqrf %{{.+}} : (tensor<1x4x3x2xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>)
  %r, %tau = aten.geqrf %a : (tensor<1x4x3x2xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>)
  // CHECK: aten.householder_product %{{.+}}, %{{.+}} : (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>) -> tensor<1x4x3x2xf64>
  %q = aten.householder_product %r, %tau : (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>) -> tensor<1x4x3x2xf64>
  // CHECK: aten.ormqr %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>, tensor<1x4x2x2xf64>) -> tensor<1x4x2x2xf64>
  %y = aten.ormqr %r, %tau, %c : (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>, tensor<1x4x2x2xf64>) -> tensor<1x4x2x2xf64>
  // CHECK: aten.qr %{{.+}} : (tensor<1x4x3x2xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x3x2xf64>)
  %qq, %rr = aten.qr %a : (tensor<1x4x3x2xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x3x2xf64>)
  return %q, %y, %rr : tensor<1x4x3x2xf64>, tensor<1x4x2x2xf64>, tensor<1x3x3x2xf64>
}

// CHECK-LABEL: func @eigh_svd
func.func @eigh_svd(%a: tensor<2x3x3xf64>, %t: tensor<1x5x3xf32>) -> (tensor<2x3x3xf64>, tensor<1x5x5xf32>) {
  // CHECK: aten.eigh %{{.+}} : (tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3x3xf64>)
  %w, %v = aten.eigh %a : (tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3x3xf64>)
  // CHECK: aten.svd %{{.+}} {complete} : (tensor<1x5x3xf32>) -> (tensor<1x5x5xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>)
  %u, %s, %vt = aten.svd %t {complete} : (tensor<1x5x3xf32>) -> (tensor<1x5x5xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>)
  return %v, %u : tensor<2x3x3xf64>, tensor<1x5x5xf32>
}

// CHECK-LABEL: func @eigvals
func.func @eigvals(%a: tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>) {
  // CHECK: aten.eigvals %{{.+}} : (tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>)
  %re, %im = aten.eigvals %a : (tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>)
  return %re, %im : tensor<2x3xf64>, tensor<2x3xf64>
}

// CHECK-LABEL: func @ldl_factor
func.func @ldl_factor(%a: tensor<2x3x3xf64>) -> tensor<2x3xi64> {
  // CHECK: aten.ldl_factor %{{.+}} : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>)
  %ld, %pivots, %info = aten.ldl_factor %a : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>)
  return %pivots : tensor<2x3xi64>
}

// CHECK-LABEL: func @eigvals_complex
func.func @eigvals_complex(%a: tensor<2x3x3x2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: aten.eigvals %{{.+}} : (tensor<2x3x3x2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %re, %im = aten.eigvals %a : (tensor<2x3x3x2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %re, %im : tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func @eig_complex
func.func @eig_complex(%a: tensor<1x3x3x2xf64>) -> tensor<1x3x3xf64> {
  // CHECK: aten.eig %{{.+}} : (tensor<1x3x3x2xf64>) -> (tensor<1x3xf64>, tensor<1x3xf64>, tensor<1x3x3xf64>, tensor<1x3x3xf64>)
  %re, %im, %vr, %vi = aten.eig %a : (tensor<1x3x3x2xf64>) -> (tensor<1x3xf64>, tensor<1x3xf64>, tensor<1x3x3xf64>, tensor<1x3x3xf64>)
  return %vi : tensor<1x3x3xf64>
}

// CHECK-LABEL: func @eig
func.func @eig(%a: tensor<1x3x3xf32>) -> tensor<1x3x3xf32> {
  // CHECK: aten.eig %{{.+}} : (tensor<1x3x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>)
  %re, %im, %vr, %vi = aten.eig %a : (tensor<1x3x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>)
  return %vi : tensor<1x3x3xf32>
}

// CHECK-LABEL: func @matrix_exp
func.func @matrix_exp(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  // CHECK: aten.matrix_exp %{{.+}} : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %e = aten.matrix_exp %a : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %e : tensor<2x3x3xf32>
}

// CHECK-LABEL: func @histc
func.func @histc(%x: tensor<100xf32>) -> tensor<10xf32> {
  // CHECK: aten.histc %{{.+}} {bins = 10 : i64, max = 1.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<100xf32>) -> tensor<10xf32>
  %h = aten.histc %x {bins = 10 : i64, min = 0.0 : f64, max = 1.0 : f64} : (tensor<100xf32>) -> tensor<10xf32>
  return %h : tensor<10xf32>
}

// CHECK-LABEL: func @histogram
func.func @histogram(%x: tensor<100xf32>, %b: tensor<4xf32>, %w: tensor<100xf32>) -> (tensor<10xf32>, tensor<3xf32>) {
  // CHECK: aten.histogram %{{.+}} {range = array<f64: 0.000000e+00, 1.000000e+00>} : (tensor<100xf32>) -> (tensor<10xf32>, tensor<11xf32>)
  %h, %e = aten.histogram %x {range = array<f64: 0.0, 1.0>} : (tensor<100xf32>) -> (tensor<10xf32>, tensor<11xf32>)
  // CHECK: aten.histogram %{{.+}} edges %{{.+}} weight %{{.+}} {density} : (tensor<100xf32>, tensor<4xf32>, tensor<100xf32>) -> (tensor<3xf32>, tensor<4xf32>)
  %g, %f = aten.histogram %x edges %b weight %w {density} : (tensor<100xf32>, tensor<4xf32>, tensor<100xf32>) -> (tensor<3xf32>, tensor<4xf32>)
  return %h, %g : tensor<10xf32>, tensor<3xf32>
}

// CHECK-LABEL: func @fractional_max_pool
func.func @fractional_max_pool(%x: tensor<1x3x9x9xf32>, %u: tensor<1x3x2xf32>) -> tensor<1x3x4x4xi64> {
  // CHECK: aten.fractional_max_pool %{{.+}}, %{{.+}} {kernel = array<i64: 2, 2>} : (tensor<1x3x9x9xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
  %v, %i = aten.fractional_max_pool %x, %u {kernel = array<i64: 2, 2>} : (tensor<1x3x9x9xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
  return %i : tensor<1x3x4x4xi64>
}

// CHECK-LABEL: func @segment_reduce
func.func @segment_reduce(%x: tensor<6x3xf32>, %l: tensor<4xi64>) -> tensor<4x3xf32> {
  // CHECK: aten.segment_reduce %{{.+}}, %{{.+}} {axis = 0 : i64, initial = 1.000000e+00 : f64, reduce = "max"} : (tensor<6x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %r = aten.segment_reduce %x, %l {reduce = "max", axis = 0 : i64, initial = 1.0 : f64} : (tensor<6x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @lu_factor
func.func @lu_factor(%a: tensor<2x3x3xf64>) -> tensor<2x3xi64> {
  // CHECK: aten.lu_factor %{{.+}} : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>)
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>)
  return %pivots : tensor<2x3xi64>
}

// Complex matrices as (B, m, n, 2) pairs of their parts.
// CHECK-LABEL: func @lu_factor_complex
func.func @lu_factor_complex(%a: tensor<2x3x4x2xf32>) -> tensor<2x3x4x2xf32> {
  // CHECK: aten.lu_factor %{{.+}} : (tensor<2x3x4x2xf32>) -> (tensor<2x3x4x2xf32>, tensor<2x3xi64>, tensor<2x1xi1>)
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x4x2xf32>) -> (tensor<2x3x4x2xf32>, tensor<2x3xi64>, tensor<2x1xi1>)
  return %lu : tensor<2x3x4x2xf32>
}

// CHECK-LABEL: func @cholesky_complex
func.func @cholesky_complex(%a: tensor<1x3x3x2xf64>) -> tensor<1x3x3x2xf64> {
  // CHECK: aten.cholesky %{{.+}} : (tensor<1x3x3x2xf64>) -> (tensor<1x3x3x2xf64>, tensor<1x1xi64>)
  %l, %info = aten.cholesky %a : (tensor<1x3x3x2xf64>) -> (tensor<1x3x3x2xf64>, tensor<1x1xi64>)
  return %l : tensor<1x3x3x2xf64>
}

// -----

// CHECK-LABEL: func @as_strided
func.func @as_strided(%x: tensor<3x4xf32>) -> tensor<2x3xf32> {
  // CHECK: aten.as_strided %{{.*}} {storage_offset = 1 : i64, stride = array<i64: 1, 2>} : (tensor<3x4xf32>) -> tensor<2x3xf32>
  %0 = aten.as_strided %x {stride = array<i64: 1, 2>, storage_offset = 1 : i64} : (tensor<3x4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @repeat
func.func @repeat(%x: tensor<4x5xf32>) -> tensor<2x4x15xf32> {
  // CHECK: aten.repeat %{{.*}} {repeats = array<i64: 2, 1, 3>} : (tensor<4x5xf32>) -> tensor<2x4x15xf32>
  %0 = aten.repeat %x {repeats = array<i64: 2, 1, 3>} : (tensor<4x5xf32>) -> tensor<2x4x15xf32>
  return %0 : tensor<2x4x15xf32>
}

// -----

// CHECK-LABEL: func @flip_and_diagonal
func.func @flip_and_diagonal(%x: tensor<4x2x5xf32>) -> (tensor<4x2x5xf32>, tensor<2x4xf32>) {
  // CHECK: aten.flip %{{.*}} {dims = array<i64: 0, 2>} : tensor<4x2x5xf32>
  %0 = aten.flip %x {dims = array<i64: 0, 2>} : tensor<4x2x5xf32>
  // CHECK: aten.diagonal %{{.*}} {dim1 = 0 : i64, dim2 = 2 : i64, offset = 1 : i64} : (tensor<4x2x5xf32>) -> tensor<2x4xf32>
  %1 = aten.diagonal %x {offset = 1 : i64, dim1 = 0 : i64, dim2 = 2 : i64} : (tensor<4x2x5xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<4x2x5xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func @complex_singular_vectors
func.func @complex_singular_vectors(%u: tensor<2x8x6xf64>, %s: tensor<2x6xf64>, %v: tensor<2x6x6xf64>) -> (tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>) {
  // CHECK: aten.complex_singular_vectors %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x6xf64>, tensor<2x6xf64>, tensor<2x6x6xf64>) -> (tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>)
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<2x8x6xf64>, tensor<2x6xf64>, tensor<2x6x6xf64>) -> (tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>)
  return %l, %r : tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>
}
