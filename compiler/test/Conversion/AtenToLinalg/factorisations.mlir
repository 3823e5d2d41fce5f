// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// dgetf2 in scalar loops over the batch and the columns, written in place
// into one copy of the input: the pivot search (a strictly larger
// magnitude wins, so a NaN never does), the row swap, the pivot and the
// parity, then the multipliers (0 under a zero pivot) and the trailing
// update. The code does not grow with n.
// CHECK-LABEL: func @lu
// CHECK: %[[LU:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<2x3x3xf64>
// CHECK: %[[PIV:.+]] = bufferization.alloc_tensor() : tensor<2x3xi64>
// CHECK: %[[ODD:.+]] = linalg.fill ins(%false : i1)
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %c2 step %{{.+}} iter_args(%{{.+}} = %[[LU]], %{{.+}} = %[[PIV]], %{{.+}} = %[[ODD]])
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %c3
// CHECK: %[[BEST:.+]]:2 = scf.for
// CHECK: arith.cmpf ogt
// CHECK: scf.for
// CHECK-COUNT-2: tensor.insert
// CHECK: arith.index_cast %[[BEST]]#0 : index to i64
// CHECK: arith.xori
// CHECK: %[[ZERO:.+]] = arith.cmpf oeq
// CHECK: scf.for
// CHECK: %[[RATIO:.+]] = arith.divf
// CHECK: arith.select %[[ZERO]], %{{.+}}, %[[RATIO]]
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK-NOT: aten.
func.func @lu(%a: tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>) {
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>)
  return %lu, %pivots, %odd : tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>
}

// A tall (5 x 3) matrix: min(m, n) = 3 steps, the pivot searched among all
// 5 rows, the rows swapped over the 3 columns, multipliers for the 5 rows.
// CHECK-LABEL: func @lu_tall
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %c3
// CHECK: scf.for %{{.+}} = %{{.+}} to %c5
// CHECK: arith.cmpf ogt
// CHECK: scf.for %{{.+}} = %{{.+}} to %c3
// CHECK-COUNT-2: tensor.insert
// CHECK: arith.divf
// CHECK: scf.for %{{.+}} = %{{.+}} to %c3
func.func @lu_tall(%a: tensor<1x5x3xf32>) -> (tensor<1x5x3xf32>, tensor<1x3xi64>, tensor<1x1xi1>) {
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<1x5x3xf32>) -> (tensor<1x5x3xf32>, tensor<1x3xi64>, tensor<1x1xi1>)
  return %lu, %pivots, %odd : tensor<1x5x3xf32>, tensor<1x3xi64>, tensor<1x1xi1>
}

// dgetrs after dgetf2: the interchanges, forward substitution with the
// unit L (rows above i), then back substitution with U from the last row
// up, dividing by the pivot.
// CHECK-LABEL: func @solve
// CHECK: scf.for
// CHECK: %[[X:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<1x4x2xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1{{.*}} iter_args(%{{.+}} = %[[X]])
// CHECK: arith.index_cast %{{.+}} : i64 to index
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2
// CHECK: scf.for %[[I:arg[0-9]+]] = %{{.+}} to %c4
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[I]] step
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: %[[R:.+]] = arith.subi %c3{{.*}}, %{{.+}} : index
// CHECK: arith.divf
// CHECK-NOT: aten.
func.func @solve(%a: tensor<1x4x4xf32>, %b: tensor<1x4x2xf32>) -> tensor<1x4x2xf32> {
  %x = aten.linalg_solve %a, %b : (tensor<1x4x4xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  return %x : tensor<1x4x2xf32>
}

// dpotf2 (lower, left-looking): the pivot less the row's squares (whole
// 16-lane vectors of the contiguous row, multiplied and added with
// contraction allowed (fused where the CPU has FMA), their lanes reduced,
// then the rest), info at the first pivot that is not > 0, its
// square root on the diagonal, zeros above, the column below scaled by it.
// CHECK-LABEL: func @cholesky
// CHECK: %[[L:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<2x3x3xf32>
// CHECK: scf.for
// CHECK: %[[COL:.+]]:2 = scf.for %[[J:.+]] = %{{.+}} to %c3
// CHECK: %[[VECS:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c16{{.*}} -> (vector<16xf32>)
// CHECK: %[[X:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %[[J]], %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<2x3x3xf32>, vector<16xf32>
// CHECK: %[[Y:.+]] = vector.transfer_read
// CHECK: %[[PROD:.+]] = arith.mulf %[[X]], %[[Y]] fastmath<contract> : vector<16xf32>
// CHECK: arith.addf %{{.+}}, %[[PROD]] fastmath<contract> : vector<16xf32>
// CHECK: %[[LANES:.+]] = vector.reduction <add>, %[[VECS]] : vector<16xf32> into f32
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[J]] step %c1{{.*}} iter_args(%{{.+}} = %[[LANES]])
// CHECK: %[[DOT:.+]] = arith.addf %cst{{.*}}, %[[SUM]] : f32
// CHECK: %[[PIVOT:.+]] = arith.subf %{{.+}}, %[[DOT]] : f32
// CHECK: %[[POS:.+]] = arith.cmpf ogt, %[[PIVOT]]
// CHECK: %[[FIRST:.+]] = arith.cmpi eq
// CHECK: %[[NOT:.+]] = arith.xori %[[POS]], %true
// CHECK: arith.andi %[[FIRST]], %[[NOT]]
// CHECK: %[[ROOT:.+]] = math.sqrt %[[PIVOT]] : f32
// CHECK: tensor.insert %[[ROOT]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[J]]
// CHECK: tensor.insert %cst
// CHECK: arith.divf %{{.+}}, %[[ROOT]] : f32
// CHECK: tensor.insert %[[COL]]#1
// CHECK-NOT: aten.
func.func @cholesky(%a: tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x1xi64>) {
  %l, %info = aten.cholesky %a : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x1xi64>)
  return %l, %info : tensor<2x3x3xf32>, tensor<2x1xi64>
}

// dgeqr2 then dorg2r: each reflector (dlarfg) from the norm of the column
// below the diagonal, scaled by its largest |entry| (none when that norm
// is 0), beta = -copysign(dlapy2(a[j, j], norm), a[j, j]), applied to the columns to its
// right as dlarf does, along contiguous rows: w = a[j, :] + the rows below
// times v, w *= tau, then a[j, :] -= w and each row below -= v_i w (a
// scratch row, carried); R the upper triangle; Q the identity's columns
// with the reflectors applied last to first, the same way.
// CHECK-LABEL: func @qr
// CHECK: %[[WORK:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<1x3x2xf32>
// CHECK: %[[TAU:.+]] = bufferization.alloc_tensor() : tensor<1x2xf32>
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c2
// CHECK: %[[TAILMAX:.+]] = scf.for
// CHECK: arith.maximumf
// CHECK: %[[ZEROS:.+]] = arith.cmpf oeq, %[[TAILMAX]]
// CHECK: %[[UNIT:.+]] = arith.select %[[ZEROS]]
// CHECK: %[[TAIL:.+]] = scf.for
// CHECK: arith.divf %{{.+}}, %[[UNIT]]
// CHECK: %[[ROOT:.+]] = math.sqrt %[[TAIL]]
// CHECK: %[[NORM:.+]] = arith.mulf %[[UNIT]], %[[ROOT]]
// CHECK: %[[NONE:.+]] = arith.cmpf oeq, %[[NORM]]
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: %[[RADIUS:.+]] = arith.select
// CHECK: %[[SIGNED:.+]] = math.copysign %[[RADIUS]]
// CHECK: %[[BETA:.+]] = arith.negf %[[SIGNED]]
// CHECK: arith.select %[[NONE]], %{{.+}}, %[[BETA]]
// CHECK: %[[W:.+]] = scf.for %{{.+}} = %{{.+}} to %c2{{.*}} -> (tensor<3xf32>)
// CHECK: %[[WSUM:.+]] = scf.for %{{.+}} iter_args(%{{.+}} = %[[W]]) -> (tensor<3xf32>)
// CHECK: scf.for %{{.+}} -> (tensor<3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[TW:.+]] = scf.for %{{.+}} iter_args(%{{.+}} = %[[WSUM]]) -> (tensor<3xf32>)
// CHECK: %[[TOP:.+]] = scf.for %{{.+}} -> (tensor<1x3x2xf32>)
// CHECK: tensor.extract %[[TW]]
// CHECK: arith.subf
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %[[TOP]]) -> (tensor<1x3x2xf32>)
// CHECK: tensor.extract %[[TW]]
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: arith.cmpi ule
// CHECK: arith.cmpi eq
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}#2) -> (tensor<1x3x3xf32>, tensor<3xf32>)
// CHECK: arith.subi %c1
// CHECK-NOT: aten.
func.func @qr(%a: tensor<1x3x2xf32>) -> (tensor<1x3x3xf32>, tensor<1x3x2xf32>) {
  %q, %r = aten.qr %a {complete} : (tensor<1x3x2xf32>) -> (tensor<1x3x3xf32>, tensor<1x3x2xf32>)
  return %q, %r : tensor<1x3x3xf32>, tensor<1x3x2xf32>
}

// trtrs, upper with a unit diagonal: back substitution from the last row
// up, reading only the strict upper triangle, no division.
// CHECK-LABEL: func @triangular_solve_unit_upper
// CHECK: %[[X:.+]] = bufferization.alloc_tensor() copy(%{{.+}}) : tensor<2x3x4xf32>
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %c2{{.*}} iter_args(%{{.+}} = %[[X]])
// CHECK: %[[I:.+]] = arith.subi %c2{{.*}}, %{{.+}} : index
// CHECK: %[[FROM:.+]] = arith.addi %[[I]], %c1{{.*}} : index
// CHECK: scf.for %[[J:.+]] = %[[FROM]] to %c3
// CHECK: tensor.extract %{{.+}}[%[[M]], %[[I]], %[[J]]] : tensor<2x3x3xf32>
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK-NOT: arith.divf
// CHECK: return
func.func @triangular_solve_unit_upper(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %x = aten.triangular_solve %a, %b {upper, unitriangular} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %x : tensor<2x3x4xf32>
}

// The row order getrf's swaps leave: 0 .. n - 1, then each step's swap of
// positions j and pivots[j] in turn (a pivot outside [0, n) swaps j with
// itself).
// CHECK-LABEL: func @lu_permutation
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %c2
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %c3
// CHECK: %[[V:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK: tensor.insert %[[V]] into %{{.+}}[%[[M]], %[[I]]]
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c3
// CHECK: %[[PIVOT:.+]] = tensor.extract %arg0[%[[M]], %[[J]]] : tensor<2x3xi64>
// CHECK: %[[LOW:.+]] = arith.cmpi sge, %[[PIVOT]], %c0_i64
// CHECK: %[[HIGH:.+]] = arith.cmpi slt, %[[PIVOT]], %c3_i64
// CHECK: %[[INSIDE:.+]] = arith.andi %[[LOW]], %[[HIGH]]
// CHECK: %[[P:.+]] = arith.select %[[INSIDE]], %{{.+}}, %[[J]] : index
// CHECK: %[[AT_J:.+]] = tensor.extract %{{.+}}[%[[M]], %[[J]]]
// CHECK: %[[AT_P:.+]] = tensor.extract %{{.+}}[%[[M]], %[[P]]]
// CHECK: %[[SWAP1:.+]] = tensor.insert %[[AT_P]] into %{{.+}}[%[[M]], %[[J]]]
// CHECK: tensor.insert %[[AT_J]] into %[[SWAP1]][%[[M]], %[[P]]]
func.func @lu_permutation(%pivots: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %p = aten.lu_permutation %pivots : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %p : tensor<2x3xi64>
}

// geqrf: qr's dgeqr2 alone (the compact a and tau, a scratch row carried).
// CHECK-LABEL: func @geqrf
// CHECK: %[[A:.+]] = bufferization.alloc_tensor() copy(%arg0) : tensor<1x3x2xf32>
// CHECK: %[[TAU:.+]] = bufferization.alloc_tensor() : tensor<1x2xf32>
// CHECK: %[[W:.+]] = bufferization.alloc_tensor() : tensor<2xf32>
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[A]], %{{.+}} = %[[TAU]], %{{.+}} = %[[W]])
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2 {{.+}} -> (tensor<1x3x2xf32>, tensor<1x2xf32>, tensor<2xf32>)
// CHECK: math.copysign
// CHECK: return %{{.+}}#0, %{{.+}}#1 : tensor<1x3x2xf32>, tensor<1x2xf32>
func.func @geqrf(%a: tensor<1x3x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x2xf32>) {
  %r, %tau = aten.geqrf %a : (tensor<1x3x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x2xf32>)
  return %r, %tau : tensor<1x3x2xf32>, tensor<1x2xf32>
}

// householder_product: the identity's first columns, then the reflectors
// applied last to first (j = k - 1 - step), v read from the input's
// column j.
// CHECK-LABEL: func @householder_product
// CHECK: scf.for %[[STEP:.+]] = %{{.+}} to %c2 {{.+}} -> (tensor<1x3x2xf32>, tensor<2xf32>)
// CHECK: %[[J:.+]] = arith.subi %c1{{.*}}, %[[STEP]] : index
// CHECK: tensor.extract %arg1[%{{.+}}, %[[J]]] : tensor<1x2xf32>
// CHECK: tensor.extract %arg0[%{{.+}}, %{{.+}}, %[[J]]] : tensor<1x3x2xf32>
func.func @householder_product(%a: tensor<1x3x2xf32>, %tau: tensor<1x2xf32>) -> tensor<1x3x2xf32> {
  %q = aten.householder_product %a, %tau : (tensor<1x3x2xf32>, tensor<1x2xf32>) -> tensor<1x3x2xf32>
  return %q : tensor<1x3x2xf32>
}

// ormqr {transpose}: Q^T C, the reflectors applied first to last (j =
// step) to a copy of C, row by row over its 4 columns.
// CHECK-LABEL: func @ormqr
// CHECK: %[[C:.+]] = bufferization.alloc_tensor() copy(%arg2) : tensor<1x3x4xf32>
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c2 {{.+}} -> (tensor<1x3x4xf32>, tensor<4xf32>)
// CHECK-NOT: arith.subi
// CHECK: tensor.extract %arg1[%{{.+}}, %[[J]]] : tensor<1x2xf32>
// CHECK: tensor.extract %arg0[%{{.+}}, %{{.+}}, %[[J]]] : tensor<1x3x2xf32>
func.func @ormqr(%a: tensor<1x3x2xf32>, %tau: tensor<1x2xf32>, %c: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %y = aten.ormqr %a, %tau, %c {transpose} : (tensor<1x3x2xf32>, tensor<1x2xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}
