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
  %0 = aten.upsample_aa %x {mode = "bilinear", align_corners = false} : (tensor<1x2x2x4xf32>) -> tensor<1x2x1x2xf32>
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
  %0 = aten.upsample_aa %x {mode = "bilinear", align_corners = false, scale_h = 1.05 : f64, scale_w = 0.5 : f64} : (tensor<1x1x10x16xf32>) -> tensor<1x1x10x8xf32>
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
  %0 = aten.upsample_aa %x {mode = "bicubic", align_corners = false} : (tensor<1x3x2x3xf64>) -> tensor<1x3x4x5xf64>
  return %0 : tensor<1x3x4x5xf64>
}
