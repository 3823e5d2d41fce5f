// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// Per matrix (the batch loop carries only the two results: scratch tensors
// carried there cost one-shot bufferization exponential time): the pairs
// (p, q) as complex columns of one working tensor of m + n = 7 rows (u's
// 4, then v's 3); how many values are over max(m, n) eps s_max; pass 1
// (that many pivoted Gram-Schmidt steps over all 7 rows), u and v parts of
// the taken columns normalised apart (rows [0, 4) and [4, 7)); the columns
// left projected and taken over u's rows (k - r steps), then over v's rows
// (n - r steps); each result written as pass 1's columns, then the
// others'.
// CHECK-LABEL: func @complex_singular_vectors
// CHECK: scf.for %[[MAT:[^ ]+]] = %{{.+}} to %c2 step %{{.+}} iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}}) -> (tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>)
// CHECK: bufferization.alloc_tensor() : tensor<7x6x2xf64>
// CHECK: %[[R:.+]] = scf.for %{{.+}} = %{{.+}} to %c3{{(_[0-9]+)?}} step %{{.+}} iter_args(%{{.+}} = %c0{{(_[0-9]+)?}}) -> (index)
// CHECK: arith.cmpf ogt
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[R]] step %{{.+}} -> (tensor<7x6x2xf64>, tensor<6xf64>)
// CHECK: arith.cmpf uno
// CHECK: math.sqrt
// CHECK: scf.for %{{.+}} = %c0{{(_[0-9]+)?}} to %c4{{(_[0-9]+)?}} step
// CHECK: scf.for %{{.+}} = %c4{{(_[0-9]+)?}} to %c7 step
// CHECK: %[[LEFT:.+]] = arith.subi %c3{{(_[0-9]+)?}}, %[[R]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[LEFT]] step
// CHECK: %[[RIGHT:.+]] = arith.subi %c3{{(_[0-9]+)?}}, %[[R]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[RIGHT]] step
// CHECK: tensor.insert %{{.+}} into %{{.+}}[%[[MAT]], %{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x4x3x2xf64>
// CHECK: tensor.insert %{{.+}} into %{{.+}}[%[[MAT]], %{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x3x3x2xf64>
func.func @complex_singular_vectors(%u: tensor<2x8x6xf64>, %s: tensor<2x6xf64>, %v: tensor<2x6x6xf64>) -> (tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>) {
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<2x8x6xf64>, tensor<2x6xf64>, tensor<2x6x6xf64>) -> (tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>)
  return %l, %r : tensor<2x4x3x2xf64>, tensor<2x3x3x2xf64>
}

// Complete vectors (u 8 x 8 for m = 4, n = 2): 8 working columns, U's pass
// apart takes m - r = 4 - r, V's n - r = 2 - r.
// CHECK-LABEL: func @complete
// CHECK: bufferization.alloc_tensor() : tensor<6x8x2xf32>
// CHECK: arith.subi %c4{{(_[0-9]+)?}}, %{{.+}} : index
// CHECK: arith.subi %c2{{(_[0-9]+)?}}, %{{.+}} : index
func.func @complete(%u: tensor<1x8x8xf32>, %s: tensor<1x4xf32>, %v: tensor<1x4x4xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>) {
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<1x8x8xf32>, tensor<1x4xf32>, tensor<1x4x4xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>)
  return %l, %r : tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>
}
