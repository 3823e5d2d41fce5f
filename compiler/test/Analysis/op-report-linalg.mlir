// RUN: kiln-opt %s -kiln-print-op-report -o /dev/null | FileCheck %s
// The cost of the linear-algebra, distance, resampling and histogram ops
// the importer keeps whole, in multiply-adds (FLOPs twice that, plus the
// extra operations named):
//   solve 2 x (4, 4) against (4, 3): getrf 4^3 / 3 = 21, getrs 4^2 x 3 =
//     48; 2 x 69 = 138.
//   qr (5, 3), reduced: geqrf 2 x (5 x 3 x 3 - 9 x 8 / 2 + 27 / 3) = 36
//     (= 5 x 9 - 27 / 3), orgqr 2 x 3 x 3 x (5 - 1) = 72; 108.
//   cholesky (6, 6): 6^3 / 6 = 36.
//   triangular_solve 2 x (4, 4) against (4, 3): 2 x 4^2 x 3 / 2 = 48.
//   eigvalsh (4, 4): the tridiagonal reduction, 4^3 = 64.
//   svdvals (5, 3): 6 sweeps of 3 pairs, 7 x 5 each: 630.
//   eigh (4, 4): 64, Q's 2 x 64 / 3 = 42 and 2 x 64 for the QL
//     rotations: 234.
//   svd (5, 3): svdvals', plus V^T's two rows (4 x 3) per pair, plus U's
//     5 x 3 divisions: 6 x 3 x 47 + 15 = 861.
//   cdist (5, 8) to (7, 8), matrix-product form: 35 x 8 = 280, plus the
//     40 + 56 squares and 4 x 35 combinations: 796 FLOPs; the difference
//     form (p = 1): 3 per triple, 840 FLOPs.
//   upsample_aa 3 planes 32x40 -> 16x20: 3 x 32 x 40 x 20 + 3 x 20 x 32 x
//     16 = 107520.
//   histc 100 elements: 6 each, 600 FLOPs.
//   matrix_exp 2 x (3, 3): 5 Taylor products of 27 each, 2 x 135 = 270
//     (the data-dependent squarings not counted).
//   eigvals 2 x (3, 3): Hessenberg reduction and QR sweeps, 5 x 27 each:
//     270.
//   eig 2 x (3, 3), with vectors: 13 x 27 each: 702.
//   ldl_factor 2 x (3, 3): sytrf's n^3 / 6, 2 x 27 / 6 = 9.

// CHECK:      layer op kind unit macs flops{{.*}}
// CHECK-NEXT: solve aten.linalg_solve contraction - 138 276 {{.*}}
// CHECK-NEXT: qr aten.qr contraction - 108 216 {{.*}}
// CHECK-NEXT: chol aten.cholesky contraction - 36 72 {{.*}}
// CHECK-NEXT: tri aten.triangular_solve contraction - 48 96 {{.*}}
// CHECK-NEXT: eig aten.eigvalsh contraction - 64 128 {{.*}}
// CHECK-NEXT: sv aten.svdvals contraction - 630 1260 {{.*}}
// CHECK-NEXT: eigv aten.eigh contraction - 234 468 {{.*}}
// CHECK-NEXT: svv aten.svd contraction - 861 1722 {{.*}}
// CHECK-NEXT: dmm aten.cdist contraction - 280 796 {{.*}}
// CHECK-NEXT: d1 aten.cdist reduction - 0 840 {{.*}}
// CHECK-NEXT: up aten.upsample_separable contraction - 107520 215040 {{.*}}
// CHECK-NEXT: hist aten.histc reduction - 0 600 {{.*}}
// CHECK-NEXT: mexp aten.matrix_exp contraction - 270 540 {{.*}}
// CHECK-NEXT: geig aten.eigvals contraction - 270 540 {{.*}}
// CHECK-NEXT: gvec aten.eig contraction - 702 1404 {{.*}}
// CHECK-NEXT: ldl aten.ldl_factor contraction - 9 18 {{.*}}

func.func @kiln_main(%a: tensor<2x4x4xf32>, %b: tensor<2x4x3xf32>, %t: tensor<1x5x3xf32>,
                     %s: tensor<1x6x6xf64>, %e: tensor<1x4x4xf32>, %x1: tensor<5x8xf32>,
                     %x2: tensor<7x8xf32>, %img: tensor<1x3x32x40xf32>, %h: tensor<100xf32>,
                     %me: tensor<2x3x3xf32>)
    -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<1x5x3xf32>, tensor<1x6x6xf64>, tensor<1x4xf32>,
        tensor<1x3xf32>, tensor<5x7xf32>, tensor<5x7xf32>, tensor<1x3x16x20xf32>,
        tensor<10xf32>, tensor<2x3x3xf32>, tensor<1x4x4xf32>, tensor<1x5x3xf32>, tensor<2x3xf32>,
        tensor<2x3x3xf32>, tensor<2x3x3xf32>) {
  %x = aten.linalg_solve %a, %b : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32> loc("solve")
  %q, %r = aten.qr %t : (tensor<1x5x3xf32>) -> (tensor<1x5x3xf32>, tensor<1x3x3xf32>) loc("qr")
  %l, %info = aten.cholesky %s : (tensor<1x6x6xf64>) -> (tensor<1x6x6xf64>, tensor<1x1xi64>) loc("chol")
  %tri = aten.triangular_solve %a, %b {upper} : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32> loc("tri")
  %w = aten.eigvalsh %e : (tensor<1x4x4xf32>) -> tensor<1x4xf32> loc("eig")
  %sv = aten.svdvals %t : (tensor<1x5x3xf32>) -> tensor<1x3xf32> loc("sv")
  %ew, %ev = aten.eigh %e : (tensor<1x4x4xf32>) -> (tensor<1x4xf32>, tensor<1x4x4xf32>) loc("eigv")
  %su, %ss, %sv2 = aten.svd %t : (tensor<1x5x3xf32>) -> (tensor<1x5x3xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>) loc("svv")
  %d0 = aten.cdist %x1, %x2 {p = 2.0 : f64, use_mm} : (tensor<5x8xf32>, tensor<7x8xf32>) -> tensor<5x7xf32> loc("dmm")
  %d1 = aten.cdist %x1, %x2 {p = 1.0 : f64} : (tensor<5x8xf32>, tensor<7x8xf32>) -> tensor<5x7xf32> loc("d1")
  %u = aten.upsample_separable %img {mode = "bilinear", antialias = true, align_corners = false}
      : (tensor<1x3x32x40xf32>) -> tensor<1x3x16x20xf32> loc("up")
  %hc = aten.histc %h {bins = 10 : i64, min = 0.0 : f64, max = 1.0 : f64} : (tensor<100xf32>) -> tensor<10xf32> loc("hist")
  %mx = aten.matrix_exp %me : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32> loc("mexp")
  %gre, %gim = aten.eigvals %me : (tensor<2x3x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) loc("geig")
  %vre, %vim, %vvr, %vvi = aten.eig %me : (tensor<2x3x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>) loc("gvec")
  %ld, %ldp, %ldi = aten.ldl_factor %me : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi64>, tensor<2x1xi64>) loc("ldl")
  return %x, %tri, %q, %l, %w, %sv, %d0, %d1, %u, %hc, %mx, %ev, %su, %gim, %vvi, %ld : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<1x5x3xf32>, tensor<1x6x6xf64>, tensor<1x4xf32>,
      tensor<1x3xf32>, tensor<5x7xf32>, tensor<5x7xf32>, tensor<1x3x16x20xf32>, tensor<10xf32>, tensor<2x3x3xf32>,
      tensor<1x4x4xf32>, tensor<1x5x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>
}
