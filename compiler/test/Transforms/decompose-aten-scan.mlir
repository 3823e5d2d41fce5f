// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// cummax as a triangular reduction: x expanded to (i, j) pairs, the unseen
// j > i replaced by x[i], amax over j; the index is the last seen j equal
// to the maximum (or NaN when it is NaN).
// CHECK-LABEL: func @cummax
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[XJ1:.+]] = aten.view %[[X]] : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
// CHECK: %[[XJ:.+]] = aten.expand %[[XJ1]] : (tensor<2x1x3xf32>) -> tensor<2x3x3xf32>
// CHECK: %[[XI:.+]] = aten.view %[[X]] : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[SEEN:.+]] = aten.constant dense<{{\[}}[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
// CHECK: %[[WIN:.+]] = aten.pointwise "where" %[[SEEN]], %[[XJ]], %[[XI]]
// CHECK: %[[V:.+]] = aten.amax %[[WIN]] {dims = array<i64: 2>} : (tensor<2x3x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[B:.+]] = aten.view %[[V]] : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[EQ:.+]] = aten.pointwise "eq" %[[XJ]], %[[B]]
// CHECK: %[[N1:.+]] = aten.pointwise "isnan" %[[XJ]]
// CHECK: %[[N2:.+]] = aten.pointwise "isnan" %[[B]]
// CHECK: %[[NN:.+]] = aten.pointwise "logical_and" %[[N1]], %[[N2]]
// CHECK: %[[HIT0:.+]] = aten.pointwise "logical_or" %[[EQ]], %[[NN]]
// CHECK: %[[HIT:.+]] = aten.pointwise "logical_and" %[[HIT0]], %[[SEEN]]
// CHECK: %[[J:.+]] = aten.constant dense<{{\[}}[0, 1, 2]]> : tensor<1x3xi64>
// CHECK: %[[NONE:.+]] = aten.constant dense<-1> : tensor<i64>
// CHECK: %[[CAND:.+]] = aten.pointwise "where" %[[HIT]], %[[J]], %[[NONE]] : (tensor<2x3x3xi1>, tensor<1x3xi64>, tensor<i64>) -> tensor<2x3x3xi64>
// CHECK: %[[IDX:.+]] = aten.amax %[[CAND]] {dims = array<i64: 2>} : (tensor<2x3x3xi64>) -> tensor<2x3xi64>
// CHECK: return %[[V]], %[[IDX]]
func.func @cummax(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %v, %i = aten.cummax %x {dim = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %v, %i : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// cummin over dim 0 of an integer tensor: amin, no NaN test; the masks
// carry ones for the trailing dims.
// CHECK-LABEL: func @cummin
// CHECK: aten.constant dense<{{\[\[\[\[}}true]], {{\[\[}}false]]], {{\[\[\[}}true]], {{\[\[}}true]]]]> : tensor<2x2x1x1xi1>
// CHECK: aten.amin %{{.+}} {dims = array<i64: 1>} : (tensor<2x2x3x4xi32>) -> tensor<2x3x4xi32>
// CHECK-NOT: isnan
// CHECK: aten.constant dense<{{\[\[\[\[}}0]], {{\[\[}}1]]]]> : tensor<1x2x1x1xi64>
// CHECK: aten.amax %{{.+}} {dims = array<i64: 1>} : (tensor<2x2x3x4xi64>) -> tensor<2x3x4xi64>
func.func @cummin(%x: tensor<2x3x4xi32>) -> (tensor<2x3x4xi32>, tensor<2x3x4xi64>) {
  %v, %i = aten.cummin %x {dim = 0 : i64} : (tensor<2x3x4xi32>) -> (tensor<2x3x4xi32>, tensor<2x3x4xi64>)
  return %v, %i : tensor<2x3x4xi32>, tensor<2x3x4xi64>
}

// -----

// A 0-d input scans its one element as [1], and the results view back.
// CHECK-LABEL: func @cummax_scalar
// CHECK-SAME: (%[[X:.+]]: tensor<f32>)
// CHECK: %[[X1:.+]] = aten.view %[[X]] : (tensor<f32>) -> tensor<1xf32>
// CHECK: %[[V:.+]] = aten.amax %{{.+}} {dims = array<i64: 1>} : (tensor<1x1xf32>) -> tensor<1xf32>
// CHECK: %[[I:.+]] = aten.amax %{{.+}} {dims = array<i64: 1>} : (tensor<1x1xi64>) -> tensor<1xi64>
// CHECK: %[[V0:.+]] = aten.view %[[V]] : (tensor<1xf32>) -> tensor<f32>
// CHECK: %[[I0:.+]] = aten.view %[[I]] : (tensor<1xi64>) -> tensor<i64>
// CHECK: return %[[V0]], %[[I0]]
func.func @cummax_scalar(%x: tensor<f32>) -> (tensor<f32>, tensor<i64>) {
  %v, %i = aten.cummax %x {dim = 0 : i64} : (tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %v, %i : tensor<f32>, tensor<i64>
}

// -----

// logcumsumexp over dim 0, in f64 as eager accumulates f32: pairs
// (i, j, rest) with j <= i seen, shifted by the prefix's maximum (0 where
// that is infinite).
// CHECK-LABEL: func @logcumsumexp
// CHECK-SAME: (%[[X:.+]]: tensor<2x5xf32>)
// CHECK: %[[WIDE:.+]] = aten.pointwise "copy" %[[X]] : (tensor<2x5xf32>) -> tensor<2x5xf64>
// CHECK: %[[XJ:.+]] = aten.expand %{{.+}} : (tensor<1x2x5xf64>) -> tensor<2x2x5xf64>
// CHECK: %[[SEEN:.+]] = aten.constant dense<{{\[\[\[}}true], [false]], {{\[\[}}true], [true]]]> : tensor<2x2x1xi1>
// CHECK: %[[NEGINF:.+]] = aten.constant dense<0xFFF0000000000000> : tensor<f64>
// CHECK: %[[WIN:.+]] = aten.pointwise "where" %[[SEEN]], %[[XJ]], %[[NEGINF]]
// CHECK: %[[TOP:.+]] = aten.amax %[[WIN]] {dims = array<i64: 1>, keepdim = true} : (tensor<2x2x5xf64>) -> tensor<2x1x5xf64>
// CHECK: %[[INF:.+]] = aten.pointwise "isinf" %[[TOP]]
// CHECK: %[[SHIFT:.+]] = aten.pointwise "where" %[[INF]], %{{.+}}, %[[TOP]]
// CHECK: %[[C:.+]] = aten.sub %[[WIN]], %[[SHIFT]] {{.*}}-> tensor<2x2x5xf64>
// CHECK: %[[E:.+]] = aten.exp %[[C]]
// CHECK: %[[S:.+]] = aten.sum %[[E]] {dims = array<i64: 1>, keepdim = true}
// CHECK: %[[L:.+]] = aten.pointwise "log" %[[S]]
// CHECK: %[[OUT:.+]] = aten.add %[[L]], %[[SHIFT]] {{.*}}-> tensor<2x1x5xf64>
// CHECK: %[[LR:.+]] = aten.view %[[OUT]] : (tensor<2x1x5xf64>) -> tensor<2x5xf64>
// CHECK: %[[NARROW:.+]] = aten.pointwise "copy" %[[LR]] : (tensor<2x5xf64>) -> tensor<2x5xf32>
// CHECK: return %[[NARROW]]
func.func @logcumsumexp(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = aten.logcumsumexp %x {dim = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Complex parts are left for the loop lowering at any length: only eager's
// order of steps gives its imaginary parts.
// CHECK-LABEL: func @complex_logcumsumexp_left
// CHECK: aten.logcumsumexp %arg0 {complex, dim = 0 : i64}
// CHECK-NOT: aten.amax
func.func @complex_logcumsumexp_left(%z: tensor<5x2xf32>) -> tensor<5x2xf32> {
  %0 = aten.logcumsumexp %z {complex, dim = 0 : i64} : (tensor<5x2xf32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

// A dim over 128 is left for the loop lowering (AtenToLinalg/Scans.cpp).
// CHECK-LABEL: func @cummin_long_left
// CHECK: aten.cummin %arg0 {dim = 1 : i64}
// CHECK-NOT: aten.amin
func.func @cummin_long_left(%x: tensor<2x129xi32>) -> (tensor<2x129xi32>, tensor<2x129xi64>) {
  %v, %i = aten.cummin %x {dim = 1 : i64} : (tensor<2x129xi32>) -> (tensor<2x129xi32>, tensor<2x129xi64>)
  return %v, %i : tensor<2x129xi32>, tensor<2x129xi64>
}
