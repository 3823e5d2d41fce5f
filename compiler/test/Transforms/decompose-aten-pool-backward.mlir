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
