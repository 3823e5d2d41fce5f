// RUN: kiln-opt %s -canonicalize | FileCheck %s

// A view to the same type folds away.
// CHECK-LABEL: func @view_identity
// CHECK-NEXT: return %arg0
func.func @view_identity(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = aten.view %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
