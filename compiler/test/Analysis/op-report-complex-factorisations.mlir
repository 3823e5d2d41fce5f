// RUN: kiln-opt %s -kiln-print-op-report -o /dev/null | FileCheck %s
// Complex factorisations and solves on (B, m, n, 2) pairs cost 4 real multiply-adds
// for each complex one:
//   lu_factor 2 x (6, 6): 4 x 2 x 6^3 / 3 = 576 (real: 144).
//   cholesky (6, 6): 4 x 6^3 / 6 = 144 (real: 36).
//   triangular_solve (6, 6) against (6, 2): 4 x 6^2 x 2 / 2 = 144.

// CHECK:      layer op kind unit macs flops{{.*}}
// CHECK-NEXT: lu aten.lu_factor contraction - 576 1152 {{.*}}
// CHECK-NEXT: rlu aten.lu_factor contraction - 144 288 {{.*}}
// CHECK-NEXT: chol aten.cholesky contraction - 144 288 {{.*}}
// CHECK-NEXT: tri aten.triangular_solve contraction - 144 288 {{.*}}

func.func @kiln_main(%a: tensor<2x6x6x2xf64>, %r: tensor<2x6x6xf64>, %s: tensor<1x6x6x2xf32>,
                     %b: tensor<1x6x2x2xf32>)
    -> (tensor<2x6x6x2xf64>, tensor<2x6x6xf64>, tensor<1x6x6x2xf32>, tensor<1x6x2x2xf32>) {
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x6x6x2xf64>) -> (tensor<2x6x6x2xf64>, tensor<2x6xi64>, tensor<2x1xi1>) loc("lu")
  %rlu, %rpivots, %rodd = aten.lu_factor %r
      : (tensor<2x6x6xf64>) -> (tensor<2x6x6xf64>, tensor<2x6xi64>, tensor<2x1xi1>) loc("rlu")
  %l, %info = aten.cholesky %s : (tensor<1x6x6x2xf32>) -> (tensor<1x6x6x2xf32>, tensor<1x1xi64>) loc("chol")
  %x = aten.triangular_solve %s, %b : (tensor<1x6x6x2xf32>, tensor<1x6x2x2xf32>) -> tensor<1x6x2x2xf32> loc("tri")
  return %lu, %rlu, %l, %x : tensor<2x6x6x2xf64>, tensor<2x6x6xf64>, tensor<1x6x6x2xf32>, tensor<1x6x2x2xf32>
}
