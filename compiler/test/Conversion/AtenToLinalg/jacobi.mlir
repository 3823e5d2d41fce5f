// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

// Cyclic Jacobi: the matrix made symmetric, its squares' sum for the
// tolerance, then up to 60 sweeps (an scf.if skips those after
// convergence) rotating every pair, columns then rows; the diagonal,
// selection-sorted ascending.
// CHECK-LABEL: func @eigvalsh
// CHECK: scf.for %{{.+}} = %{{.+}} to %c60 {{.+}} iter_args(%{{.+}} = %{{.+}}, %[[DONE:.+]] = %false)
// CHECK: scf.if %[[DONE]]
// CHECK: %[[APQ:.+]] = tensor.extract
// CHECK: arith.cmpf oeq, %[[APQ]]
// CHECK: math.copysign
// CHECK: %[[OFF:.+]] = scf.for {{.+}} -> (f64)
// CHECK: arith.cmpf ule, %[[OFF]]
// CHECK: arith.cmpf olt
// CHECK: return
func.func @eigvalsh(%a: tensor<1x3x3xf64>) -> tensor<1x3xf64> {
  %w = aten.eigvalsh %a : (tensor<1x3x3xf64>) -> tensor<1x3xf64>
  return %w : tensor<1x3xf64>
}

// eigh: the same sweeps also carry V, the identity at first, and rotate
// its columns p and q with the matrix's; the selection sort swaps V's
// columns with their eigenvalues.
// CHECK-LABEL: func @eigh
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[ZEROS:.+]] = linalg.fill
// CHECK: %[[EYE:.+]] = scf.for
// CHECK: tensor.insert %[[ONE]] into %{{.+}}[%[[M:.+]], %[[I:.+]], %[[I]]]
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %[[EYE]])
// CHECK: scf.for %{{.+}} = %{{.+}} to %c60 {{.+}} -> (tensor<1x3x3xf64>, tensor<1x3x3xf64>, i1)
// CHECK: math.copysign
// CHECK: %[[P:.+]] = tensor.extract %[[V:.+]][%{{.+}}, %[[K:.+]], %[[CP:.+]]] : tensor<1x3x3xf64>
// CHECK-NEXT: %[[Q:.+]] = tensor.extract %[[V]][%{{.+}}, %[[K]], %[[CQ:.+]]] : tensor<1x3x3xf64>
// CHECK: scf.yield %{{.+}}, %{{.+}} : tensor<1x3x3xf64>, tensor<1x3x3xf64>
// CHECK: arith.cmpf ule
// CHECK: %[[BEST:.+]]:2 = scf.for {{.+}} -> (index, f64)
// CHECK: arith.cmpf olt
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %[[BEST]]#0] : tensor<1x3x3xf64>
// CHECK: return %{{.+}}#1, %{{.+}}#2 : tensor<1x3xf64>, tensor<1x3x3xf64>
func.func @eigh(%a: tensor<1x3x3xf64>) -> (tensor<1x3xf64>, tensor<1x3x3xf64>) {
  %w, %v = aten.eigh %a : (tensor<1x3x3xf64>) -> (tensor<1x3xf64>, tensor<1x3x3xf64>)
  return %w, %v : tensor<1x3xf64>, tensor<1x3x3xf64>
}

// One-sided Jacobi: a pair of columns rotates when |gamma| exceeds
// sqrt(m) eps sqrt(alpha) sqrt(beta) (dgesvj's test); converged after a
// sweep with no rotation; the column norms, selection-sorted descending.
// CHECK-LABEL: func @svdvals
// CHECK: %[[REPS:.+]] = arith.mulf %cst{{.*}}, %cst{{.*}} : f32
// CHECK: scf.for %{{.+}} = %{{.+}} to %c60
// CHECK: scf.if
// CHECK: %[[NP:.+]] = math.sqrt
// CHECK: %[[SCALED:.+]] = arith.mulf %[[REPS]], %[[NP]] : f32
// CHECK: %[[NQ:.+]] = math.sqrt
// CHECK: %[[BOUND:.+]] = arith.mulf %[[SCALED]], %[[NQ]] : f32
// CHECK: %[[ROTATE:.+]] = arith.cmpf ogt, %{{.+}}, %[[BOUND]]
// CHECK: arith.xori %[[ROTATE]], %true
// CHECK: math.sqrt
// CHECK: arith.cmpf ogt
// CHECK: return
func.func @svdvals(%a: tensor<1x4x2xf32>) -> tensor<1x2xf32> {
  %s = aten.svdvals %a : (tensor<1x4x2xf32>) -> tensor<1x2xf32>
  return %s : tensor<1x2xf32>
}

// svd {complete}: the sweeps carry V; the sort moves V's and the rotated
// matrix's columns with the values; U's first n columns are those columns
// over their norms where the squared norm is at least the smallest normal
// f32 (1.17549435E-38) or NaN, else 0; then each column of U that is still 0
// (here columns 2 and 3 of 4) becomes the lightest row's unit vector,
// orthogonalised twice against the others (c != j) and normalised.
// CHECK-LABEL: func @svd
// CHECK: scf.for %{{.+}} = %{{.+}} to %c60 {{.+}} -> (tensor<1x4x2xf32>, tensor<1x2x2xf32>, i1)
// CHECK: arith.cmpf ogt
// CHECK: scf.for {{.+}} -> (tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<1x4x2xf32>)
// CHECK: %[[TINY:.+]] = arith.constant 1.17549435E-38 : f32
// CHECK: %[[DEFINED:.+]] = arith.cmpf uge, %{{.+}}, %[[TINY]] : f32
// CHECK: %[[NORM:.+]] = math.sqrt
// CHECK: %[[X:.+]] = arith.divf %{{.+}}, %[[NORM]] : f32
// CHECK: arith.select %[[DEFINED]], %[[X]], %{{.+}} : f32
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c4
// CHECK: %[[EMPTY:.+]] = arith.cmpf oeq
// CHECK: scf.if %[[EMPTY]] -> (tensor<1x4x4xf32>)
// CHECK: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK: iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[INF]]) -> (index, f32)
// CHECK: arith.cmpf olt
// CHECK: arith.cmpi ne, %{{.+}}, %[[J]] : index
// CHECK: arith.cmpi ne, %{{.+}}, %[[J]] : index
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: return %{{.+}}#3, %{{.+}}#1, %{{.+}}#2 : tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>
func.func @svd(%a: tensor<1x4x2xf32>) -> (tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>) {
  %u, %s, %v = aten.svd %a {complete} : (tensor<1x4x2xf32>) -> (tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>)
  return %u, %s, %v : tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>
}
