// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s
// RUN: kiln-opt %s -kiln-convert-aten-to-linalg | FileCheck %s --check-prefix=BOUND

// Matrix by matrix over the batch: the 1-norm in f64 (a scalar loop, the
// largest column sum), s = ceil(log2(norm / 3.01)) where the norm is past
// the f32 bound (0 otherwise, and for a NaN or infinite norm), the matrix
// scaled by 2^-s as two exact powers of two built from exponent bits, the
// degree-18 Taylor polynomial in 5 products (B^2, B^3, B^6, C_0 C_4 and
// (C_2 + A9) A9),
// then s squarings in a loop carrying the result and a scratch matrix.
// CHECK-LABEL: func @exp
// BOUND-LABEL: func @exp
// BOUND: arith.constant 3.01006636281{{[0-9]*}} : f64
// CHECK: %[[OUT:.+]] = scf.for %[[M:.+]] = %{{.+}} to %c2 step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (tensor<2x3x3xf32>)
// CHECK: %[[A:.+]] = tensor.extract_slice %{{.+}}[%[[M]], 0, 0] [1, 3, 3] [1, 1, 1] : tensor<2x3x3xf32> to tensor<3x3xf32>
// CHECK: %[[NORM:.+]] = scf.for
// CHECK: scf.for
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[RATIO:.+]] = arith.divf %[[NORM]], %[[LIMIT:.+]] : f64
// CHECK: %[[LOG:.+]] = math.log2 %[[RATIO]] : f64
// CHECK: %[[CEIL:.+]] = math.ceil %[[LOG]] : f64
// CHECK: %[[PAST:.+]] = arith.cmpf ogt, %[[NORM]], %{{.+}} : f64
// CHECK: %[[FINITE:.+]] = arith.cmpf ole, %[[CEIL]]
// CHECK: %[[NEEDED:.+]] = arith.andi %[[PAST]], %[[FINITE]] : i1
// CHECK: %[[COUNT:.+]] = arith.select %[[NEEDED]], %[[CEIL]]
// CHECK: %[[I:.+]] = arith.fptosi %[[COUNT]] : f64 to i64
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.+}} : i64 to f64
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.+}} : i64 to f64
// CHECK: linalg.generic
// CHECK: arith.extf
// CHECK: arith.truncf
// CHECK-COUNT-5: linalg.matmul
// CHECK: %[[S:.+]] = arith.index_cast %[[I]] : i64 to index
// CHECK: %[[SQ:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %[[S]] step %{{.+}} iter_args(%[[T:.+]] = %{{.+}}, %[[SCRATCH:.+]] = %{{.+}})
// CHECK: %[[ZEROED:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[SCRATCH]] : tensor<3x3xf32>)
// CHECK: %[[SQUARE:.+]] = linalg.matmul ins(%[[T]], %[[T]] : tensor<3x3xf32>, tensor<3x3xf32>) outs(%[[ZEROED]] : tensor<3x3xf32>)
// CHECK: %[[BACK:.+]] = linalg.copy ins(%[[SQUARE]] : tensor<3x3xf32>) outs(%[[T]] : tensor<3x3xf32>)
// CHECK: scf.yield %[[BACK]], %[[SQUARE]]
// CHECK: tensor.insert_slice %[[SQ]]#0 into %[[ACC]][%[[M]], 0, 0] [1, 3, 3] [1, 1, 1]
// CHECK: return %[[OUT]]
// CHECK-NOT: aten.
func.func @exp(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %e = aten.matrix_exp %a : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %e : tensor<2x3x3xf32>
}

// f64: the f64 bound, no widening for the scaling.
// CHECK-LABEL: func @exp64
// BOUND-LABEL: func @exp64
// BOUND: arith.constant 1.09086371929{{[0-9]*}} : f64
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @exp64(%a: tensor<1x2x2xf64>) -> tensor<1x2x2xf64> {
  %e = aten.matrix_exp %a : (tensor<1x2x2xf64>) -> tensor<1x2x2xf64>
  return %e : tensor<1x2x2xf64>
}
