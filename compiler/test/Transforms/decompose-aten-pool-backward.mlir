// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// A 2x2, stride 2 pool: one window covers each input position, so J = 1;
// the gather picks each position's window gradient where its saved index
// names the position.
// CHECK-LABEL: func @tiled
// CHECK: %[[SRC:.+]] = aten.constant dense<[0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3]> : tensor<16xi64>
// CHECK: aten.index_select %{{.+}}, %[[SRC]] {dim = 1 : i64} : (tensor<3x4xi64>, tensor<16xi64>) -> tensor<3x16xi64>
// CHECK: %[[SUM:.+]] = aten.sum %{{.+}} {dims = array<i64: 2>} : (tensor<3x16x1xf32>) -> tensor<3x16xf32>
// CHECK: aten.view %[[SUM]] : (tensor<3x16xf32>) -> tensor<3x4x4xf32>
// CHECK-NOT: aten.scatter
func.func @tiled(%dy: tensor<3x2x2xf32>, %x: tensor<3x4x4xf32>, %i: tensor<3x2x2xi64>) -> tensor<3x4x4xf32> {
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<3x2x2xf32>, tensor<3x4x4xf32>, tensor<3x2x2xi64>) -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

// A kernel past 4096 takes the scatter-add over the whole plane.
// CHECK-LABEL: func @scatter
// CHECK: %[[Z:.+]] = aten.constant dense<0.000000e+00> : tensor<1x5000xf32>
// CHECK: %[[DX:.+]] = aten.scatter %[[Z]], %{{.+}}, %{{.+}} {dim = 1 : i64, reduce = "sum"} : (tensor<1x5000xf32>, tensor<1x1xi64>, tensor<1x1xf32>) -> tensor<1x5000xf32>
// CHECK: aten.view %[[DX]] : (tensor<1x5000xf32>) -> tensor<1x1x5000xf32>
// CHECK-NOT: aten.index_select
func.func @scatter(%dy: tensor<1x1x1xf32>, %x: tensor<1x1x5000xf32>, %i: tensor<1x1x1xi64>) -> tensor<1x1x5000xf32> {
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 1, 5000>, stride = array<i64: 1, 5000>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<1x1x1xf32>, tensor<1x1x5000xf32>, tensor<1x1x1xi64>) -> tensor<1x1x5000xf32>
  return %0 : tensor<1x1x5000xf32>
}

// -----

// A 3x3, stride 1 pool over a 4096x4096 plane: 9 windows per position make
// a table past 2^24 entries, so the scatter-add.
// CHECK-LABEL: func @large_plane
// CHECK: aten.scatter %{{.+}}, %{{.+}}, %{{.+}} {dim = 1 : i64, reduce = "sum"} : (tensor<1x16777216xf32>, tensor<1x16777216xi64>, tensor<1x16777216xf32>) -> tensor<1x16777216xf32>
// CHECK-NOT: aten.index_select
func.func @large_plane(%dy: tensor<1x4096x4096xf32>, %x: tensor<1x4096x4096xf32>, %i: tensor<1x4096x4096xi64>) -> tensor<1x4096x4096xf32> {
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4096x4096xf32>, tensor<1x4096x4096xf32>, tensor<1x4096x4096xi64>) -> tensor<1x4096x4096xf32>
  return %0 : tensor<1x4096x4096xf32>
}

// -----

// 2^20 planes of 16 positions with 4 windows each would gather 2^26
// elements per intermediate: within the bound, the gather. 2^24 planes
// (2^30 elements) take the scatter.
// CHECK-LABEL: func @many_planes
// CHECK: aten.index_select
// CHECK: aten.scatter %{{.+}} : (tensor<16777216x16xf32>, tensor<16777216x4xi64>, tensor<16777216x4xf32>) -> tensor<16777216x16xf32>
func.func @many_planes(%dy: tensor<1024x1024x2x2xf32>, %x: tensor<1024x1024x4x4xf32>, %i: tensor<1024x1024x2x2xi64>,
                       %dy2: tensor<4096x4096x2x2xf32>, %x2: tensor<4096x4096x4x4xf32>, %i2: tensor<4096x4096x2x2xi64>)
    -> (tensor<1024x1024x4x4xf32>, tensor<4096x4096x4x4xf32>) {
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1024x1024x2x2xf32>, tensor<1024x1024x4x4xf32>, tensor<1024x1024x2x2xi64>) -> tensor<1024x1024x4x4xf32>
  %1 = aten.max_pool_backward %dy2, %x2, %i2 {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<4096x4096x2x2xf32>, tensor<4096x4096x4x4xf32>, tensor<4096x4096x2x2xi64>) -> tensor<4096x4096x4x4xf32>
  return %0, %1 : tensor<1024x1024x4x4xf32>, tensor<4096x4096x4x4xf32>
}
