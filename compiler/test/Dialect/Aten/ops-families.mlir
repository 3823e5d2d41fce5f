// RUN: kiln-opt %s -split-input-file | kiln-opt | FileCheck %s
// Round trip of the table-driven, convolution and pooling ops.

// CHECK-LABEL: func @pointwise
func.func @pointwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %c: tensor<2x3xi1>) -> tensor<2x3xf32> {
  // CHECK: aten.pointwise "clamp" %{{.+}} {scalars = array<f64: 0.000000e+00, 6.000000e+00>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = aten.pointwise "clamp" %x {scalars = array<f64: 0.0, 6.0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: aten.pointwise "lt" %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = aten.pointwise "lt" %0, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: aten.pointwise "where"
  %2 = aten.pointwise "where" %1, %0, %y : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// CHECK-LABEL: func @reductions
func.func @reductions(%x: tensor<2x8xf32>) -> (tensor<2xf32>, tensor<1x8xf32>, tensor<i1>, tensor<2xf32>, tensor<2xi64>, tensor<2x8xf32>) {
  // CHECK: aten.amax %{{.+}} {dims = array<i64: 1>}
  %0 = aten.amax %x {dims = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2xf32>
  // CHECK: aten.prod %{{.+}} {dims = array<i64: 0>, keepdim = true}
  %1 = aten.prod %x {dims = array<i64: 0>, keepdim = true} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  // CHECK: aten.any
  %2 = aten.any %x {dims = array<i64>} : (tensor<2x8xf32>) -> tensor<i1>
  // CHECK: aten.var %{{.+}} {correction = 1.000000e+00 : f64, dims = array<i64: 1>, std = true}
  %3 = aten.var %x {dims = array<i64: 1>, correction = 1.0 : f64, std = true} : (tensor<2x8xf32>) -> tensor<2xf32>
  // CHECK: aten.arg_reduce %{{.+}} {dim = 1 : i64, max = false}
  %4 = aten.arg_reduce %x {dim = 1 : i64, max = false} : (tensor<2x8xf32>) -> tensor<2xi64>
  // CHECK: aten.cumsum %{{.+}} {dim = 1 : i64}
  %5 = aten.cumsum %x {dim = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<1x8xf32>, tensor<i1>, tensor<2xf32>, tensor<2xi64>, tensor<2x8xf32>
}

// CHECK-LABEL: func @indexing
func.func @indexing(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %j: tensor<4x2xi64>) -> (tensor<4x3xf32>, tensor<8x8xf32>, tensor<3x8xf32>, tensor<4x2xf32>, tensor<5xi64>) {
  // CHECK: aten.slice %{{.+}} {offsets = array<i64: 0, 1>, strides = array<i64: 1, 3>}
  %0 = aten.slice %x {offsets = array<i64: 0, 1>, strides = array<i64: 1, 3>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  // CHECK: aten.cat %{{.+}}, %{{.+}} {dim = 0 : i64}
  %1 = aten.cat %x, %x {dim = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // CHECK: aten.index_select %{{.+}}, %{{.+}} {dim = 0 : i64}
  %2 = aten.index_select %x, %i {dim = 0 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  // CHECK: aten.gather %{{.+}}, %{{.+}} {dim = 1 : i64}
  %3 = aten.gather %x, %j {dim = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  // CHECK: aten.arange {start = 0.000000e+00 : f64, step = 1.000000e+00 : f64} : tensor<5xi64>
  %4 = aten.arange {start = 0.0 : f64, step = 1.0 : f64} : tensor<5xi64>
  return %0, %1, %2, %3, %4 : tensor<4x3xf32>, tensor<8x8xf32>, tensor<3x8xf32>, tensor<4x2xf32>, tensor<5xi64>
}

// CHECK-LABEL: func @nn
func.func @nn(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>, tensor<1x4x4x4xf32>) {
  // CHECK: aten.convolution %{{.+}}, %{{.+}}, bias %{{.+}} {dilation = array<i64: 1, 1>, groups = 2 : i64
  %0 = aten.convolution %x, %w, bias %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: aten.max_pool %{{.+}} {dilation = array<i64: 1, 1>, kernel = array<i64: 3, 3>
  %1:2 = aten.max_pool %0 {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
  // CHECK: aten.avg_pool %{{.+}} {count_include_pad = true, divisor_override = 0 : i64
  %2 = aten.avg_pool %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0, %1#0, %1#1, %2 : tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>, tensor<1x4x4x4xf32>
}

// Channels last: (n, spatial..., c), the last dim kept; 1-d and 3-d too.
// CHECK-LABEL: func @channels_last_pools
// CHECK: aten.max_pool %{{.+}} {channels_last, dilation = array<i64: 1>
// CHECK: aten.avg_pool %{{.+}} {channels_last, count_include_pad = false
func.func @channels_last_pools(%x: tensor<2x9x3xf32>, %v: tensor<1x4x4x4x5xi32>) -> (tensor<2x4x3xf32>, tensor<2x4x3xi64>, tensor<1x2x2x2x5xi32>) {
  %0:2 = aten.max_pool %x {channels_last, kernel = array<i64: 3>, stride = array<i64: 2>,
      padding = array<i64: 0>, dilation = array<i64: 1>}
      : (tensor<2x9x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x4x3xi64>)
  %1 = aten.avg_pool %v {channels_last, kernel = array<i64: 2, 2, 2>, stride = array<i64: 2, 2, 2>,
      padding = array<i64: 0, 0, 0>, count_include_pad = false, divisor_override = 0 : i64}
      : (tensor<1x4x4x4x5xi32>) -> tensor<1x2x2x2x5xi32>
  return %0#0, %0#1, %1 : tensor<2x4x3xf32>, tensor<2x4x3xi64>, tensor<1x2x2x2x5xi32>
}

// CHECK-LABEL: func @scatter_pad
func.func @scatter_pad(%x: tensor<4x8xf32>, %s: tensor<4x3xf32>) -> (tensor<4x8xf32>, tensor<4x11xf32>, tensor<4x8xf32>) {
  // CHECK: aten.insert_slice %{{.+}}, %{{.+}} {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>}
  %0 = aten.insert_slice %x, %s {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  // CHECK: aten.pad %{{.+}} {high = array<i64: 0, 2>, low = array<i64: 0, 1>, value = 0.000000e+00 : f64}
  %1 = aten.pad %0 {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = 0.0 : f64} : (tensor<4x8xf32>) -> tensor<4x11xf32>
  // CHECK: aten.log_softmax %{{.+}} {dim = 1 : i64} : tensor<4x8xf32>
  %2 = aten.log_softmax %0 {dim = 1 : i64} : tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x11xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func @index_put
func.func @index_put(%x: tensor<5x3xf32>, %i: tensor<2xi64>, %v: tensor<2x3xf32>) -> tensor<5x3xf32> {
  // CHECK: aten.index_put %{{.+}}, %{{.+}}, %{{.+}} {accumulate = false}
  %0 = aten.index_put %x, %i, %v {accumulate = false} : (tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// CHECK-LABEL: func @scatter
func.func @scatter(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // CHECK: aten.scatter %{{.+}}, %{{.+}}, %{{.+}} {dim = 1 : i64, reduce = "none"}
  %0 = aten.scatter %x, %i, %s {dim = 1 : i64, reduce = "none"} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func @scatter_reduce_family
func.func @scatter_reduce_family(%x: tensor<4x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x6xf32>) -> tensor<4x5xf32> {
  // CHECK: aten.scatter_reduce %{{.+}}, %{{.+}}, %{{.+}} {dim = 1 : i64, include_self = false, reduce = "mean"}
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "mean", include_self = false} : (tensor<4x5xf32>, tensor<3x4xi64>, tensor<3x6xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// CHECK-LABEL: func @sort
func.func @sort(%x: tensor<2x5xi32>) -> (tensor<2x5xi32>, tensor<2x5xi64>) {
  // CHECK: aten.sort %{{.+}} {descending = true, dim = 1 : i64}
  %v, %i = aten.sort %x {dim = 1 : i64, descending = true} : (tensor<2x5xi32>) -> (tensor<2x5xi32>, tensor<2x5xi64>)
  return %v, %i : tensor<2x5xi32>, tensor<2x5xi64>
}
