// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// A padded 2-d convolution: zero padding by insert_slice, im2col as a
// gathering generic, then batch_matmul and a broadcast bias add.
// CHECK-DAG: #[[COLS:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 3 + d2, d5 + d3, d6 + d4)>
// CHECK-LABEL: func @conv2d
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<1x3x10x10xf32>)
// CHECK: %[[PAD:.+]] = tensor.insert_slice %{{.+}} into %[[FILL]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[COLS]], #{{.+}}]{{.*}} ins(%[[PAD]] : tensor<1x3x10x10xf32>) outs(%{{.+}} : tensor<1x1x3x3x3x8x8xf32>)
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x4x27xf32>, tensor<1x27x64xf32>) outs(%{{.+}} : tensor<1x4x64xf32>)
// CHECK: arith.addf
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %0 = aten.convolution %x, %w, bias %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// Depthwise (one channel per group): one generic reducing over the window,
// strided and dilated reads of the input.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4 * 2, d3 * 2 + d5 * 2)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, 0, d4, d5)>
// CHECK-LABEL: func @depthwise
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.batch_matmul
func.func @depthwise(%x: tensor<2x6x9x9xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<2x6x3x3xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>,
      dilation = array<i64: 2, 2>, output_padding = array<i64: 0, 0>, transposed = false, groups = 6 : i64}
      : (tensor<2x6x9x9xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x3x3xf32>
  return %0 : tensor<2x6x3x3xf32>
}

// -----

// Grouped 1-d convolution: batch_matmul over (batch x group), the weights
// repeated over the batch.
// CHECK-LABEL: func @grouped_conv1d
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<4x3x6xf32>, tensor<4x6x6xf32>)
func.func @grouped_conv1d(%x: tensor<2x4x8xf32>, %w: tensor<6x2x3xf32>) -> tensor<2x6x6xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>,
      dilation = array<i64: 1>, output_padding = array<i64: 0>, transposed = false, groups = 2 : i64}
      : (tensor<2x4x8xf32>, tensor<6x2x3xf32>) -> tensor<2x6x6xf32>
  return %0 : tensor<2x6x6xf32>
}

// -----

// Transposed: the input is dilated by the stride (insert_slice strides) and
// padded by k - 1 - padding; the kernel is flipped.
// CHECK-DAG: #[[FLIP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 4 + d2, d1, -d3 + 2, -d4 + 2)>
// CHECK-LABEL: func @transposed
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 1] [1, 4, 5, 5] [1, 1, 2, 2] : tensor<1x4x5x5xf32> into tensor<1x4x12x12xf32>
// CHECK: linalg.generic {indexing_maps = [#[[FLIP]], #{{.+}}]
// CHECK: linalg.batch_matmul
func.func @transposed(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, transposed = true, groups = 1 : i64}
      : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return %0 : tensor<1x3x10x10xf32>
}

// -----

// A 7x7 output (49 positions, no vector width) with 16 channels: the product
// is computed spatial-major (P x K) * (K x F) and transposed back, so the
// matmul vectorizes along the channels.
// CHECK-LABEL: func @spatial_major
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x16x72xf32>) outs(%{{.+}} : tensor<1x72x16xf32>) permutation = [0, 2, 1]
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x49x72xf32>, tensor<1x72x16xf32>) outs(%{{.+}} : tensor<1x49x16xf32>)
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x49x16xf32>) outs(%{{.+}} : tensor<1x16x49xf32>) permutation = [0, 2, 1]
func.func @spatial_major(%x: tensor<1x8x7x7xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x7x7xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x8x7x7xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x7x7xf32>
  return %0 : tensor<1x16x7x7xf32>
}

// -----

// Spatial-major with a batch and one group: the batch folds into the rows,
// (N*P x K) * (K x F), so the weights are used once, not repeated per image.
// CHECK-LABEL: func @spatial_major_batch
// CHECK-NOT: tensor<2x1x72x16xf32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x16x72xf32>) outs(%{{.+}} : tensor<1x72x16xf32>) permutation = [0, 2, 1]
// CHECK-NOT: tensor<2x1x72x16xf32>
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x98x72xf32>, tensor<1x72x16xf32>) outs(%{{.+}} : tensor<1x98x16xf32>)
// CHECK: linalg.transpose ins(%{{.+}} : tensor<2x49x16xf32>) outs(%{{.+}} : tensor<2x16x49xf32>) permutation = [0, 2, 1]
func.func @spatial_major_batch(%x: tensor<2x8x7x7xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x7x7xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<2x8x7x7xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x7x7xf32>
  return %0 : tensor<2x16x7x7xf32>
}

// -----

// f16 convolves in f32: inputs, weights and bias extended, products summed in
// f32, one rounding to f16 at the end (3x3x64 terms summed in f16 drift).
// CHECK-LABEL: func @conv2d_f16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x36x576xf32>, tensor<1x576x16xf32>) outs(%{{.+}} : tensor<1x36x16xf32>)
// CHECK: arith.addf %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @conv2d_f16(%x: tensor<1x64x8x8xf16>, %w: tensor<16x64x3x3xf16>, %b: tensor<16xf16>) -> tensor<1x16x6x6xf16> {
  %0 = aten.convolution %x, %w, bias %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x64x8x8xf16>, tensor<16x64x3x3xf16>, tensor<16xf16>) -> tensor<1x16x6x6xf16>
  return %0 : tensor<1x16x6x6xf16>
}
