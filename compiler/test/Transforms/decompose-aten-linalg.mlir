// RUN: kiln-opt %s -kiln-decompose-aten | FileCheck %s

// getrf unrolled over the 3 columns of a batch of two f64 matrices: per
// column one argmax of the eligible magnitudes (the pivot row), the swap,
// the multipliers and the trailing update; the pivots are concatenated,
// and the parity of the swaps is an xor of each step's "swapped".
// CHECK-LABEL: func @lu
// CHECK-DAG: %[[ROWS:.+]] = aten.constant dense<{{\[\[}}[0], [1], [2]]]> : tensor<1x3x1xi64>
// CHECK-DAG: %[[COLS:.+]] = aten.constant dense<{{\[\[}}[0, 1, 2]]]> : tensor<1x1x3xi64>
// CHECK-COUNT-3: aten.arg_reduce %{{.+}} {dim = 1 : i64, keepdim = true, max = true} : (tensor<2x3x1xf64>) -> tensor<2x1x1xi64>
// CHECK: %[[PIVOTS:.+]] = aten.cat %{{.+}}, %{{.+}}, %{{.+}} {dim = 1 : i64} : (tensor<2x1xi64>, tensor<2x1xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
// CHECK: return %{{.+}}, %[[PIVOTS]], %{{.+}} : tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>
// CHECK-NOT: aten.lu_factor
func.func @lu(%a: tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>) {
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>)
  return %lu, %pivots, %odd : tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>
}
