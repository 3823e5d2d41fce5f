// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Padding (2, 3) past dilation * (kernel - 1) = (1, 2): the convolution is
// computed padded by (1, 2), its 9x8 output (7x6 widened by 2 * (1, 1))
// keeps the bias, and the 7x6 the padding asked for is cut from offset
// (1, 1).
// CHECK-LABEL: func @crops
// CHECK: %[[UNCUT:.+]] = aten.convolution %arg0, %arg1, bias %arg2 {dilation = array<i64: 1, 2>, groups = 1 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 2>, stride = array<i64: 2, 2>, transposed = true} : (tensor<1x2x5x5xf32>, tensor<2x3x2x2xf32>, tensor<3xf32>) -> tensor<1x3x9x8xf32>
// CHECK-NEXT: %[[CUT:.+]] = aten.slice %[[UNCUT]] {offsets = array<i64: 0, 0, 1, 1>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x9x8xf32>) -> tensor<1x3x7x6xf32>
// CHECK-NEXT: return %[[CUT]]
func.func @crops(%x: tensor<1x2x5x5xf32>, %w: tensor<2x3x2x2xf32>, %b: tensor<3xf32>) -> tensor<1x3x7x6xf32> {
  %0 = aten.convolution %x, %w, bias %b {stride = array<i64: 2, 2>, padding = array<i64: 2, 3>, dilation = array<i64: 1, 2>, output_padding = array<i64: 1, 1>, transposed = true, groups = 1 : i64}
      : (tensor<1x2x5x5xf32>, tensor<2x3x2x2xf32>, tensor<3xf32>) -> tensor<1x3x7x6xf32>
  return %0 : tensor<1x3x7x6xf32>
}

// -----

// Padding within dilation * (kernel - 1), and a forward convolution padded
// past its kernel, stay as they are.
// CHECK-LABEL: func @untouched
// CHECK: aten.convolution %arg0, %arg1 {{.+}}padding = array<i64: 1, 1>{{.+}}transposed = true
// CHECK: aten.convolution %arg0, %arg2 {{.+}}padding = array<i64: 2, 2>{{.+}}transposed = false
// CHECK-NOT: aten.slice
func.func @untouched(%x: tensor<1x2x5x5xf32>, %w: tensor<2x3x3x3xf32>, %v: tensor<3x2x1x1xf32>) -> (tensor<1x3x5x5xf32>, tensor<1x3x9x9xf32>) {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = true, groups = 1 : i64}
      : (tensor<1x2x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = aten.convolution %x, %v {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x9x9xf32>
  return %0, %1 : tensor<1x3x5x5xf32>, tensor<1x3x9x9xf32>
}

// -----

// An uncut output past 2^40 elements (2 x 1 x (2^40 - 1)) stays as it is,
// for the lowering to refuse by name; nothing overflows on the way.
// CHECK-LABEL: func @too_large_to_widen
// CHECK: aten.convolution %arg0, %arg1 {{.+}}padding = array<i64: 549755813887>{{.+}}transposed = true
// CHECK-NOT: aten.slice
func.func @too_large_to_widen(%x: tensor<2x1x1xf32>, %w: tensor<1x1x1xf32>) -> tensor<2x1x1xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1099511627776>, padding = array<i64: 549755813887>, dilation = array<i64: 1>, output_padding = array<i64: 1099511627774>, transposed = true, groups = 1 : i64}
      : (tensor<2x1x1xf32>, tensor<1x1x1xf32>) -> tensor<2x1x1xf32>
  return %0 : tensor<2x1x1xf32>
}
