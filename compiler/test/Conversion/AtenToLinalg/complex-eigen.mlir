// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// zgeev's values in scalar loops (ComplexEigen.cpp, ComplexSchur.cpp): the
// batch loop carries the results alone; each matrix is copied into a
// (1, n, n, 2) tensor of its own, with scales of its own (tensors the
// loop carried made bufferization's buffer-type queries exponential).
// zgebal's row exchanges, column exchanges and scaling sweeps (dgebal's
// loops over pairs: an entry is zero when both parts are, norms over both
// parts); zgehd2; then zlahqr's loop over (H, i, lo, its, kdefl): a
// deflation point, else one single-shift sweep (exceptional shifts 0.75
// |h| every 10th / 20th sweep, else Wilkinson's, whose complex square
// roots are math.sqrt of the moduli); the values are the diagonal, NaN for
// a matrix with a non-finite entry or a block that did not deflate.
// CHECK-LABEL: func @eigvals
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %c2 {{.+}} -> (tensor<2x3xf64>, tensor<2x3xf64>)
// CHECK: tensor.extract %arg0[%[[M]], {{.+}}] : tensor<2x3x3x2xf64>
// CHECK: scf.while ({{.+}}) : (tensor<1x3x3x2xf64>, tensor<1x3xf64>, index, index)
// CHECK: scf.while ({{.+}}) : (tensor<1x3x3x2xf64>, tensor<1x3xf64>, index, index)
// CHECK: arith.constant 0.94999
// CHECK: scf.while ({{.+}}) : (tensor<1x3x3x2xf64>, tensor<1x3xf64>, i1, index)
// CHECK: arith.muli %{{.+}}, %c30
// CHECK: scf.while ({{.+}}) : (tensor<1x3x3x2xf64>, index, index, index, index)
// CHECK: scf.condition
// CHECK: scf.if {{.+}} -> (tensor<1x3x3x2xf64>, index, index, index, index)
// CHECK: } else {
// CHECK: arith.constant 7.500000e-01
// CHECK: arith.remsi %{{.+}}, %c20
// CHECK: arith.remsi %{{.+}}, %c10
// CHECK: scf.if {{.+}} -> (tensor<1x3x3x2xf64>)
// CHECK: 0x7FF8000000000000
// CHECK: scf.for {{.+}} -> (tensor<2x3xf64>, tensor<2x3xf64>)
// CHECK: tensor.insert {{.+}}[%[[M]], %{{.+}}] : tensor<2x3xf64>
// CHECK-NOT: aten.
func.func @eigvals(%a: tensor<2x3x3x2xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>) {
  %re, %im = aten.eigvals %a : (tensor<2x3x3x2xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>)
  return %re, %im : tensor<2x3xf64>, tensor<2x3xf64>
}

// With vectors (aten.eig): the batch loop carries the four results; Z^T
// (the identity, of the matrix's own) takes the Hessenberg reflectors and
// the sweeps, whose rescaling below the top now carries it too; then
// ztrevc3's back substitution, zgebak and zgeev's normalisation write the
// vectors' parts as columns.
// CHECK-LABEL: func @eig
// CHECK: scf.for {{.+}} -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>)
// CHECK: scf.while ({{.+}}) : (tensor<1x3x3x2xf32>, index, index, index, index, tensor<1x3x3x2xf32>)
// CHECK: scf.if {{.+}} -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>)
// CHECK: 0x7FC00000
// CHECK: scf.for {{.+}} -> (tensor<1x3x3xf32>, tensor<1x3x3xf32>)
// CHECK-NOT: aten.
func.func @eig(%a: tensor<1x3x3x2xf32>) -> (tensor<1x3x3xf32>, tensor<1x3x3xf32>) {
  %re, %im, %vr, %vi = aten.eig %a : (tensor<1x3x3x2xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>)
  return %vr, %vi : tensor<1x3x3xf32>, tensor<1x3x3xf32>
}
