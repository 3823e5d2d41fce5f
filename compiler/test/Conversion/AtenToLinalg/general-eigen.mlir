// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// dgeev's values in scalar loops, per matrix (each exchange recorded in the
// scales row, as a float, for dgebak): a matrix with a NaN or an
// infinity is zeroed (its values become NaN at the end); dgebal's row
// exchanges (scf.while while some row within [0, last] is zero off the
// diagonal: exchanged with row `last`, which moves up), then its column
// exchanges (with column `first`, which moves down); its scaling sweeps
// (scf.while, at most 1000) whose power-of-2 factor f doubles, then
// halves, in two scf.while loops, applied when it cuts the norms by 5 %;
// every value starts as its diagonal entry; dgehd2's reflectors over the
// block, the right product a vector dot along each row; then dlahqr in one
// scf.while over (H, values, i, lo, sweeps, kdefl, failed) until i < first:
// past 30 max(10, n) sweeps it gives up, else a deflation point; a 1 x 1 or
// 2 x 2 block stores its values, anything larger takes one double-shift
// sweep (exceptional shifts 0.75 s and -0.4375 s every 10th / 20th), whose
// start is found by a third scf.while, and whose bulge chase applies
// reflectors of 3 rows, or 2 at the bottom.
// CHECK-LABEL: func @eigvals
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %c2 {{.+}} -> (tensor<2x4x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>, tensor<4xf64>, tensor<4xf64>)
// CHECK: %[[ROWS:.+]]:4 = scf.while ({{.+}} = %{{.+}}, {{.+}} = %{{.+}}, {{.+}} = %c3, {{.+}}) : (tensor<2x4x4xf64>, tensor<2x4xf64>, index, index)
// CHECK: arith.cmpi sgt
// CHECK: scf.condition
// CHECK: arith.sitofp
// CHECK: %[[COLS:.+]]:4 = scf.while ({{.+}} = %[[ROWS]]#0, {{.+}} = %[[ROWS]]#1, {{.+}}) : (tensor<2x4x4xf64>, tensor<2x4xf64>, index, index)
// CHECK: arith.cmpi slt
// CHECK: scf.condition
// CHECK: arith.constant 0.94999
// CHECK: scf.while ({{.+}}) : (tensor<2x4x4xf64>, tensor<2x4xf64>, i1, index)
// CHECK: %c1000 = arith.constant 1000 : index
// CHECK: scf.condition
// CHECK: scf.while ({{.+}}) : (f64, f64, f64, f64, f64, f64)
// CHECK: scf.while ({{.+}}) : (f64, f64, f64, f64, f64, f64)
// CHECK: vector.transfer_read
// CHECK: arith.muli %c30
// CHECK: scf.while ({{.+}}) : (tensor<2x4x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>, index, index, index, index, i1)
// CHECK: arith.cmpi sge
// CHECK: scf.condition
// CHECK: arith.cmpi sgt
// CHECK: scf.if
// CHECK: arith.constant true
// CHECK: } else {
// CHECK: scf.for {{.+}} -> (index, i1)
// CHECK: scf.if
// CHECK: arith.constant 7.500000e-01
// CHECK: arith.constant -4.375000e-01
// CHECK: arith.remsi %{{.+}}, %c20
// CHECK: arith.remsi %{{.+}}, %c10
// CHECK: scf.while ({{.+}}) : (index, f64, f64, f64)
// CHECK: scf.condition
// CHECK: scf.for {{.+}} -> (tensor<2x4x4xf64>)
// CHECK: scf.if
// CHECK: 0x7FF8000000000000
func.func @eigvals(%a: tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>) {
  %re, %im = aten.eigvals %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>)
  return %re, %im : tensor<2x4xf64>, tensor<2x4xf64>
}

// With vectors (aten.eig): Z^T starts as the identity and takes the
// Hessenberg reflectors and the sweeps; the QR loop carries it; then
// dtrevc3's vectors in one scf.while over ki (a complex pair's back
// substitution, with two scratch rows, or a real one's), dgebak's
// exchanges undone from the recorded scales (fptosi), and the vectors as
// columns of (re, im), NaN for an invalid matrix.
// CHECK-LABEL: func @eig
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2 {{.+}} -> (tensor<2x4x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>)
// CHECK: scf.while ({{.+}}) : (tensor<2x4x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>, index, index, index, index, i1, tensor<2x4x4xf64>)
// CHECK: scf.while ({{.+}}) : (tensor<2x4x4xf64>, tensor<4xf64>, tensor<4xf64>, index)
// CHECK: scf.while ({{.+}}) : (tensor<4xf64>, tensor<4xf64>, index)
// CHECK: scf.while ({{.+}}) : (tensor<4xf64>, index)
// CHECK: arith.fptosi
func.func @eig(%a: tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>) {
  %re, %im, %vr, %vi = aten.eig %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>)
  return %re, %im, %vr, %vi : tensor<2x4xf64>, tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>
}
