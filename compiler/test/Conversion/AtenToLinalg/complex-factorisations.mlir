// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// zgetf2 on (B, m, n, 2) pairs, in place in one copy: the pivot search
// compares |re| + |im| (izamax's measure; ogt, so a NaN never wins), the
// swap moves both parts of each entry, a zero pivot is one whose parts are
// both 0, the multiplier is Smith's quotient (the divisor's larger part
// picks the form) and the trailing update a complex multiply-subtract.
// CHECK-LABEL: func @lu_complex
// CHECK: %[[LU:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<2x3x4x2xf64>
// CHECK: %[[PIV:.+]] = bufferization.alloc_tensor() : tensor<2x3xi64>
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %c2 step %{{.+}} iter_args(%{{.+}} = %[[LU]], %{{.+}} = %[[PIV]]
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %c3
// CHECK: math.absf
// CHECK: math.absf
// CHECK: arith.addf
// CHECK: %[[BEST:.+]]:2 = scf.for
// CHECK: math.absf
// CHECK: math.absf
// CHECK: arith.addf
// CHECK: arith.cmpf ogt
// CHECK: scf.for %{{.+}} = %{{.+}} to %c4
// CHECK-COUNT-2: tensor.insert
// CHECK: scf.for %{{.+}} = %{{.+}} to %c4
// CHECK-COUNT-2: tensor.insert
// CHECK: arith.index_cast %[[BEST]]#0 : index to i64
// CHECK: arith.xori
// CHECK: %[[RE0:.+]] = arith.cmpf oeq
// CHECK: %[[IM0:.+]] = arith.cmpf oeq
// CHECK: %[[ZERO:.+]] = arith.andi %[[RE0]], %[[IM0]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %c3
// CHECK: %[[WIDE:.+]] = arith.cmpf oge
// CHECK: arith.select %[[WIDE]]
// CHECK: arith.divf
// CHECK: arith.divf
// CHECK: arith.select %[[ZERO]]
// CHECK: arith.select %[[ZERO]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %c4
// CHECK-COUNT-4: arith.mulf
// CHECK-NOT: aten.
func.func @lu_complex(%a: tensor<2x3x4x2xf64>) -> (tensor<2x3x4x2xf64>, tensor<2x3xi64>, tensor<2x1xi1>) {
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x4x2xf64>) -> (tensor<2x3x4x2xf64>, tensor<2x3xi64>, tensor<2x1xi1>)
  return %lu, %pivots, %odd : tensor<2x3x4x2xf64>, tensor<2x3xi64>, tensor<2x1xi1>
}

// zpotf2 on pairs: the pivot is re(a[j, j]) minus the sum of |l[j, p]|^2
// (the real part of l[j, :] l[j, :]^H), its square root a real diagonal
// entry (imaginary part 0), the entries above zeroed, those below the
// difference with l[i, :] l[j, :]^H divided by the root, part by part.
// CHECK-LABEL: func @cholesky_complex
// CHECK: %[[L:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<1x3x3x2xf32>
// CHECK: %[[INFO:.+]] = bufferization.alloc_tensor() : tensor<1x1xi64>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1{{.*}} iter_args(%{{.+}} = %[[L]], %{{.+}} = %[[INFO]])
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c3
// CHECK: %[[SUM:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %[[J]]
// CHECK: %[[PIVOT:.+]] = arith.subf %{{.+}}, %[[SUM]]#0
// CHECK: arith.cmpf ogt, %[[PIVOT]]
// CHECK: %[[ROOT:.+]] = math.sqrt %[[PIVOT]]
// CHECK: tensor.insert %[[ROOT]]
// CHECK: tensor.insert %cst
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[J]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.divf %{{.+}}, %[[ROOT]]
// CHECK: arith.divf %{{.+}}, %[[ROOT]]
// CHECK-NOT: aten.
func.func @cholesky_complex(%a: tensor<1x3x3x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x1xi64>) {
  %l, %info = aten.cholesky %a : (tensor<1x3x3x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x1xi64>)
  return %l, %info : tensor<1x3x3x2xf32>, tensor<1x1xi64>
}

// ztrtrs on pairs: back substitution for an upper triangle (row n-1-r),
// each solved row's complex multiple subtracted (4 products), then the
// row divided by the pivot by Smith's quotient; a unit diagonal is not
// read or divided by.
// CHECK-LABEL: func @triangular_solve_complex
// CHECK: %[[X:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<2x3x4x2xf64>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2{{.*}} iter_args(%{{.+}} = %[[X]])
// CHECK: scf.for %[[R:.+]] = %{{.+}} to %c3
// CHECK: %[[I:.+]] = arith.subi %c2{{.*}}, %[[R]]
// CHECK: scf.for
// CHECK: scf.for %{{.+}} = %{{.+}} to %c4
// CHECK-COUNT-4: arith.mulf
// CHECK: scf.for %{{.+}} = %{{.+}} to %c4
// CHECK: arith.cmpf oge
// CHECK: arith.divf
// CHECK: arith.divf
// CHECK-LABEL: func @triangular_solve_complex_unit
// CHECK: scf.for
// CHECK-COUNT-4: arith.mulf
// CHECK-NOT: arith.divf
// CHECK: return
func.func @triangular_solve_complex(%a: tensor<2x3x3x2xf64>, %b: tensor<2x3x4x2xf64>) -> tensor<2x3x4x2xf64> {
  %x = aten.triangular_solve %a, %b {upper}
      : (tensor<2x3x3x2xf64>, tensor<2x3x4x2xf64>) -> tensor<2x3x4x2xf64>
  return %x : tensor<2x3x4x2xf64>
}

func.func @triangular_solve_complex_unit(%a: tensor<1x3x3x2xf32>, %b: tensor<1x3x1x2xf32>) -> tensor<1x3x1x2xf32> {
  %x = aten.triangular_solve %a, %b {unitriangular}
      : (tensor<1x3x3x2xf32>, tensor<1x3x1x2xf32>) -> tensor<1x3x1x2xf32>
  return %x : tensor<1x3x1x2xf32>
}

// zgeqr2 on pairs: zlarfg reflects nothing only where the tail's norm and
// a[j, j]'s imaginary part are both 0; beta = -sign(re) dlapy3 (real), tau
// = ((beta - re) / beta, -im / beta), the tail scaled by 1 / (a[j, j] -
// beta) (Smith's quotient), and H^H, whose scale is conj(tau), applied to
// the columns to the right: w = sum conj(v_i) a[i, :] (x times conj(v)),
// w *= conj(tau), rows minus v_i w.
// CHECK-LABEL: func @geqrf_complex
// CHECK: %[[A:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<1x3x2x2xf64>
// CHECK: %[[TAU:.+]] = bufferization.alloc_tensor() : tensor<1x2x2xf64>
// CHECK: %[[W:.+]] = bufferization.alloc_tensor() : tensor<2x2xf64>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1{{.*}} iter_args(%{{.+}} = %[[A]], %{{.+}} = %[[TAU]], %{{.+}} = %[[W]])
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c2
// CHECK: %[[ARE:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[J]], %[[J]], %c0{{.*}}]
// CHECK: %[[AIM:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[J]], %[[J]], %c1{{.*}}]
// CHECK: %[[IMZERO:.+]] = arith.cmpf oeq, %[[AIM]], %cst
// CHECK-NEXT: %[[NONE:.+]] = arith.andi %{{.+}}, %[[IMZERO]]
// CHECK: %[[SIGNED:.+]] = math.copysign %{{.+}}, %[[ARE]]
// CHECK-NEXT: %[[BETA:.+]] = arith.negf %[[SIGNED]]
// CHECK-NEXT: %[[DIFF:.+]] = arith.subf %[[BETA]], %[[ARE]]
// CHECK-NEXT: %[[RATIO:.+]] = arith.divf %[[DIFF]], %[[BETA]]
// CHECK-NEXT: %[[TAURE:.+]] = arith.select %[[NONE]], %cst, %[[RATIO]]
// CHECK-NEXT: %[[NEGIM:.+]] = arith.negf %[[AIM]]
// CHECK-NEXT: %[[IMRATIO:.+]] = arith.divf %[[NEGIM]], %[[BETA]]
// CHECK-NEXT: %[[TAUIM:.+]] = arith.select %[[NONE]], %cst, %[[IMRATIO]]
// CHECK: arith.subf %[[ARE]], %[[BETA]]
// CHECK: arith.cmpf oge
// CHECK: %[[HEADRE:.+]] = arith.select %[[NONE]], %[[ARE]], %[[BETA]]
// CHECK: %[[HEADIM:.+]] = arith.select %[[NONE]], %[[AIM]], %cst
// CHECK: scf.for
// CHECK-COUNT-4: arith.mulf
// CHECK: %[[CONJ:.+]] = arith.negf %[[TAUIM]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.mulf %[[TAURE]]
// CHECK: arith.mulf %[[CONJ]]
// CHECK: tensor.insert %[[HEADRE]]
// CHECK: tensor.insert %[[HEADIM]]
// CHECK-NOT: aten.
func.func @geqrf_complex(%a: tensor<1x3x2x2xf64>) -> (tensor<1x3x2x2xf64>, tensor<1x2x2xf64>) {
  %r, %tau = aten.geqrf %a : (tensor<1x3x2x2xf64>) -> (tensor<1x3x2x2xf64>, tensor<1x2x2xf64>)
  return %r, %tau : tensor<1x3x2x2xf64>, tensor<1x2x2xf64>
}

// qr of pairs: zgeqr2, R's upper triangle copied part by part, and Q (zung2r)
// from the identity's first columns (real part 1 on the diagonal, imaginary
// 0) with H_{k-1} .. H_0 applied, each with its tau (not conjugated).
// CHECK-LABEL: func @qr_complex
// CHECK: %[[Q:.+]] = bufferization.alloc_tensor() : tensor<1x3x3x2xf32>
// CHECK: %[[R:.+]] = bufferization.alloc_tensor() : tensor<1x3x2x2xf32>
// CHECK: math.copysign
// CHECK: arith.cmpi ule
// CHECK: arith.select
// CHECK: tensor.insert
// CHECK: arith.select
// CHECK: tensor.insert
// CHECK: arith.cmpi eq
// CHECK: arith.select %{{.+}}, %cst{{.*}}, %cst
// CHECK: scf.for %[[STEP:.+]] = %{{.+}} to %c2
// CHECK: %[[JJ:.+]] = arith.subi %c1{{.*}}, %[[STEP]]
// CHECK: %[[TRE:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[JJ]], %c0{{.*}}] : tensor<1x2x2xf32>
// CHECK: %[[TIM:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[JJ]], %c1{{.*}}] : tensor<1x2x2xf32>
// CHECK-NOT: arith.negf %[[TIM]]
// CHECK: arith.mulf %[[TRE]]
// CHECK-NOT: aten.
func.func @qr_complex(%a: tensor<1x3x2x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x2x2xf32>) {
  %q, %r = aten.qr %a {complete} : (tensor<1x3x2x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x2x2xf32>)
  return %q, %r : tensor<1x3x3x2xf32>, tensor<1x3x2x2xf32>
}

// ormqr with transpose on pairs (zunm2r 'C'): H_0^H first, each scale
// conjugated.
// CHECK-LABEL: func @ormqr_adjoint_complex
// CHECK: %[[C:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<1x3x4x2xf32>
// CHECK: scf.for %[[STEP:.+]] = %{{.+}} to %c2
// CHECK: %[[TIM:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[STEP]], %c1{{.*}}] : tensor<1x2x2xf32>
// CHECK-NEXT: arith.negf %[[TIM]]
// CHECK-NOT: aten.
func.func @ormqr_adjoint_complex(%a: tensor<1x3x2x2xf32>, %tau: tensor<1x2x2xf32>,
                                 %c: tensor<1x3x4x2xf32>) -> tensor<1x3x4x2xf32> {
  %y = aten.ormqr %a, %tau, %c {transpose}
      : (tensor<1x3x2x2xf32>, tensor<1x2x2xf32>, tensor<1x3x4x2xf32>) -> tensor<1x3x4x2xf32>
  return %y : tensor<1x3x4x2xf32>
}
