// RUN: kiln-opt %s -split-input-file -kiln-sink-permutes | FileCheck %s

// A channels-last activation permuted back, through relu, then permuted
// channels last again (the next convolution's input): the pairs cancel and
// relu runs on the channels-last tensor.
// CHECK-LABEL: func @cancel_through_relu
// CHECK-SAME: (%[[Y:.+]]: tensor<1x8x6x4xf32>)
// CHECK-NOT: aten.permute
// CHECK: %[[R:.+]] = aten.relu %[[Y]] : tensor<1x8x6x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @cancel_through_relu(%y: tensor<1x8x6x4xf32>) -> tensor<1x8x6x4xf32> {
  %0 = aten.permute %y {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %1 = aten.relu %0 : tensor<1x4x8x6xf32>
  %2 = aten.permute %1 {dims = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x6xf32>) -> tensor<1x8x6x4xf32>
  return %2 : tensor<1x8x6x4xf32>
}

// -----

// Both operands permuted the same way lose their permutes; a per-channel
// operand (4 of 192 elements) is viewed to rank 4 and permuted the other
// way; a 0-d one stays.
// CHECK-LABEL: func @binary_operands
// CHECK-SAME: (%[[A:.+]]: tensor<1x8x6x4xf32>, %[[B:.+]]: tensor<1x8x6x4xf32>, %[[C:.+]]: tensor<4x1x1xf32>, %[[S:.+]]: tensor<f32>)
// CHECK: %[[SUM:.+]] = aten.add %[[A]], %[[B]] {{.*}}: (tensor<1x8x6x4xf32>, tensor<1x8x6x4xf32>) -> tensor<1x8x6x4xf32>
// CHECK: %[[V:.+]] = aten.view %[[C]] : (tensor<4x1x1xf32>) -> tensor<1x4x1x1xf32>
// CHECK: %[[VC:.+]] = aten.view %[[V]] : (tensor<1x4x1x1xf32>) -> tensor<1x1x1x4xf32>
// CHECK: %[[M:.+]] = aten.mul %[[SUM]], %[[VC]] : (tensor<1x8x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x8x6x4xf32>
// CHECK: %[[P:.+]] = aten.pointwise "maximum" %[[M]], %[[S]] : (tensor<1x8x6x4xf32>, tensor<f32>) -> tensor<1x8x6x4xf32>
// CHECK: %[[OUT:.+]] = aten.permute %[[P]] {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
// CHECK: return %[[OUT]]
func.func @binary_operands(%a: tensor<1x8x6x4xf32>, %b: tensor<1x8x6x4xf32>, %c: tensor<4x1x1xf32>, %s: tensor<f32>) -> tensor<1x4x8x6xf32> {
  %pa = aten.permute %a {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %pb = aten.permute %b {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %0 = aten.add %pa, %pb : (tensor<1x4x8x6xf32>, tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32>
  %1 = aten.mul %0, %c : (tensor<1x4x8x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x6xf32>
  %2 = aten.pointwise "maximum" %1, %s : (tensor<1x4x8x6xf32>, tensor<f32>) -> tensor<1x4x8x6xf32>
  return %2 : tensor<1x4x8x6xf32>
}

// -----

// An operand of the result's size in the other layout would need a
// transpose of its own: the permute stays where it is.
// CHECK-LABEL: func @large_operand_stays
// CHECK: %[[P:.+]] = aten.permute %arg0
// CHECK: aten.add %[[P]], %arg1
func.func @large_operand_stays(%a: tensor<1x8x6x4xf32>, %b: tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32> {
  %pa = aten.permute %a {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %0 = aten.add %pa, %b : (tensor<1x4x8x6xf32>, tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32>
  return %0 : tensor<1x4x8x6xf32>
}

// -----

// A keepdim reduction over the spatial dims reduces the channels-last
// tensor's dims 1 and 2; without keepdim the permute stays.
// CHECK-LABEL: func @reductions
// CHECK-SAME: (%[[Y:.+]]: tensor<2x8x6x4xf32>)
// CHECK: %[[P:.+]] = aten.permute %[[Y]]
// CHECK: %[[M:.+]] = aten.amax %[[Y]] {dims = array<i64: 1, 2>, keepdim = true} : (tensor<2x8x6x4xf32>) -> tensor<2x1x1x4xf32>
// CHECK: aten.view %[[M]] : (tensor<2x1x1x4xf32>) -> tensor<2x4x1x1xf32>
// CHECK: aten.sum %[[P]] {dims = array<i64: 2, 3>} : (tensor<2x4x8x6xf32>) -> tensor<2x4xf32>
func.func @reductions(%y: tensor<2x8x6x4xf32>) -> (tensor<2x4x1x1xf32>, tensor<2x4xf32>) {
  %0 = aten.permute %y {dims = array<i64: 0, 3, 1, 2>} : (tensor<2x8x6x4xf32>) -> tensor<2x4x8x6xf32>
  %1 = aten.amax %0 {dims = array<i64: 2, 3>, keepdim = true} : (tensor<2x4x8x6xf32>) -> tensor<2x4x1x1xf32>
  %2 = aten.sum %0 {dims = array<i64: 2, 3>} : (tensor<2x4x8x6xf32>) -> tensor<2x4xf32>
  return %1, %2 : tensor<2x4x1x1xf32>, tensor<2x4xf32>
}

// -----

// adaptive_avg_pool2d to 1x1 (a pool whose window is the whole input) of
// a channels-last tensor is a mean over its spatial dims; the (1, 1, 1, C)
// result goes back as a view. A pool with a smaller window pools channels
// last, and its result is permuted back.
// CHECK-LABEL: func @global_pool
// CHECK-SAME: (%[[Y:.+]]: tensor<1x8x6x4xf32>)
// CHECK: %[[M:.+]] = aten.mean %[[Y]] {dims = array<i64: 1, 2>, keepdim = true} : (tensor<1x8x6x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK: %[[V:.+]] = aten.view %[[M]] : (tensor<1x1x1x4xf32>) -> tensor<1x4x1x1xf32>
// CHECK: %[[A:.+]] = aten.avg_pool %[[Y]] {channels_last, {{.*}}kernel = array<i64: 2, 2>{{.*}} : (tensor<1x8x6x4xf32>) -> tensor<1x4x3x4xf32>
// CHECK: %[[B:.+]] = aten.permute %[[A]] {dims = array<i64: 0, 3, 1, 2>}
// CHECK: return %[[V]], %[[B]]
func.func @global_pool(%y: tensor<1x8x6x4xf32>) -> (tensor<1x4x1x1xf32>, tensor<1x4x4x3xf32>) {
  %0 = aten.permute %y {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %1 = aten.avg_pool %0 {kernel = array<i64: 8, 6>, stride = array<i64: 8, 6>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<1x4x8x6xf32>) -> tensor<1x4x1x1xf32>
  %2 = aten.avg_pool %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<1x4x8x6xf32>) -> tensor<1x4x4x3xf32>
  return %1, %2 : tensor<1x4x1x1xf32>, tensor<1x4x4x3xf32>
}

// -----

// A permute that moves only extent-1 dims is a view; two that compose to
// a real transpose become one.
// CHECK-LABEL: func @views_and_compositions
// CHECK: aten.view %arg0 : (tensor<3x1x5xf32>) -> tensor<1x3x5xf32>
// CHECK: aten.permute %arg1 {dims = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
func.func @views_and_compositions(%a: tensor<3x1x5xf32>, %b: tensor<2x3x4xf32>) -> (tensor<1x3x5xf32>, tensor<4x2x3xf32>) {
  %0 = aten.permute %a {dims = array<i64: 1, 0, 2>} : (tensor<3x1x5xf32>) -> tensor<1x3x5xf32>
  %1 = aten.permute %b {dims = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %2 = aten.permute %1 {dims = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  return %0, %2 : tensor<1x3x5xf32>, tensor<4x2x3xf32>
}

// -----

// A vision transformer's patch embedding, conv(x).flatten(2).transpose(1, 2),
// of a channels-last convolution output: the flatten merges h and w, which
// stay adjacent channels last, so it happens there and the transposes
// cancel. A view that merges dims the permute separates stays.
// CHECK-LABEL: func @patch_embedding
// CHECK-SAME: (%[[Y:.+]]: tensor<2x4x6x8xf32>)
// CHECK: %[[P:.+]] = aten.permute %[[Y]] {dims = array<i64: 0, 3, 1, 2>}
// CHECK: %[[T:.+]] = aten.view %[[Y]] : (tensor<2x4x6x8xf32>) -> tensor<2x24x8xf32>
// CHECK: %[[M:.+]] = aten.view %[[P]] : (tensor<2x8x4x6xf32>) -> tensor<16x24xf32>
// CHECK: return %[[T]], %[[M]]
func.func @patch_embedding(%y: tensor<2x4x6x8xf32>) -> (tensor<2x24x8xf32>, tensor<16x24xf32>) {
  %0 = aten.permute %y {dims = array<i64: 0, 3, 1, 2>} : (tensor<2x4x6x8xf32>) -> tensor<2x8x4x6xf32>
  %1 = aten.view %0 : (tensor<2x8x4x6xf32>) -> tensor<2x8x24xf32>
  %2 = aten.permute %1 {dims = array<i64: 0, 2, 1>} : (tensor<2x8x24xf32>) -> tensor<2x24x8xf32>
  %3 = aten.view %0 : (tensor<2x8x4x6xf32>) -> tensor<16x24xf32>
  return %2, %3 : tensor<2x24x8xf32>, tensor<16x24xf32>
}

// -----

// resnet's stem: relu(permute(conv)) then max pooling whose indices nobody
// reads, then the next convolution's permute to channels last. The relu
// and the pool move to the channels-last data, and the permutes cancel: no
// transpose is left. A pool whose indices are read keeps its layout.
// CHECK-LABEL: func @stem_max_pool
// CHECK-SAME: (%[[Y:.+]]: tensor<1x8x8x4xf32>)
// CHECK: %[[R:.+]] = aten.relu %[[Y]] : tensor<1x8x8x4xf32>
// CHECK: %[[V:.+]], %{{.+}} = aten.max_pool %[[R]] {channels_last, {{.*}} : (tensor<1x8x8x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
// CHECK-NOT: aten.permute
// CHECK: return %[[V]]
func.func @stem_max_pool(%y: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = aten.permute %y {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = aten.relu %0 : tensor<1x4x8x8xf32>
  %v, %i = aten.max_pool %1 {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
  %2 = aten.permute %v {dims = array<i64: 0, 2, 3, 1>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %2 : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func @max_pool_indices_read
// CHECK: %[[P:.+]] = aten.permute
// CHECK: aten.max_pool %[[P]] {dilation
// CHECK-NOT: channels_last
func.func @max_pool_indices_read(%y: tensor<1x8x8x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>) {
  %0 = aten.permute %y {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %v, %i = aten.max_pool %0 {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
  return %v, %i : tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>
}

// -----

// A pool that is channels last already is no global pool of a
// channels-first tensor, whatever its extents: it stays a pool.
// CHECK-LABEL: func @channels_last_pool_stays
// CHECK-NOT: aten.mean
// CHECK: aten.avg_pool %{{.+}} {channels_last
func.func @channels_last_pool_stays(%y: tensor<1x2x1x4xf32>) -> tensor<1x2x1x1xf32> {
  %0 = aten.permute %y {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x2x1x4xf32>) -> tensor<1x4x2x1xf32>
  %1 = aten.avg_pool %0 {channels_last, kernel = array<i64: 2, 1>, stride = array<i64: 2, 2>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<1x4x2x1xf32>) -> tensor<1x2x1x1xf32>
  return %1 : tensor<1x2x1x1xf32>
}

// -----

// A float channels-last global pool is a mean of its spatial dims, with or
// without a permute before it; an integer one stays a pool (the mean of
// integers is no integer average).
// CHECK-LABEL: func @channels_last_global_pool
// CHECK: aten.mean %arg0 {dims = array<i64: 1, 2>, keepdim = true} : (tensor<2x3x5x4xf32>) -> tensor<2x1x1x4xf32>
// CHECK: aten.avg_pool %arg1 {channels_last
func.func @channels_last_global_pool(%x: tensor<2x3x5x4xf32>, %i: tensor<2x3x5x4xi32>) -> (tensor<2x1x1x4xf32>, tensor<2x1x1x4xi32>) {
  %0 = aten.avg_pool %x {channels_last, kernel = array<i64: 3, 5>, stride = array<i64: 3, 5>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<2x3x5x4xf32>) -> tensor<2x1x1x4xf32>
  %1 = aten.avg_pool %i {channels_last, kernel = array<i64: 3, 5>, stride = array<i64: 3, 5>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<2x3x5x4xi32>) -> tensor<2x1x1x4xi32>
  return %0, %1 : tensor<2x1x1x4xf32>, tensor<2x1x1x4xi32>
}
