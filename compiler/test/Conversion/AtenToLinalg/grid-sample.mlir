// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// Bilinear sampling with zeros padding: one generic over the result whose
// body reads the grid's (x, y), and four input taps at clamped indices, each
// 0 outside the input. No padding arithmetic (no reflection remainder).
// CHECK-LABEL: func @bilinear_zeros
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3x4x6xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<2x3x4x6xf32>)
// CHECK-COUNT-2: tensor.extract %arg1
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK-NOT: tensor.extract
// CHECK-NOT: arith.remf
// CHECK: linalg.yield %{{.+}} : f32
func.func @bilinear_zeros(%x: tensor<2x3x5x7xf32>, %g: tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32> {
  %0 = aten.grid_sample %x, %g {interpolation_mode = 0 : i64, padding_mode = 0 : i64,
      align_corners = false} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// -----

// Nearest rounds half to even; reflection folds the coordinate with a
// floating remainder before clipping it.
// CHECK-LABEL: func @nearest_reflection
// CHECK: linalg.generic
// CHECK: math.absf
// CHECK: arith.remf
// CHECK: math.roundeven
// CHECK-COUNT-1: tensor.extract %arg0
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @nearest_reflection(%x: tensor<1x2x5x7xf64>, %g: tensor<1x3x3x2xf64>) -> tensor<1x2x3x3xf64> {
  %0 = aten.grid_sample %x, %g {interpolation_mode = 1 : i64, padding_mode = 2 : i64,
      align_corners = true} : (tensor<1x2x5x7xf64>, tensor<1x3x3x2xf64>) -> tensor<1x2x3x3xf64>
  return %0 : tensor<1x2x3x3xf64>
}

// -----

// Bicubic reads 16 taps, each at padded coordinates; f16 computes in f16,
// rounding after every operation as eager's CPU kernel does.
// CHECK-LABEL: func @bicubic_border_f16
// CHECK: linalg.generic
// CHECK-NOT: arith.extf
// CHECK: arith.addf %{{.+}}, %{{.+}} : f16
// CHECK-COUNT-16: tensor.extract %arg0
// CHECK-NOT: tensor.extract
// CHECK-NOT: arith.truncf
// CHECK: linalg.yield %{{.+}} : f16
func.func @bicubic_border_f16(%x: tensor<1x1x4x4xf16>, %g: tensor<1x2x2x2xf16>) -> tensor<1x1x2x2xf16> {
  %0 = aten.grid_sample %x, %g {interpolation_mode = 2 : i64, padding_mode = 1 : i64,
      align_corners = false} : (tensor<1x1x4x4xf16>, tensor<1x2x2x2xf16>) -> tensor<1x1x2x2xf16>
  return %0 : tensor<1x1x2x2xf16>
}

// -----

// Trilinear (3-d) sampling: one 5-d generic reading the grid's (x, y, z) and
// eight input taps, each 0 outside the input.
// CHECK-LABEL: func @trilinear_border
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x2x2x3x4xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<1x2x2x3x4xf32>)
// CHECK-COUNT-3: tensor.extract %arg1
// CHECK-COUNT-3: math.floor
// CHECK-COUNT-8: tensor.extract %arg0
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield %{{.+}} : f32
func.func @trilinear_border(%x: tensor<1x2x3x4x5xf32>, %g: tensor<1x2x3x4x3xf32>) -> tensor<1x2x2x3x4xf32> {
  %0 = aten.grid_sample %x, %g {interpolation_mode = 0 : i64, padding_mode = 1 : i64,
      align_corners = false} : (tensor<1x2x3x4x5xf32>, tensor<1x2x3x4x3xf32>) -> tensor<1x2x2x3x4xf32>
  return %0 : tensor<1x2x2x3x4xf32>
}

// -----

// Nearest in 3-d: three rounded coordinates, one tap.
// CHECK-LABEL: func @nearest_3d
// CHECK: linalg.generic
// CHECK-COUNT-3: math.roundeven
// CHECK-COUNT-1: tensor.extract %arg0
// CHECK-NOT: tensor.extract
func.func @nearest_3d(%x: tensor<1x1x3x3x3xf64>, %g: tensor<1x1x2x2x3xf64>) -> tensor<1x1x1x2x2xf64> {
  %0 = aten.grid_sample %x, %g {interpolation_mode = 1 : i64, padding_mode = 0 : i64,
      align_corners = true} : (tensor<1x1x3x3x3xf64>, tensor<1x1x2x2x3xf64>) -> tensor<1x1x1x2x2xf64>
  return %0 : tensor<1x1x1x2x2xf64>
}
