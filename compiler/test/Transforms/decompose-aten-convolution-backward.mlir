// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Grouped (2 groups), weight and bias gradients only: the input viewed as
// (C_in/g, g*N, S...) convolved by grad_output as (C_out, N, O...) in 2
// groups, then transposed back; the bias gradient a sum over (N, O...).
// No transposed convolution: the input gradient is not asked for.
// CHECK-LABEL: func @grouped
// CHECK-NOT: transposed = true
// CHECK: %[[X:.+]] = aten.view %{{.+}} : (tensor<1x2x2x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK: %[[K:.+]] = aten.permute %arg0 {dims = array<i64: 1, 0, 2, 3>} : (tensor<2x4x8x8xf32>) -> tensor<4x2x8x8xf32>
// CHECK: %[[DW:.+]] = aten.convolution %[[X]], %[[K]] {dilation = array<i64: 1, 1>, groups = 2 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, transposed = false} : (tensor<1x4x8x8xf32>, tensor<4x2x8x8xf32>) -> tensor<1x4x3x3xf32>
// CHECK: %[[W:.+]] = aten.permute %[[DW]] {dims = array<i64: 1, 0, 2, 3>} : (tensor<1x4x3x3xf32>) -> tensor<4x1x3x3xf32>
// CHECK: %[[B:.+]] = aten.sum %arg0 {dims = array<i64: 0, 2, 3>} : (tensor<2x4x8x8xf32>) -> tensor<4xf32>
// CHECK: return %[[W]], %[[B]]
func.func @grouped(%dy: tensor<2x4x8x8xf32>, %x: tensor<2x2x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<4x1x3x3xf32>, tensor<4xf32>) {
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64, output_mask = array<i1: false, true, true>}
      : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>) -> (tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>)
  return %dw, %db : tensor<4x1x3x3xf32>, tensor<4xf32>
}

// -----

// 1-d, input gradient only: a transposed convolution by the weight, with
// the output padding (10 + 0 - 2 - 1 - 3 * 2 = 1) that gives back 10.
// CHECK-LABEL: func @input_only
// CHECK: %[[DX:.+]] = aten.convolution %arg0, %arg2 {dilation = array<i64: 1>, groups = 1 : i64, output_padding = array<i64: 1>, padding = array<i64: 0>, stride = array<i64: 2>, transposed = true} : (tensor<1x2x4xf32>, tensor<2x3x3xf32>) -> tensor<1x3x10xf32>
// CHECK-NEXT: return %[[DX]]
func.func @input_only(%dy: tensor<1x2x4xf32>, %x: tensor<1x3x10xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x3x10xf32> {
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 2>, padding = array<i64: 0>, dilation = array<i64: 1>, groups = 1 : i64, output_mask = array<i1: true, false, false>}
      : (tensor<1x2x4xf32>, tensor<1x3x10xf32>, tensor<2x3x3xf32>) -> (tensor<1x3x10xf32>, tensor<2x3x3xf32>, tensor<2xf32>)
  return %dx : tensor<1x3x10xf32>
}

// -----

// 3-d, strided, dilated and grouped, every gradient: a grouped transposed
// convolution (output padding 9 + 2 - 2 - 1 - 2 * 3 = 2 along the first
// dim, 6 - 2 * 2 - 1 - 1 = 0 along the second); the weight gradient with
// stride (3, 1, 1) and dilation (1, 2, 1) swapped into the convolution,
// cut from 5 to 3 along the first dim (input rows the forward's stride
// never reached); the bias a sum over (N, O...).
// CHECK-LABEL: func @full_3d
// CHECK: %[[DX:.+]] = aten.convolution %arg0, %arg2 {dilation = array<i64: 1, 2, 1>, groups = 2 : i64, output_padding = array<i64: 2, 0, 0>, padding = array<i64: 1, 0, 0>, stride = array<i64: 3, 1, 1>, transposed = true} : (tensor<1x4x3x2x4xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x9x6x6xf32>
// CHECK: %[[DW:.+]] = aten.convolution %{{.+}}, %{{.+}} {dilation = array<i64: 3, 1, 1>, groups = 2 : i64, output_padding = array<i64: 0, 0, 0>, padding = array<i64: 1, 0, 0>, stride = array<i64: 1, 2, 1>, transposed = false} : (tensor<2x2x9x6x6xf32>, tensor<4x1x3x2x4xf32>) -> tensor<2x4x5x3x3xf32>
// CHECK: %[[CUT:.+]] = aten.slice %[[DW]] {{.+}} : (tensor<2x4x5x3x3xf32>) -> tensor<2x4x3x3x3xf32>
// CHECK: %[[W:.+]] = aten.permute %[[CUT]] {dims = array<i64: 1, 0, 2, 3, 4>} : (tensor<2x4x3x3x3xf32>) -> tensor<4x2x3x3x3xf32>
// CHECK: %[[B:.+]] = aten.sum %arg0 {dims = array<i64: 0, 2, 3, 4>} : (tensor<1x4x3x2x4xf32>) -> tensor<4xf32>
// CHECK: return %[[DX]], %[[W]], %[[B]]
func.func @full_3d(%dy: tensor<1x4x3x2x4xf32>, %x: tensor<1x4x9x6x6xf32>, %w: tensor<4x2x3x3x3xf32>)
    -> (tensor<1x4x9x6x6xf32>, tensor<4x2x3x3x3xf32>, tensor<4xf32>) {
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 3, 1, 1>, padding = array<i64: 1, 0, 0>, dilation = array<i64: 1, 2, 1>, groups = 2 : i64, output_mask = array<i1: true, true, true>}
      : (tensor<1x4x3x2x4xf32>, tensor<1x4x9x6x6xf32>, tensor<4x2x3x3x3xf32>) -> (tensor<1x4x9x6x6xf32>, tensor<4x2x3x3x3xf32>, tensor<4xf32>)
  return %dx, %dw, %db : tensor<1x4x9x6x6xf32>, tensor<4x2x3x3x3xf32>, tensor<4xf32>
}

// -----

// Padding past dilation * (kernel - 1) (1 against 0 along the first dim,
// whose kernel is 1): the transposed convolution pads by at most that, so
// it computes the gradient of the input widened by 1 on each side, 6 rows,
// and the input's 4 are cut out of it.
// CHECK-LABEL: func @padding_past_the_kernel
// CHECK: %[[WIDE:.+]] = aten.convolution %arg0, %arg2 {dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 0, 1>, stride = array<i64: 1, 1>, transposed = true} : (tensor<2x4x6x5xf32>, tensor<4x3x1x3xf32>) -> tensor<2x3x6x5xf32>
// CHECK-NEXT: %[[DX:.+]] = aten.slice %[[WIDE]] {offsets = array<i64: 0, 0, 1, 0>, strides = array<i64: 1, 1, 1, 1>} : (tensor<2x3x6x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT: return %[[DX]]
func.func @padding_past_the_kernel(%dy: tensor<2x4x6x5xf32>, %x: tensor<2x3x4x5xf32>, %w: tensor<4x3x1x3xf32>) -> tensor<2x3x4x5xf32> {
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, output_mask = array<i1: true, false, false>}
      : (tensor<2x4x6x5xf32>, tensor<2x3x4x5xf32>, tensor<4x3x1x3xf32>) -> (tensor<2x3x4x5xf32>, tensor<4x3x1x3xf32>, tensor<4xf32>)
  return %dx : tensor<2x3x4x5xf32>
}
