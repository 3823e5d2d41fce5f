// RUN: kiln-opt %s -split-input-file -kiln-fold-safe-softmax | FileCheck %s

// torch's decomposition of _safe_softmax (attention's softmax): one
// softmax that zeroes fully masked rows; the mask ops are gone.
// CHECK-LABEL: func @safe_softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16x16xf32>)
// CHECK-NOT: aten.any
// CHECK-NOT: aten.pointwise
// CHECK: %[[S:.+]] = aten.softmax %[[X]] {dim = 3 : i64, zero_masked_rows} : tensor<2x4x16x16xf32>
// CHECK-NEXT: return %[[S]]
func.func @safe_softmax(%x: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = aten.softmax %x {dim = 3 : i64} : tensor<2x4x16x16xf32>
  %1 = aten.constant dense<0xFF800000> : tensor<f32>
  %2 = aten.pointwise "eq" %x, %1 : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xi1>
  %3 = aten.pointwise "logical_not" %2 : (tensor<2x4x16x16xi1>) -> tensor<2x4x16x16xi1>
  %4 = aten.any %3 {dims = array<i64: 3>, keepdim = true} : (tensor<2x4x16x16xi1>) -> tensor<2x4x16x1xi1>
  %5 = aten.pointwise "logical_not" %4 : (tensor<2x4x16x1xi1>) -> tensor<2x4x16x1xi1>
  %6 = aten.constant dense<0.000000e+00> : tensor<2x4x16x16xf32>
  %7 = aten.pointwise "where" %5, %6, %0 : (tensor<2x4x16x1xi1>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  return %7 : tensor<2x4x16x16xf32>
}

// -----

// The all(eq(x, -inf)) form folds too.
// CHECK-LABEL: func @all_form
// CHECK: aten.softmax %arg0 {dim = 1 : i64, zero_masked_rows} : tensor<3x5xf32>
// CHECK-NOT: aten.all
func.func @all_form(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = aten.softmax %x {dim = 1 : i64} : tensor<3x5xf32>
  %1 = aten.constant dense<0xFF800000> : tensor<f32>
  %2 = aten.pointwise "eq" %x, %1 : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xi1>
  %3 = aten.all %2 {dims = array<i64: 1>, keepdim = true} : (tensor<3x5xi1>) -> tensor<3x1xi1>
  %4 = aten.constant dense<0.000000e+00> : tensor<f32>
  %5 = aten.pointwise "where" %3, %4, %0 : (tensor<3x1xi1>, tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return %5 : tensor<3x5xf32>
}

// -----

// Masks that are not the softmax's own rows stay as they are: another
// tensor's rows, another dim, a fill other than 0.
// CHECK-LABEL: func @not_safe_softmax
// CHECK-NOT: zero_masked_rows
// CHECK-COUNT-3: aten.pointwise "where"
func.func @not_safe_softmax(%x: tensor<3x5xf32>, %y: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = aten.softmax %x {dim = 1 : i64} : tensor<3x5xf32>
  %1 = aten.constant dense<0xFF800000> : tensor<f32>
  %2 = aten.pointwise "eq" %y, %1 : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xi1>
  %3 = aten.all %2 {dims = array<i64: 1>, keepdim = true} : (tensor<3x5xi1>) -> tensor<3x1xi1>
  %4 = aten.constant dense<0.000000e+00> : tensor<f32>
  %5 = aten.pointwise "where" %3, %4, %0 : (tensor<3x1xi1>, tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %6 = aten.pointwise "eq" %x, %1 : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xi1>
  %7 = aten.all %6 {dims = array<i64: 0>, keepdim = true} : (tensor<3x5xi1>) -> tensor<1x5xi1>
  %8 = aten.pointwise "where" %7, %4, %0 : (tensor<1x5xi1>, tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %9 = aten.all %6 {dims = array<i64: 1>, keepdim = true} : (tensor<3x5xi1>) -> tensor<3x1xi1>
  %10 = aten.constant dense<1.000000e+00> : tensor<f32>
  %11 = aten.pointwise "where" %9, %10, %0 : (tensor<3x1xi1>, tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return %5, %8, %11 : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// A softmax the graph also returns plain stays one softmax: folding would
// compute it a second time for the where.
// CHECK-LABEL: func @shared_softmax
// CHECK-COUNT-1: aten.softmax
// CHECK-NOT: zero_masked_rows
// CHECK: aten.pointwise "where"
func.func @shared_softmax(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = aten.softmax %x {dim = 1 : i64} : tensor<3x5xf32>
  %1 = aten.constant dense<0xFF800000> : tensor<f32>
  %2 = aten.pointwise "eq" %x, %1 : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xi1>
  %3 = aten.all %2 {dims = array<i64: 1>, keepdim = true} : (tensor<3x5xi1>) -> tensor<3x1xi1>
  %4 = aten.constant dense<0.000000e+00> : tensor<f32>
  %5 = aten.pointwise "where" %3, %4, %0 : (tensor<3x1xi1>, tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return %5, %0 : tensor<3x5xf32>, tensor<3x5xf32>
}
