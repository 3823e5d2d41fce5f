// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// CHECK-LABEL: func @mm
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = aten.mm %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// alpha = 1: the product accumulates into beta * broadcast(bias).
// CHECK-LABEL: func @addmm_into_bias
// CHECK: %[[BIAS:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<16xf32>)
// CHECK:   arith.mulf
// CHECK: linalg.matmul ins(%arg1, %arg2 : {{.*}}) outs(%[[BIAS]] : tensor<4x16xf32>)
func.func @addmm_into_bias(%bias: tensor<16xf32>, %a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = aten.addmm %bias, %a, %b {beta = 0.5 : f64} : (tensor<16xf32>, tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// alpha != 1: product first, then beta * self + alpha * product.
// CHECK-LABEL: func @addmm_alpha
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[P]] : tensor<16xf32>, tensor<4x16xf32>)
// CHECK:   arith.constant 3.000000e+00 : f32
func.func @addmm_alpha(%bias: tensor<16xf32>, %a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = aten.addmm %bias, %a, %b {alpha = 3.0 : f64} : (tensor<16xf32>, tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func @bmm
// CHECK: linalg.batch_matmul ins(%arg0, %arg1 : tensor<2x4x8xf32>, tensor<2x8x5xf32>)
func.func @bmm(%a: tensor<2x4x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<2x4x5xf32> {
  %0 = aten.bmm %a, %b : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

// f16/bf16 products accumulate in f32 and round once.
// CHECK-LABEL: func @mm_f16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32>) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @mm_f16(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf16> {
  %0 = aten.mm %a, %b : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}
