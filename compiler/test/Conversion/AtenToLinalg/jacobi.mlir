// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s

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
