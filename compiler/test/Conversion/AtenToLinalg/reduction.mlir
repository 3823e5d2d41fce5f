// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @sum_keepdim
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:   arith.addf
// CHECK: tensor.expand_shape {{.*}} : tensor<8xf32> into tensor<2x1x4xf32>
func.func @sum_keepdim(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = aten.sum %x {dims = array<i64: 1>, keepdim = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// mean divides the sum by the number of reduced elements (3 * 4).
// CHECK-LABEL: func @mean_two_dims
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: arith.divf
func.func @mean_two_dims(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  %0 = aten.mean %x {dims = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Stable softmax: max, exp(x - max), sum, divide.
// CHECK-LABEL: func @softmax
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = aten.softmax %x {dim = 1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// With zero_masked_rows (_safe_softmax), the division's generic also reads
// the row maximum and gives 0 where it is -inf.
// CHECK-LABEL: func @safe_softmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK: %[[Q:.+]] = arith.divf
// CHECK: %[[M:.+]] = arith.cmpf oeq, %{{.+}}, %{{.+}} : f32
// CHECK: arith.select %[[M]], %{{.+}}, %[[Q]] : f32
func.func @safe_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = aten.softmax %x {dim = 1 : i64, zero_masked_rows} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// f16 sums and means accumulate in f32 and round once, as eager does
// (2304 f16 values near 40 overflow f16 summed in f16).
// CHECK-LABEL: func @mean_f16
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.addf %{{.+}} : f32
// CHECK: arith.constant 2.304000e+03 : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @mean_f16(%x: tensor<3x2304xf16>) -> tensor<3xf16> {
  %0 = aten.mean %x {dims = array<i64: 1>, keepdim = false} : (tensor<3x2304xf16>) -> tensor<3xf16>
  return %0 : tensor<3xf16>
}
