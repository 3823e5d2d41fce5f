// RUN: kiln-opt %s -kiln-print-op-report -o /dev/null | FileCheck %s
// Complex vectors from the real embedding's, by pivoted Gram-Schmidt:
//   hermitian_eigenvectors 2 x (n = 3): 36 n^3 each, 2 x 972 = 1944.
//   complex_singular_vectors (m = 4, n = 3, k = 3 columns per side):
//     68 k^2 (m + n) = 68 x 9 x 7 = 4284; complete (m = 4, n = 2, k = 4):
//     68 x 16 x 6 = 6528.

// CHECK:      layer op kind unit macs flops{{.*}}
// CHECK-NEXT: herm aten.hermitian_eigenvectors contraction - 1944 3888 {{.*}}
// CHECK-NEXT: svd aten.complex_singular_vectors contraction - 4284 8568 {{.*}}
// CHECK-NEXT: full aten.complex_singular_vectors contraction - 6528 13056 {{.*}}

func.func @kiln_main(%e: tensor<2x6x6xf64>, %u: tensor<1x8x6xf64>, %s: tensor<1x6xf64>,
                     %v: tensor<1x6x6xf64>, %cu: tensor<1x8x8xf32>, %cs: tensor<1x4xf32>,
                     %cv: tensor<1x4x4xf32>)
    -> (tensor<2x3x3x2xf64>, tensor<1x4x3x2xf64>, tensor<1x4x4x2xf32>) {
  %z = aten.hermitian_eigenvectors %e : (tensor<2x6x6xf64>) -> tensor<2x3x3x2xf64> loc("herm")
  %l, %r = aten.complex_singular_vectors %u, %s, %v
      : (tensor<1x8x6xf64>, tensor<1x6xf64>, tensor<1x6x6xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x3x2xf64>) loc("svd")
  %cl, %cr = aten.complex_singular_vectors %cu, %cs, %cv
      : (tensor<1x8x8xf32>, tensor<1x4xf32>, tensor<1x4x4xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>) loc("full")
  return %z, %l, %cl : tensor<2x3x3x2xf64>, tensor<1x4x3x2xf64>, tensor<1x4x4x2xf32>
}
