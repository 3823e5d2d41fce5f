// RUN: kiln-opt %s -kiln-decompose-aten | FileCheck %s

// A 5x6 plane pooled to 3x2 by 2x3 windows. Each pooled dim's starts come
// from its sample u as eager computes them in the element type:
// trunc((i + u) * alpha) - trunc(u * alpha), alpha = (In - K) / (Out - 1)
// (3 along W, 1.5 along H), the last window at In - K, clamped to
// [0, In - K]; then the flattened plane positions h * 6 + w of every
// window, a gather, and eager's scan: the first maximum, or the last NaN.
// CHECK-LABEL: func @fractional_2d
// CHECK: %[[U:.+]] = aten.view %{{.+}} : (tensor<1x2x2xf32>) -> tensor<2x2xf32>
// The W dim (sample 1): alpha 3.
// CHECK: %[[UW:.+]] = aten.slice %[[U]] {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<2x2xf32>) -> tensor<2x1xf32>
// CHECK: %[[AW:.+]] = aten.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[IW:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<2xi64>) -> tensor<2xf32>
// CHECK: %[[SUMW:.+]] = aten.add %[[IW]], %[[UW]] : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
// CHECK: aten.mul %[[SUMW]], %[[AW]]
// CHECK: aten.pointwise "copy" %{{.+}} : (tensor<2x2xf32>) -> tensor<2x2xi64>
// CHECK: aten.mul %[[UW]], %[[AW]]
// CHECK: %[[STARTW:.+]] = aten.sub %{{.+}}, %{{.+}} : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
// CHECK: %[[LASTW:.+]] = aten.constant dense<3> : tensor<i64>
// CHECK: aten.pointwise "where" %{{.+}}, %[[LASTW]], %[[STARTW]]
// CHECK: %[[WINW:.+]] = aten.add %{{.+}}, %{{.+}} : (tensor<2x2x1xi64>, tensor<3xi64>) -> tensor<2x2x3xi64>
// CHECK: aten.view %[[WINW]] : (tensor<2x2x3xi64>) -> tensor<2x1x2x1x3xi64>
// The H dim (sample 0): alpha 1.5, positions times the row stride 6.
// CHECK: aten.slice %[[U]] {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x2xf32>) -> tensor<2x1xf32>
// CHECK: aten.constant dense<1.500000e+00> : tensor<f32>
// CHECK: %[[WINH:.+]] = aten.add %{{.+}}, %{{.+}} : (tensor<2x3x1xi64>, tensor<2xi64>) -> tensor<2x3x2xi64>
// CHECK: %[[ROW:.+]] = aten.constant dense<6> : tensor<i64>
// CHECK: %[[HOFF:.+]] = aten.mul %{{.+}}, %[[ROW]] : (tensor<2x3x1x2x1xi64>, tensor<i64>) -> tensor<2x3x1x2x1xi64>
// CHECK: %[[FLAT:.+]] = aten.add %{{.+}}, %[[HOFF]] : (tensor<2x1x2x1x3xi64>, tensor<2x3x1x2x1xi64>) -> tensor<2x3x2x2x3xi64>
// CHECK: %[[POS:.+]] = aten.view %[[FLAT]] : (tensor<2x3x2x2x3xi64>) -> tensor<2x6x6xi64>
// CHECK: %[[PLANE:.+]] = aten.view %{{.+}} : (tensor<1x2x5x6xf32>) -> tensor<2x30xf32>
// CHECK: %[[G:.+]] = aten.gather %[[PLANE]], %{{.+}} {dim = 1 : i64} : (tensor<2x30xf32>, tensor<2x36xi64>) -> tensor<2x36xf32>
// CHECK: %[[W:.+]] = aten.view %[[G]] : (tensor<2x36xf32>) -> tensor<2x6x6xf32>
// CHECK: %[[NAN:.+]] = aten.pointwise "ne" %[[W]], %[[W]]
// CHECK: %[[CLEAN:.+]] = aten.pointwise "where" %[[NAN]], %{{.+}}, %[[W]]
// CHECK: %[[FIRST:.+]] = aten.arg_reduce %[[CLEAN]] {dim = 2 : i64, keepdim = true, max = true} : (tensor<2x6x6xf32>) -> tensor<2x6x1xi64>
// CHECK: %[[NANAT:.+]] = aten.pointwise "where" %[[NAN]], %{{.+}}, %{{.+}} : (tensor<2x6x6xi1>, tensor<6xi64>, tensor<i64>) -> tensor<2x6x6xi64>
// CHECK: %[[LAST:.+]] = aten.amax %[[NANAT]] {dims = array<i64: 2>, keepdim = true} : (tensor<2x6x6xi64>) -> tensor<2x6x1xi64>
// CHECK: %[[ANY:.+]] = aten.pointwise "ge" %[[LAST]], %{{.+}}
// CHECK: %[[PICK:.+]] = aten.pointwise "where" %[[ANY]], %[[LAST]], %[[FIRST]]
// CHECK: %[[V:.+]] = aten.gather %[[W]], %[[PICK]] {dim = 2 : i64}
// CHECK: %[[I:.+]] = aten.gather %[[POS]], %[[PICK]] {dim = 2 : i64}
// CHECK: %[[VV:.+]] = aten.view %[[V]] : (tensor<2x6x1xf32>) -> tensor<1x2x3x2xf32>
// CHECK: %[[IV:.+]] = aten.view %[[I]] : (tensor<2x6x1xi64>) -> tensor<1x2x3x2xi64>
// CHECK: return %[[VV]], %[[IV]]
// CHECK-NOT: aten.fractional_max_pool
func.func @fractional_2d(%x: tensor<1x2x5x6xf32>, %u: tensor<1x2x2xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x2x3x2xi64>) {
  %v, %i = aten.fractional_max_pool %x, %u {kernel = array<i64: 2, 3>} : (tensor<1x2x5x6xf32>, tensor<1x2x2xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x2x3x2xi64>)
  return %v, %i : tensor<1x2x3x2xf32>, tensor<1x2x3x2xi64>
}

// One output along a dim: its only window starts at In - K, whatever the
// sample. f16's alpha is (In - K) / (Out - 1) rounded to f16: 7 / 3 ->
// 2.333984375.
// CHECK-LABEL: func @fractional_3d_f16
// CHECK: aten.constant dense<2.333980e+00> : tensor<f16>
// CHECK: aten.constant dense<3> : tensor<2x1xi64>
// CHECK: aten.gather
// CHECK-NOT: aten.fractional_max_pool
func.func @fractional_3d_f16(%x: tensor<2x4x9x5xf16>, %u: tensor<2x3xf16>) -> (tensor<2x1x4x5xf16>, tensor<2x1x4x5xi64>) {
  %v, %i = aten.fractional_max_pool %x, %u {kernel = array<i64: 1, 2, 1>} : (tensor<2x4x9x5xf16>, tensor<2x3xf16>) -> (tensor<2x1x4x5xf16>, tensor<2x1x4x5xi64>)
  return %v, %i : tensor<2x1x4x5xf16>, tensor<2x1x4x5xi64>
}
