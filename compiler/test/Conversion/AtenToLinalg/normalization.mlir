// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// Two-pass statistics over the last dim, rsqrt(var + eps), then the affine
// transform with weight and bias in one elementwise map. Both sums
// reassociate (vector partial sums, as eager's kernel). The squared
// deviations and the output read x and its row's mean: no centred copy of
// x is made.
// CHECK-LABEL: func @layer_norm
// CHECK: %[[COUNT:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: arith.divf %{{.+}}, %[[COUNT]]
// CHECK: %[[MEAN:.+]] = tensor.expand_shape {{.*}} into tensor<2x1xf32>
// CHECK-NOT: tensor<2x8xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[MEAN]] : tensor<2x8xf32>, tensor<2x1xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: %[[D:.+]] = arith.subf
// CHECK: %[[SQ:.+]] = arith.mulf %[[D]], %[[D]]
// CHECK: arith.addf %{{.+}}, %[[SQ]] fastmath<reassoc> : f32
// CHECK: math.rsqrt
// CHECK: %[[RSTD:.+]] = tensor.expand_shape {{.*}} into tensor<2x1xf32>
// CHECK: %[[OUT:.+]] = linalg.generic {{.*}} ins(%arg0, %[[MEAN]], %[[RSTD]], %arg1, %arg2 :
// CHECK: arith.subf
// CHECK: return %[[OUT]], %[[MEAN]], %[[RSTD]]
func.func @layer_norm(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %0, %1, %2 = aten.native_layer_norm %x, weight %w, bias %b {normalized_rank = 1 : i64, eps = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %0, %1, %2 : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// f16 input: statistics and arithmetic in f32 (the declared mean/rstd type),
// the output rounded back to f16.
// CHECK-LABEL: func @layer_norm_f16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: math.rsqrt %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @layer_norm_f16(%x: tensor<2x8xf16>) -> (tensor<2x8xf16>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %out, %mean, %rstd = aten.native_layer_norm %x {normalized_rank = 1 : i64, eps = 1.0e-05 : f64}
      : (tensor<2x8xf16>) -> (tensor<2x8xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %out, %mean, %rstd : tensor<2x8xf16>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// bf16 statistics (what PyTorch's CPU kernel returns for a bf16 input): the
// sums, the rsqrt and the normalisation are still f32; only the stored
// statistics are rounded to bf16, after the output used them unrounded.
// CHECK-LABEL: func @layer_norm_bf16_statistics
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: math.rsqrt %{{.+}} : f32
// CHECK: arith.mulf %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK-NOT: math.rsqrt %{{.+}} : bf16
func.func @layer_norm_bf16_statistics(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>) -> (tensor<2x8xbf16>, tensor<2x1xbf16>, tensor<2x1xbf16>) {
  %out, %mean, %rstd = aten.native_layer_norm %x, weight %w {normalized_rank = 1 : i64, eps = 1.0e-05 : f64}
      : (tensor<2x8xbf16>, tensor<8xbf16>) -> (tensor<2x8xbf16>, tensor<2x1xbf16>, tensor<2x1xbf16>)
  return %out, %mean, %rstd : tensor<2x8xbf16>, tensor<2x1xbf16>, tensor<2x1xbf16>
}
