// RUN: kiln-opt %s -kiln-decompose-aten | FileCheck %s

// Lengths along axis 1: each segment's [start, end) from their running sum,
// a (P, S, N) mask of the positions it holds, the data outside it set to
// the identity, one reduction over N; mean with `initial` divides
// initial + sum by the length, and an empty segment keeps initial.
// CHECK-LABEL: func @segment_mean
// CHECK: %[[L:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<2x4xi32>) -> tensor<2x4xi64>
// CHECK: %[[END:.+]] = aten.cumsum %[[L]] {dim = 1 : i64} : (tensor<2x4xi64>) -> tensor<2x4xi64>
// CHECK: %[[START:.+]] = aten.sub %[[END]], %[[L]]
// CHECK: %[[POS:.+]] = aten.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// CHECK: %[[GE:.+]] = aten.pointwise "ge" %[[POS]], %{{.+}} : (tensor<6xi64>, tensor<2x4x1xi64>) -> tensor<2x4x6xi1>
// CHECK: %[[LT:.+]] = aten.pointwise "lt" %[[POS]], %{{.+}} : (tensor<6xi64>, tensor<2x4x1xi64>) -> tensor<2x4x6xi1>
// CHECK: %[[HOLDS:.+]] = aten.pointwise "logical_and" %[[GE]], %[[LT]]
// CHECK: %[[ZERO:.+]] = aten.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[MASKED:.+]] = aten.pointwise "where" %{{.+}}, %{{.+}}, %[[ZERO]] : (tensor<2x4x6x1xi1>, tensor<2x1x6x3xf32>, tensor<f32>) -> tensor<2x4x6x3xf32>
// CHECK: %[[SUM:.+]] = aten.sum %[[MASKED]] {dims = array<i64: 2>} : (tensor<2x4x6x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[INIT:.+]] = aten.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[COUNT:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<2x4x1xi64>) -> tensor<2x4x1xf32>
// CHECK: %[[SOME:.+]] = aten.pointwise "gt" %[[COUNT]], %{{.+}}
// CHECK: %[[TOTAL:.+]] = aten.add %[[INIT]], %[[SUM]]
// CHECK: %[[MEAN:.+]] = aten.div %[[TOTAL]], %[[COUNT]]
// CHECK: %[[R:.+]] = aten.pointwise "where" %[[SOME]], %[[MEAN]], %[[INIT]]
// CHECK: return %[[R]]
// CHECK-NOT: aten.segment_reduce
func.func @segment_mean(%x: tensor<2x6x3xf32>, %l: tensor<2x4xi32>) -> tensor<2x4x3xf32> {
  %r = aten.segment_reduce %x, %l {reduce = "mean", axis = 1 : i64, initial = 5.000000e-01 : f64} : (tensor<2x6x3xf32>, tensor<2x4xi32>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}

// Offsets: the starts and ends are their two overlapping slices; max's
// identity is -inf and amax lets a NaN win.
// CHECK-LABEL: func @segment_max_offsets
// CHECK: %[[O:.+]] = aten.view %{{.+}} : (tensor<4xi64>) -> tensor<1x4xi64>
// CHECK: aten.slice %[[O]] {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4xi64>) -> tensor<1x3xi64>
// CHECK: aten.slice %[[O]] {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x4xi64>) -> tensor<1x3xi64>
// CHECK: aten.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[M:.+]] = aten.amax %{{.+}} {dims = array<i64: 2>} : (tensor<1x3x9x1xf32>) -> tensor<1x3x1xf32>
// CHECK: %[[R:.+]] = aten.view %[[M]] : (tensor<1x3x1xf32>) -> tensor<3xf32>
// CHECK: return %[[R]]
func.func @segment_max_offsets(%x: tensor<9xf32>, %o: tensor<4xi64>) -> tensor<3xf32> {
  %r = aten.segment_reduce %x, %o {reduce = "max", axis = 0 : i64, offsets} : (tensor<9xf32>, tensor<4xi64>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
