// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// Broadcasting: the rank-1 operand is read with a map that drops d0; alpha
// scales the right-hand side.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_broadcast_alpha
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32, %{{.+}}: f32):
// CHECK:   %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK:   %[[S:.+]] = arith.mulf %[[R]], %[[TWO]]
// CHECK:   %[[SUM:.+]] = arith.addf %[[L]], %[[S]]
// CHECK:   linalg.yield %[[SUM]]
func.func @add_broadcast_alpha(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = aten.add %a, %b {alpha = 2.0 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Size-1 dims broadcast through a constant index; integer operands convert
// to the float result type first (PyTorch type promotion).
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @mul_promotes
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #{{.+}}, #{{.+}}]
// CHECK: arith.sitofp %{{.+}} : i64 to f32
// CHECK: arith.mulf
func.func @mul_promotes(%a: tensor<2x1xf32>, %b: tensor<3xi64>) -> tensor<2x3xf32> {
  %0 = aten.mul %a, %b : (tensor<2x1xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @sub_div_int
// CHECK: arith.subi
// CHECK: arith.divf
func.func @sub_div_int(%a: tensor<4xi64>, %b: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %0 = aten.sub %a, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = aten.div %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xi64>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @constant
// CHECK: arith.constant dense<5.000000e-01> : tensor<f32>
func.func @constant() -> tensor<f32> {
  %0 = aten.constant dense<0.5> : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// relu keeps NaN (unordered compare); sigmoid is 1 / (1 + exp(-x)).
// CHECK-LABEL: func @unary
// CHECK: arith.negf
// CHECK: arith.cmpf ugt
// CHECK: arith.select
// CHECK: math.tanh
// CHECK: math.exp
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @unary(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = aten.neg %x : tensor<8xf32>
  %1 = aten.relu %0 : tensor<8xf32>
  %2 = aten.tanh %1 : tensor<8xf32>
  %3 = aten.exp %2 : tensor<8xf32>
  %4 = aten.sigmoid %3 : tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func @gelu_exact
// CHECK: arith.constant 0.707106769 : f32
// CHECK: math.erf
func.func @gelu_exact(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = aten.gelu %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func @gelu_tanh
// CHECK-DAG: arith.constant 4.471500e-02 : f32
// CHECK-DAG: arith.constant 0.797884583 : f32
// CHECK: math.tanh
// CHECK-NOT: math.erf
func.func @gelu_tanh(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = aten.gelu %x {approximate = "tanh"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Boolean add is logical or (True + True is True).
// CHECK-LABEL: func @add_bool
// CHECK: arith.ori %{{.+}}, %{{.+}} : i1
func.func @add_bool(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = aten.add %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// alpha False: lhs, whatever rhs holds (add(a, b, alpha=False) is a).
// CHECK-LABEL: func @add_bool_alpha_false
// CHECK: ^bb0(%[[A:.+]]: i1, %{{.+}}: i1, %{{.+}}: i1):
// CHECK-NEXT: linalg.yield %[[A]] : i1
func.func @add_bool_alpha_false(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = aten.add %a, %b {alpha = 0.0 : f64} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// bitcast (Tensor.view(dtype) of one width): one arith.bitcast per element,
// the operand read in its own type.
// CHECK-LABEL: func @bitcast_f32_i32
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: i32):
// CHECK: %[[B:.+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: linalg.yield %[[B]] : i32
func.func @bitcast_f32_i32(%x: tensor<2x3xf32>) -> tensor<2x3xi32> {
  %0 = aten.bitcast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
