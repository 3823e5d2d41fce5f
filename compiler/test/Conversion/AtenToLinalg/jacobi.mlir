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

// eigh: the same sweeps also carry V^T, the identity at first. J^T S J
// rotates rows p and q (contiguous), then the 2x2 block's columns, and
// mirrors the rest of columns p and q from rows p and q; V^T's rows p and
// q rotate with the matrix's. The selection sort swaps V^T's rows with
// their eigenvalues, and V is V^T transposed.
// CHECK-LABEL: func @eigh
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[ZEROS:.+]] = linalg.fill
// CHECK: %[[EYE:.+]] = scf.for
// CHECK: tensor.insert %[[ONE]] into %{{.+}}[%[[M:.+]], %[[I:.+]], %[[I]]]
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %[[EYE]])
// CHECK: scf.for %{{.+}} = %{{.+}} to %c60 {{.+}} -> (tensor<1x3x3xf64>, tensor<1x3x3xf64>, i1)
// CHECK: scf.for %[[P:.+]] = %{{.+}} to %c3
// CHECK: scf.for %[[Q:.+]] = %{{.+}} to %c3
// CHECK: math.copysign
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %c3
// CHECK-NEXT: tensor.extract %{{.+}}[%{{.+}}, %[[P]], %[[K]]] : tensor<1x3x3xf64>
// CHECK-NEXT: tensor.extract %{{.+}}[%{{.+}}, %[[Q]], %[[K]]] : tensor<1x3x3xf64>
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[P]], %[[P]]] : tensor<1x3x3xf64>
// CHECK-NEXT: tensor.extract %{{.+}}[%{{.+}}, %[[P]], %[[Q]]] : tensor<1x3x3xf64>
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[Q]], %[[P]]] : tensor<1x3x3xf64>
// CHECK-NEXT: tensor.extract %{{.+}}[%{{.+}}, %[[Q]], %[[Q]]] : tensor<1x3x3xf64>
// CHECK: scf.for %[[K2:.+]] = %{{.+}} to %c3
// CHECK: %[[NP:.+]] = arith.cmpi ne, %[[K2]], %[[P]] : index
// CHECK: %[[NQ:.+]] = arith.cmpi ne, %[[K2]], %[[Q]] : index
// CHECK: %[[OTHER:.+]] = arith.andi %[[NP]], %[[NQ]] : i1
// CHECK: %[[ROW:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[P]], %[[K2]]]
// CHECK: %[[COL:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[K2]], %[[P]]]
// CHECK: %[[MIRRORED:.+]] = arith.select %[[OTHER]], %[[ROW]], %[[COL]] : f64
// CHECK: tensor.insert %[[MIRRORED]] into %{{.+}}[%{{.+}}, %[[K2]], %[[P]]]
// CHECK: scf.yield %{{.+}}, %{{.+}} : tensor<1x3x3xf64>, tensor<1x3x3xf64>
// CHECK: arith.cmpf ule
// CHECK: %[[BEST:.+]]:2 = scf.for {{.+}} -> (index, f64)
// CHECK: arith.cmpf olt
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[BEST]]#0, %{{.+}}] : tensor<1x3x3xf64>
// CHECK: %[[V:.+]] = linalg.transpose ins(%{{.+}}#2 : tensor<1x3x3xf64>)
// CHECK: return %{{.+}}#1, %[[V]] : tensor<1x3xf64>, tensor<1x3x3xf64>
func.func @eigh(%a: tensor<1x3x3xf64>) -> (tensor<1x3xf64>, tensor<1x3x3xf64>) {
  %w, %v = aten.eigh %a : (tensor<1x3x3xf64>) -> (tensor<1x3xf64>, tensor<1x3x3xf64>)
  return %w, %v : tensor<1x3xf64>, tensor<1x3x3xf64>
}

// One-sided Jacobi on A^T's rows (A's columns): a pair rotates when
// |gamma| exceeds sqrt(m) eps sqrt(alpha) sqrt(beta) (dgesvj's test);
// converged after a sweep with no rotation; the norms, selection-sorted
// descending.
// CHECK-LABEL: func @svdvals
// CHECK: linalg.transpose ins(%arg0 : tensor<1x4x2xf32>) outs(%{{.+}} : tensor<1x2x4xf32>)
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

// svd {complete}: the sweeps work on A^T (its rows are A's columns,
// contiguous) and carry V^T; the sort moves their rows with the values;
// U^T's first n rows are work's rows over their norms where the squared
// norm is at least the smallest normal f32 (1.17549435E-38) or NaN, else
// 0; then each row of U^T that is still 0 (here rows 2 and 3 of 4)
// becomes the lightest unit vector, orthogonalised twice against the
// others (c != j) and normalised; U and V are U^T and V^T transposed.
// CHECK-LABEL: func @svd
// CHECK: %[[AT:.+]] = linalg.transpose ins(%arg0 : tensor<1x4x2xf32>) outs(%{{.+}} : tensor<1x2x4xf32>) permutation = [0, 2, 1]
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %[[AT]], {{.+}}) -> (tensor<1x2x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<1x4x4xf32>)
// CHECK: scf.for %{{.+}} = %{{.+}} to %c60 {{.+}} -> (tensor<1x2x4xf32>, tensor<1x2x2xf32>, i1)
// CHECK: arith.cmpf ogt
// CHECK: scf.for {{.+}} -> (tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<1x2x4xf32>)
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
// CHECK: %[[U:.+]] = linalg.transpose ins(%{{.+}}#3 : tensor<1x4x4xf32>)
// CHECK: %[[V:.+]] = linalg.transpose ins(%{{.+}}#2 : tensor<1x2x2xf32>)
// CHECK: return %[[U]], %{{.+}}#1, %[[V]] : tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>
func.func @svd(%a: tensor<1x4x2xf32>) -> (tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>) {
  %u, %s, %v = aten.svd %a {complete} : (tensor<1x4x2xf32>) -> (tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>)
  return %u, %s, %v : tensor<1x4x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>
}
