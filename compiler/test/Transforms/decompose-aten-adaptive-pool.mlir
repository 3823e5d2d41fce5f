// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Dividing extents: plain pools with kernel = stride = in / out, the max
// pool's indices from aten.max_pool itself (the global pool of a
// squeeze-excite block is a 7x7 window).
// CHECK-LABEL: func @even
// CHECK: aten.avg_pool %{{.+}} {count_include_pad = true, divisor_override = 0 : i64, kernel = array<i64: 7, 7>, padding = array<i64: 0, 0>, stride = array<i64: 7, 7>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
// CHECK: aten.max_pool %{{.+}} {dilation = array<i64: 1, 1, 1>, kernel = array<i64: 2, 1, 7>, padding = array<i64: 0, 0, 0>, stride = array<i64: 2, 1, 7>} : (tensor<8x4x3x7xf32>) -> (tensor<8x2x3x1xf32>, tensor<8x2x3x1xi64>)
// CHECK-NOT: aten.adaptive
func.func @even(%x: tensor<1x8x7x7xf32>, %y: tensor<8x4x3x7xf32>) -> (tensor<1x8x1x1xf32>, tensor<8x2x3x1xi64>) {
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 2 : i64} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
  %v, %i = aten.adaptive_max_pool %y {pooled_dims = 3 : i64} : (tensor<8x4x3x7xf32>) -> (tensor<8x2x3x1xf32>, tensor<8x2x3x1xi64>)
  return %0, %i : tensor<1x8x1x1xf32>, tensor<8x2x3x1xi64>
}

// -----

// 1-d, 5 -> 3: windows {0,1} {1,2,3} {3,4}, padded to 3 by repeating the
// last element; the padding is masked out of the sum, which is divided by
// the window sizes 2, 3, 2.
// CHECK-LABEL: func @uneven_avg
// CHECK: %[[R:.+]] = aten.constant dense<{{\[}}[0, 1, 1], [1, 2, 3], [3, 4, 4]]> : tensor<3x3xi64>
// CHECK: %[[G:.+]] = aten.index_select %{{.+}}, %[[R]] {dim = 1 : i64} : (tensor<4x5xf32>, tensor<3x3xi64>) -> tensor<4x3x3xf32>
// CHECK: %[[M:.+]] = aten.constant dense<{{\[}}[true, true, false], [true, true, true], [true, true, false]]> : tensor<3x3xi1>
// CHECK: %[[W:.+]] = aten.pointwise "where" %[[M]], %[[G]], %{{.+}} :
// CHECK: %[[S:.+]] = aten.sum %[[W]] {dims = array<i64: 2>} : (tensor<4x3x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[D:.+]] = aten.constant dense<[2.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK: aten.div %[[S]], %[[D]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NOT: aten.adaptive
func.func @uneven_avg(%x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// 1-d max, 5 -> 3: the first maximum of each gathered window, mapped back
// to its input position through the same windows as a table.
// CHECK-LABEL: func @uneven_max
// CHECK: aten.index_select
// CHECK: %[[V:.+]] = aten.amax %{{.+}} {dims = array<i64: 2>} : (tensor<4x3x3xi32>) -> tensor<4x3xi32>
// CHECK: %[[AT:.+]] = aten.arg_reduce %{{.+}} {dim = 2 : i64, keepdim = true, max = true}
// CHECK: %[[T:.+]] = aten.constant dense<{{\[\[}}[0, 1, 1], [1, 2, 3], [3, 4, 4]]]> : tensor<1x3x3xi64>
// CHECK: %[[E:.+]] = aten.expand %[[T]] : (tensor<1x3x3xi64>) -> tensor<4x3x3xi64>
// CHECK: %[[I:.+]] = aten.gather %[[E]], %[[AT]] {dim = 2 : i64}
// CHECK: %[[IDX:.+]] = aten.view %[[I]] : (tensor<4x3x1xi64>) -> tensor<4x3xi64>
// CHECK: return %[[V]], %[[IDX]]
func.func @uneven_max(%x: tensor<4x5xi32>) -> (tensor<4x3xi32>, tensor<4x3xi64>) {
  %v, %i = aten.adaptive_max_pool %x {pooled_dims = 1 : i64} : (tensor<4x5xi32>) -> (tensor<4x3xi32>, tensor<4x3xi64>)
  return %v, %i : tensor<4x3xi32>, tensor<4x3xi64>
}

// -----

// f16, uneven: the gathered windows are summed and divided in f32 (a
// window may hold more elements than f16's largest value), then rounded.
// CHECK-LABEL: func @uneven_avg_f16
// CHECK: %[[G:.+]] = aten.index_select %{{.+}} : (tensor<2x5xf16>, tensor<3x3xi64>) -> tensor<2x3x3xf16>
// CHECK: %[[G32:.+]] = aten.pointwise "copy" %[[G]] : (tensor<2x3x3xf16>) -> tensor<2x3x3xf32>
// CHECK: %[[S:.+]] = aten.sum %{{.+}} {dims = array<i64: 2>} : (tensor<2x3x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[A:.+]] = aten.div %[[S]], %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[R:.+]] = aten.pointwise "copy" %[[A]] : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK: return %[[R]]
func.func @uneven_avg_f16(%x: tensor<2x5xf16>) -> tensor<2x3xf16> {
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 1 : i64} : (tensor<2x5xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
