// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// ord 2: sqrt of a sum of |x| * |x|.
// CHECK-LABEL: func @two
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x3xf32>)
// CHECK: %[[A:.+]] = aten.pointwise "abs" %[[X]] : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[S:.+]] = aten.mul %[[A]], %[[A]]
// CHECK: %[[SUM:.+]] = aten.sum %[[S]] {dims = array<i64: 2>} : (tensor<2x4x3xf32>) -> tensor<2x4xf32>
// CHECK: %[[N:.+]] = aten.pointwise "sqrt" %[[SUM]]
// CHECK: return %[[N]]
func.func @two(%x: tensor<2x4x3xf32>) -> tensor<2x4xf32> {
  %0 = aten.vector_norm %x {ord = 2.0 : f64, dims = array<i64: 2>} : (tensor<2x4x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// ord inf and -inf: amax and amin of |x|; an f16 input takes |x| in the
// f32 result type; keepdim carries over.
// CHECK-LABEL: func @infinities
// CHECK: %[[A:.+]] = aten.pointwise "abs" %{{.+}} : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK: aten.amax %[[A]] {dims = array<i64: 1>, keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK: aten.amin %{{.+}} {dims = array<i64>} : (tensor<2x3xf32>) -> tensor<f32>
func.func @infinities(%x: tensor<2x3xf16>) -> (tensor<2x1xf32>, tensor<f32>) {
  %0 = aten.vector_norm %x {ord = 0x7FF0000000000000 : f64, dims = array<i64: 1>, keepdim = true} : (tensor<2x3xf16>) -> tensor<2x1xf32>
  %1 = aten.vector_norm %x {ord = 0xFFF0000000000000 : f64, dims = array<i64>} : (tensor<2x3xf16>) -> tensor<f32>
  return %0, %1 : tensor<2x1xf32>, tensor<f32>
}

// -----

// ord 0 counts the nonzero elements; ord 1 sums |x|; ord 3 is
// (sum |x|^3)^(1/3).
// CHECK-LABEL: func @others
// CHECK: %[[NZ:.+]] = aten.pointwise "ne" %{{.+}}, %{{.+}} : (tensor<5xf64>, tensor<f64>) -> tensor<5xi1>
// CHECK: %[[ONES:.+]] = aten.pointwise "copy" %[[NZ]] : (tensor<5xi1>) -> tensor<5xf64>
// CHECK: aten.sum %[[ONES]] {dims = array<i64>}
// CHECK: %[[A1:.+]] = aten.pointwise "abs"
// CHECK: aten.sum %[[A1]] {dims = array<i64>}
// CHECK: %[[P:.+]] = aten.pointwise "pow" %{{.+}}, %{{.+}} : (tensor<5xf64>, tensor<f64>) -> tensor<5xf64>
// CHECK: %[[S3:.+]] = aten.sum %[[P]]
// CHECK: aten.pointwise "pow" %[[S3]], %{{.+}} : (tensor<f64>, tensor<f64>) -> tensor<f64>
func.func @others(%x: tensor<5xf64>) -> (tensor<f64>, tensor<f64>, tensor<f64>) {
  %0 = aten.vector_norm %x {ord = 0.0 : f64, dims = array<i64>} : (tensor<5xf64>) -> tensor<f64>
  %1 = aten.vector_norm %x {ord = 1.0 : f64, dims = array<i64>} : (tensor<5xf64>) -> tensor<f64>
  %2 = aten.vector_norm %x {ord = 3.0 : f64, dims = array<i64>} : (tensor<5xf64>) -> tensor<f64>
  return %0, %1, %2 : tensor<f64>, tensor<f64>, tensor<f64>
}
