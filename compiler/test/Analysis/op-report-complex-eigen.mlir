// RUN: kiln-opt %s -kiln-print-op-report -o /dev/null | FileCheck %s
// Eigenvalues of general complex matrices (pairs) cost 4 real
// multiply-adds for each complex one of the real count (zgeev's steps):
//   eigvals 2 x (3, 3): 4 x 5 x 27 each = 2 x 540 = 1080 (real: 270).
//   eig 2 x (3, 3), with vectors: 4 x 13 x 27 each = 2808.

// CHECK:      layer op kind unit macs flops{{.*}}
// CHECK-NEXT: values aten.eigvals contraction - 1080 2160 {{.*}}
// CHECK-NEXT: vectors aten.eig contraction - 2808 5616 {{.*}}

func.func @kiln_main(%a: tensor<2x3x3x2xf64>) -> (tensor<2x3xf64>, tensor<2x3x3xf64>) {
  %re, %im = aten.eigvals %a : (tensor<2x3x3x2xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>) loc("values")
  %vre, %vim, %vr, %vi = aten.eig %a : (tensor<2x3x3x2xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3x3xf64>, tensor<2x3x3xf64>) loc("vectors")
  return %re, %vi : tensor<2x3xf64>, tensor<2x3x3xf64>
}
