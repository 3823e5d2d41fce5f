// RUN: kiln-opt %s -split-input-file -kiln-fold-broadcast-products | FileCheck %s

// The in-projection as torch's matmul decomposition leaves it: a weight
// broadcast over 128 batch entries (through an identity view) becomes one
// product over 128 * 8 rows.
// CHECK-LABEL: func @broadcast_weight
// CHECK-SAME: (%[[A:.+]]: tensor<128x8x256xf32>, %[[W:.+]]: tensor<256x768xf32>)
// CHECK-NOT: aten.expand
// CHECK-NOT: aten.bmm
// CHECK: %[[ROWS:.+]] = aten.view %[[A]] : (tensor<128x8x256xf32>) -> tensor<1024x256xf32>
// CHECK: %[[P:.+]] = aten.mm %[[ROWS]], %[[W]] : (tensor<1024x256xf32>, tensor<256x768xf32>) -> tensor<1024x768xf32>
// CHECK: %[[R:.+]] = aten.view %[[P]] : (tensor<1024x768xf32>) -> tensor<128x8x768xf32>
// CHECK: return %[[R]]
func.func @broadcast_weight(%a: tensor<128x8x256xf32>, %w: tensor<256x768xf32>) -> tensor<128x8x768xf32> {
  %e = aten.expand %w : (tensor<256x768xf32>) -> tensor<128x256x768xf32>
  %v = aten.view %e : (tensor<128x256x768xf32>) -> tensor<128x256x768xf32>
  %r = aten.bmm %a, %v : (tensor<128x8x256xf32>, tensor<128x256x768xf32>) -> tensor<128x8x768xf32>
  return %r : tensor<128x8x768xf32>
}

// -----

// A (1, K, N) weight is viewed as (K, N) first.
// CHECK-LABEL: func @unit_batch_weight
// CHECK: %[[W2:.+]] = aten.view %arg1 : (tensor<1x4x5xf16>) -> tensor<4x5xf16>
// CHECK: aten.mm %{{.+}}, %[[W2]] : (tensor<6x4xf16>, tensor<4x5xf16>) -> tensor<6x5xf16>
func.func @unit_batch_weight(%a: tensor<3x2x4xf16>, %w: tensor<1x4x5xf16>) -> tensor<3x2x5xf16> {
  %e = aten.expand %w : (tensor<1x4x5xf16>) -> tensor<3x4x5xf16>
  %r = aten.bmm %a, %e : (tensor<3x2x4xf16>, tensor<3x4x5xf16>) -> tensor<3x2x5xf16>
  return %r : tensor<3x2x5xf16>
}

// -----

// Not one matrix: a weight broadcast along K as well, and a batched mat2,
// stay batched products.
// CHECK-LABEL: func @not_one_matrix
// CHECK: aten.expand
// CHECK: aten.bmm
// CHECK: aten.bmm
// CHECK-NOT: aten.mm
func.func @not_one_matrix(%a: tensor<3x2x4xf32>, %row: tensor<1x5xf32>, %b: tensor<3x4x5xf32>) -> (tensor<3x2x5xf32>, tensor<3x2x5xf32>) {
  %e = aten.expand %row : (tensor<1x5xf32>) -> tensor<3x4x5xf32>
  %r = aten.bmm %a, %e : (tensor<3x2x4xf32>, tensor<3x4x5xf32>) -> tensor<3x2x5xf32>
  %s = aten.bmm %a, %b : (tensor<3x2x4xf32>, tensor<3x4x5xf32>) -> tensor<3x2x5xf32>
  return %r, %s : tensor<3x2x5xf32>, tensor<3x2x5xf32>
}

// -----

// A batch and rows of symbolic size: the views carry B*M, then B and M, as
// size operands.
// CHECK-LABEL: func @symbolic_batch
// CHECK-SAME: (%[[A:.+]]: tensor<?x?x4xf32>, %[[W:.+]]: tensor<4x5xf32>, %[[B:.+]]: index)
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[A]], %c1
// CHECK: %[[ROWS:.+]] = arith.muli %[[D0]], %[[D1]]
// CHECK: %[[FLAT:.+]] = aten.view %[[A]] sizes(%[[ROWS]]) : (tensor<?x?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[P:.+]] = aten.mm %[[FLAT]], %[[W]] : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
// CHECK: aten.view %[[P]] sizes(%[[D0]], %[[D1]]) : (tensor<?x5xf32>) -> tensor<?x?x5xf32>
func.func @symbolic_batch(%a: tensor<?x?x4xf32>, %w: tensor<4x5xf32>, %b: index) -> tensor<?x?x5xf32> {
  %e = aten.expand %w sizes(%b) : (tensor<4x5xf32>) -> tensor<?x4x5xf32>
  %r = aten.bmm %a, %e : (tensor<?x?x4xf32>, tensor<?x4x5xf32>) -> tensor<?x?x5xf32>
  return %r : tensor<?x?x5xf32>
}
