// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// dsyev in scalar loops: the matrix made symmetric and scaled to unit max;
// n - 2 Householder reflectors (dlarfg from row k past the diagonal: its
// tail's scaled norm, dlapy2 with alpha; none when the tail is 0), each applied as p = tau A22 v, w = p - (tau / 2)
// (p . v) v and the rank-2 update A22 -= v w^T + w v^T row by row; then,
// per eigenvalue, up to 40 QL steps: the first negligible off-diagonal
// entry (|e[m]| <= eps (|d[m]| + |d[m+1]|)) ends them when it is e[l],
// else Wilkinson's shift and rotations from m - 1 down to l (radii as
// dlapy2's max * sqrt(1 + (min / max)^2)), a radius of 0 deflating; the
// values scaled back (NaN if some eigenvalue did not converge) and
// selection-sorted ascending.
// CHECK-LABEL: func @eigvalsh
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2 {{.+}} -> (tensor<1x4x4xf64>, tensor<1x4xf64>, tensor<1x4xf64>, tensor<4xf64>)
// CHECK: %[[ROOT:.+]] = math.sqrt
// CHECK: %[[NORM:.+]] = arith.mulf %{{.+}}, %[[ROOT]]
// CHECK: %[[NONE:.+]] = arith.cmpf oeq, %[[NORM]]
// CHECK: math.sqrt
// CHECK: %[[SIGNED:.+]] = math.copysign
// CHECK: %[[BETA:.+]] = arith.negf %[[SIGNED]]
// CHECK: arith.select %[[NONE]], %{{.+}}, %[[BETA]]
// CHECK: %[[P:.+]] = scf.for {{.+}} -> (tensor<4xf64>)
// CHECK: %[[W:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[P]]) -> (tensor<4xf64>)
// CHECK: scf.for {{.+}} -> (tensor<1x4x4xf64>)
// CHECK: scf.for {{.+}} -> (tensor<1x4x4xf64>)
// CHECK: tensor.extract %[[W]]
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: %[[QL:.+]]:3 = scf.for %[[L:.+]] = %{{.+}} to %c4{{.*}} -> (tensor<1x4xf64>, tensor<1x4xf64>, i1)
// CHECK: scf.for %{{.+}} = %{{.+}} to %c40 {{.+}} -> (tensor<1x4xf64>, tensor<1x4xf64>, i1)
// CHECK: %[[M:.+]]:2 = scf.for {{.+}} -> (index, i1)
// CHECK: arith.cmpf ole
// CHECK: %[[DONE:.+]] = arith.cmpi eq, %[[M]]#0, %[[L]] : index
// CHECK: scf.if %[[DONE]]
// CHECK: math.copysign
// CHECK: scf.for {{.+}} -> (tensor<1x4xf64>, tensor<1x4xf64>, f64, f64, f64, f64, i1)
// CHECK: %[[BIG:.+]] = arith.maximumf
// CHECK: arith.minimumf
// CHECK: %[[NONE:.+]] = arith.cmpf oeq, %[[BIG]]
// CHECK: math.sqrt
// CHECK: %[[R:.+]] = arith.select %[[NONE]]
// CHECK: arith.cmpf oeq, %[[R]]
// CHECK: arith.select %[[QL]]#2, %cst{{.*}}, %{{.+}} : f64
// CHECK: arith.cmpf olt
// CHECK: return
func.func @eigvalsh(%a: tensor<1x4x4xf64>) -> tensor<1x4xf64> {
  %w = aten.eigvalsh %a : (tensor<1x4x4xf64>) -> tensor<1x4xf64>
  return %w : tensor<1x4xf64>
}

// eigh: the same reduction, then Q = H_0 H_1 formed backwards from the
// identity (set per matrix; each reflector applied row by row, as dlarf) and transposed
// into the vectors' rows; the QL rotations also rotate rows i and i + 1
// of Q^T; the sort moves them with their values and V is transposed back.
// CHECK-LABEL: func @eigh
// CHECK: scf.for {{.+}} -> (tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>)
// CHECK: %[[TRI:.+]]:4 = scf.for %{{.+}} = %{{.+}} to %c2 {{.+}} -> (tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>)
// CHECK: scf.yield {{.+}} : tensor<1x4x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK: %[[EYE:.+]] = scf.for {{.+}} -> (tensor<1x4x4xf32>)
// CHECK: arith.cmpi eq
// CHECK: %[[Q:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %c2{{.*}} iter_args(%{{.+}} = %[[EYE]], %{{.+}} = %[[TRI]]#3) -> (tensor<1x4x4xf32>, tensor<4xf32>)
// CHECK: %[[QT:.+]] = scf.for {{.+}} -> (tensor<1x4x4xf32>)
// CHECK: tensor.extract %[[Q]]#0[%{{.+}}, %[[I:.+]], %[[J:.+]]]
// CHECK: tensor.insert %{{.+}}[%{{.+}}, %[[J]], %[[I]]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %c40
// CHECK: scf.for {{.+}} -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4x4xf32>, f32, f32, f32, f32, i1)
// CHECK: %[[R:.+]] = arith.select
// CHECK: arith.cmpf oeq, %[[R]]
// CHECK: %[[S:.+]] = arith.divf
// CHECK: %[[C:.+]] = arith.divf
// CHECK: scf.for {{.+}} -> (tensor<1x4x4xf32>)
// CHECK: arith.mulf %[[C]]
// CHECK: arith.mulf %[[S]]
// CHECK: arith.cmpf olt
// CHECK: %[[V:.+]] = linalg.transpose ins(%{{.+}}#6 : tensor<1x4x4xf32>)
// CHECK: return %{{.+}}#1, %[[V]] : tensor<1x4xf32>, tensor<1x4x4xf32>
func.func @eigh(%a: tensor<1x4x4xf32>) -> (tensor<1x4xf32>, tensor<1x4x4xf32>) {
  %w, %v = aten.eigh %a : (tensor<1x4x4xf32>) -> (tensor<1x4xf32>, tensor<1x4x4xf32>)
  return %w, %v : tensor<1x4xf32>, tensor<1x4x4xf32>
}
