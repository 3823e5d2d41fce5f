// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Antialiased bilinear from 4 to 2 columns (and 2 rows to 1): scale 2, so
// the triangle spans 2 input samples each side with its argument halved.
// Output 0 centres at 1: inputs 0..2 at -0.25, 0.25, 0.75 weigh 0.75,
// 0.75, 0.25, normalised by 1.75 to 3/7, 3/7, 1/7; output 1 mirrors it;
// the one output row weighs both rows 1/2. The (in, out) table multiplies
// the (N C H, W) rows; then the (H, H_out) one the columns.
// CHECK-LABEL: func @bilinear_half
// CHECK: %[[ROWS:.+]] = aten.view %arg0 : (tensor<1x2x2x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[W:.+]] = aten.constant dense<{{\[\[}}0.428571{{[0-9]*}}, 0.000000e+00], [0.428571{{[0-9]*}}, 0.142857{{[0-9]*}}], [0.142857{{[0-9]*}}, 0.428571{{[0-9]*}}], [0.000000e+00, 0.428571{{[0-9]*}}]]> : tensor<4x2xf32>
// CHECK: aten.mm %[[ROWS]], %[[W]] : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK: aten.permute %{{.+}} {dims = array<i64: 0, 2, 1>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
// CHECK: %[[H:.+]] = aten.constant dense<5.000000e-01> : tensor<2x1xf32>
// CHECK: aten.mm %{{.+}}, %[[H]] : (tensor<4x2xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
// CHECK: %[[BACK:.+]] = aten.permute %{{.+}} {dims = array<i64: 0, 2, 1>} : (tensor<2x2x1xf32>) -> tensor<2x1x2xf32>
// CHECK: %[[OUT:.+]] = aten.view %[[BACK]] : (tensor<2x1x2xf32>) -> tensor<1x2x1x2xf32>
// CHECK: return %[[OUT]]
func.func @bilinear_half(%x: tensor<1x2x2x4xf32>) -> tensor<1x2x1x2xf32> {
  %0 = aten.upsample_separable %x {mode = "bilinear", antialias = true, align_corners = false} : (tensor<1x2x2x4xf32>) -> tensor<1x2x1x2xf32>
  return %0 : tensor<1x2x1x2xf32>
}

// -----

// Rows whose extent stays are left alone whatever scale_h says (eager
// skips the dim): one product, along W.
// CHECK-LABEL: func @kept_rows
// CHECK-COUNT-1: aten.mm
// CHECK-NOT: aten.mm
// CHECK-NOT: aten.permute
func.func @kept_rows(%x: tensor<1x1x10x16xf32>) -> tensor<1x1x10x8xf32> {
  %0 = aten.upsample_separable %x {mode = "bilinear", antialias = true, align_corners = false, scale_h = 1.05 : f64, scale_w = 0.5 : f64} : (tensor<1x1x10x16xf32>) -> tensor<1x1x10x8xf32>
  return %0 : tensor<1x1x10x8xf32>
}

// -----

// Bicubic upsampling (scale below 1): the Keys cubic over 2 samples each
// side, unscaled; f64 tables for an f64 tensor.
// CHECK-LABEL: func @bicubic_up
// CHECK: aten.constant dense<{{.+}}> : tensor<3x5xf64>
// CHECK: aten.mm %{{.+}}, %{{.+}} : (tensor<6x3xf64>, tensor<3x5xf64>) -> tensor<6x5xf64>
// CHECK: aten.constant dense<{{.+}}> : tensor<2x4xf64>
// CHECK: aten.mm %{{.+}}, %{{.+}} : (tensor<15x2xf64>, tensor<2x4xf64>) -> tensor<15x4xf64>
func.func @bicubic_up(%x: tensor<1x3x2x3xf64>) -> tensor<1x3x4x5xf64> {
  %0 = aten.upsample_separable %x {mode = "bicubic", antialias = true, align_corners = false} : (tensor<1x3x2x3xf64>) -> tensor<1x3x4x5xf64>
  return %0 : tensor<1x3x4x5xf64>
}

// -----

// uint8 (carried in i16), plain bilinear from 2 to 4 columns, as eager's
// uint8 kernel: scale 1/2, source indices -0.25 (clamped to 0), 0.25, 0.75
// and 1.25 (index 1, whose second tap past the edge folds onto it), so the
// weights are (1, 0), (3/4, 1/4), (1/4, 3/4) and (1). The largest is 1, so
// the precision is 14: int weights times 2^14 in an i32 product, then
// + 2^13, >> 14 and clamped to [0, 255], back in i16.
// CHECK-LABEL: func @uint8_bilinear
// CHECK: aten.pointwise "copy" %arg0 : (tensor<1x1x1x2xi16>) -> tensor<1x1x1x2xi32>
// CHECK: %[[W:.+]] = aten.constant dense<{{\[\[}}16384, 12288, 4096, 0], [0, 4096, 12288, 16384]]> : tensor<2x4xi32>
// CHECK: %[[P:.+]] = aten.mm %{{.+}}, %[[W]] : (tensor<1x2xi32>, tensor<2x4xi32>) -> tensor<1x4xi32>
// CHECK: %[[HALF:.+]] = aten.constant dense<8192> : tensor<i32>
// CHECK: %[[SUM:.+]] = aten.add %[[P]], %[[HALF]] : (tensor<1x4xi32>, tensor<i32>) -> tensor<1x4xi32>
// CHECK: %[[P14:.+]] = aten.constant dense<14> : tensor<i32>
// CHECK: %[[SHIFT:.+]] = aten.pointwise "bitwise_right_shift" %[[SUM]], %[[P14]]
// CHECK: aten.pointwise "clamp" %[[SHIFT]] {scalars = array<f64: 0.000000e+00, 2.550000e+02>}
// CHECK: aten.pointwise "copy" %{{.+}} : (tensor<1x1x1x4xi32>) -> tensor<1x1x1x4xi16>
func.func @uint8_bilinear(%x: tensor<1x1x1x2xi16>) -> tensor<1x1x1x4xi16> {
  %0 = aten.upsample_separable %x {mode = "bilinear", antialias = false, align_corners = false} : (tensor<1x1x1x2xi16>) -> tensor<1x1x1x4xi16>
  return %0 : tensor<1x1x1x4xi16>
}

// -----

// Plain bicubic (Keys, a = -0.75) from 3 to 2 rows with align_corners:
// scale 2, source indices 0 and 2. Output 0's taps -1..2 fold the one past
// the edge onto input 0 (weights 1 and 0 there); output 1 sits on the last
// input, whose taps past it fold onto it too. Only H changes: one product.
// CHECK-LABEL: func @uint8_bicubic_rows
// CHECK: aten.permute
// CHECK: aten.constant dense<{{\[\[}}16384, 0], [0, 0], [0, 16384]]> : tensor<3x2xi32>
// CHECK-COUNT-1: aten.mm
// CHECK-NOT: aten.mm
func.func @uint8_bicubic_rows(%x: tensor<1x2x3x5xi16>) -> tensor<1x2x2x5xi16> {
  %0 = aten.upsample_separable %x {mode = "bicubic", antialias = false, align_corners = true} : (tensor<1x2x3x5xi16>) -> tensor<1x2x2x5xi16>
  return %0 : tensor<1x2x2x5xi16>
}
