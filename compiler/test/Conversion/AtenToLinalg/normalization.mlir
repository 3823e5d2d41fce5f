// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// Two-pass statistics over the last dim, rsqrt(var + eps), then the affine
// transform with weight and bias in one elementwise map.
// CHECK-LABEL: func @layer_norm
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: %[[MEAN:.+]] = tensor.expand_shape {{.*}} into tensor<2x1xf32>
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: math.rsqrt
// CHECK: %[[RSTD:.+]] = tensor.expand_shape {{.*}} into tensor<2x1xf32>
// CHECK: %[[OUT:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[RSTD]], %arg1, %arg2 :
// CHECK: return %[[OUT]], %[[MEAN]], %[[RSTD]]
func.func @layer_norm(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %0, %1, %2 = aten.native_layer_norm %x, weight %w, bias %b {normalized_rank = 1 : i64, eps = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %0, %1, %2 : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
