// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls | FileCheck %s

// nn.Linear: addmm of the bias, the input and the transposed weight. The
// weight is passed as stored with b_transposed = 1, and its permute goes.
// Geometry: (batch, m, n, k, a_transposed, b_transposed, has_bias).
// CHECK-DAG: memref.global "private" constant @__kiln_matmul : memref<10xi64> = dense<[1, 4, 16, 8, 0, 1, 1, 0, 0, 0]>
// CHECK-DAG: memref.global "private" @__kiln_matmul_state : memref<1xi64> = dense<0>
// CHECK-LABEL: func @linear
// CHECK-NOT: aten.
// CHECK-DAG: bufferization.to_memref %arg0 read_only : memref<16x8xf32>
// CHECK-DAG: bufferization.to_memref %arg1 read_only : memref<16xf32>
// CHECK-DAG: bufferization.to_memref %arg2 read_only : memref<4x8xf32>
// CHECK: call @kiln_rt_matmul_f32
// CHECK-NOT: aten.
// CHECK: func.func private @kiln_rt_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @linear(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %0 = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %1 = aten.addmm %b, %x, %0 : (tensor<16xf32>, tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Attention's q @ k^T: a bmm whose second operand swaps its last two dims
// (b_transposed); a (1, n) bias counts as per-column; a plain mm. The
// permute read elsewhere too stays for that reader.
// CHECK-DAG: memref.global "private" constant @__kiln_matmul{{.*}} = dense<[8, 128, 128, 32, 0, 1, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @__kiln_matmul{{.*}} = dense<[1, 3, 5, 2, 1, 0, 1, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @__kiln_matmul{{.*}} = dense<[1, 3, 4, 5, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func @products
// CHECK: %[[KT:.+]] = aten.permute %arg1
// CHECK-COUNT-3: call @kiln_rt_matmul_f32
// CHECK: return %{{.+}}, %{{.+}}, %{{.+}}, %[[KT]]
func.func @products(%q: tensor<8x128x32xf32>, %k: tensor<8x128x32xf32>,
                    %at: tensor<2x3xf32>, %w: tensor<2x5xf32>, %bias: tensor<1x5xf32>,
                    %m: tensor<5x4xf32>)
    -> (tensor<8x128x128xf32>, tensor<3x5xf32>, tensor<3x4xf32>, tensor<8x32x128xf32>) {
  %kt = aten.permute %k {dims = array<i64: 0, 2, 1>} : (tensor<8x128x32xf32>) -> tensor<8x32x128xf32>
  %0 = aten.bmm %q, %kt : (tensor<8x128x32xf32>, tensor<8x32x128xf32>) -> tensor<8x128x128xf32>
  %a = aten.permute %at {dims = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = aten.addmm %bias, %a, %w : (tensor<1x5xf32>, tensor<3x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %2 = aten.mm %1, %m : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  return %0, %1, %2, %kt : tensor<8x128x128xf32>, tensor<3x5xf32>, tensor<3x4xf32>, tensor<8x32x128xf32>
}

// -----

// Left to the generated code: alpha or beta other than 1, a bias that is
// not per-column, f64, an empty extent.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: kiln_rt_matmul_f32
// CHECK-COUNT-4: aten.{{(addmm|mm)}}
// CHECK-NOT: kiln_rt_matmul_f32
func.func @left_alone(%b: tensor<3xf32>, %x: tensor<2x4xf32>, %w: tensor<4x3xf32>,
                      %full: tensor<2x3xf32>, %xd: tensor<2x4xf64>, %wd: tensor<4x3xf64>,
                      %e: tensor<0x4xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf64>, tensor<0x3xf32>) {
  %0 = aten.addmm %b, %x, %w {alpha = 2.0 : f64, beta = 1.0 : f64} : (tensor<3xf32>, tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %1 = aten.addmm %full, %x, %w : (tensor<2x3xf32>, tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %2 = aten.mm %xd, %wd : (tensor<2x4xf64>, tensor<4x3xf64>) -> tensor<2x3xf64>
  %3 = aten.mm %e, %w : (tensor<0x4xf32>, tensor<4x3xf32>) -> tensor<0x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf64>, tensor<0x3xf32>
}
