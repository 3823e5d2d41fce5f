// RUN: kiln-opt %s -kiln-print-op-report -o /dev/null | FileCheck %s
// QR of complex (B, m, n, 2) pairs costs 4 real multiply-adds for each
// complex one (zgeqr2, zung2r, zunm2r), for a (4, 3) matrix:
//   qr: 4 x (dgeqr2's 28 + dorg2r's 2 x 3 x 3 x (4 - 1) = 54) = 328 (real: 82).
//   geqrf: 4 x 28 = 112. householder_product: 4 x 54 = 216.
//   ormqr on (4, 2): 4 x 2 x 2 x 3 x (4 - 1) = 144.

// CHECK:      layer op kind unit macs flops{{.*}}
// CHECK-NEXT: qr aten.qr contraction - 328 656 {{.*}}
// CHECK-NEXT: rqr aten.qr contraction - 82 164 {{.*}}
// CHECK-NEXT: geqrf aten.geqrf contraction - 112 224 {{.*}}
// CHECK-NEXT: hh aten.householder_product contraction - 216 432 {{.*}}
// CHECK-NEXT: ormqr aten.ormqr contraction - 144 288 {{.*}}

func.func @kiln_main(%a: tensor<1x4x3x2xf64>, %r: tensor<1x4x3xf64>, %tau: tensor<1x3x2xf64>, %c: tensor<1x4x2x2xf64>)
    -> (tensor<1x4x3x2xf64>, tensor<1x4x3xf64>, tensor<1x4x3x2xf64>, tensor<1x4x3x2xf64>, tensor<1x4x2x2xf64>) {
  %q, %rr = aten.qr %a : (tensor<1x4x3x2xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x3x2xf64>) loc("qr")
  %rq, %rrr = aten.qr %r : (tensor<1x4x3xf64>) -> (tensor<1x4x3xf64>, tensor<1x3x3xf64>) loc("rqr")
  %g, %t = aten.geqrf %a : (tensor<1x4x3x2xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>) loc("geqrf")
  %h = aten.householder_product %a, %tau : (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>) -> tensor<1x4x3x2xf64> loc("hh")
  %o = aten.ormqr %a, %tau, %c : (tensor<1x4x3x2xf64>, tensor<1x3x2xf64>, tensor<1x4x2x2xf64>) -> tensor<1x4x2x2xf64> loc("ormqr")
  return %q, %rq, %g, %h, %o : tensor<1x4x3x2xf64>, tensor<1x4x3xf64>, tensor<1x4x3x2xf64>, tensor<1x4x3x2xf64>, tensor<1x4x2x2xf64>
}
