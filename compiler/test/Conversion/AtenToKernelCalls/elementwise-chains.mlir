// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls="library=aie elementwise-chains=1" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls="library=aie elementwise-chains=1 max-calls=1" | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls | FileCheck %s --check-prefix=ONEDNN
// RUN: not kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls="elementwise-chains=1" 2>&1 | FileCheck %s --check-prefix=REFUSED

// For the array a relu after a call is its epilogue's activation 4 (the
// array's relu keeps NaN); oneDNN's would not, so there it stays.
// CHECK-DAG: constant @__kiln_convolution : memref<31xi64> = dense<[2, 1, 3, 4, 1, 0, 8, 8, 1, 3, 3, 1, 8, 8, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 4, 0]>
// CHECK-LABEL: func @conv_add_relu
// CHECK: call @kiln_rt_convolution_f32
// CHECK-NOT: aten.relu
// CHECK: return
// ONEDNN-LABEL: func @conv_add_relu
// ONEDNN: call @kiln_rt_convolution_f32
// ONEDNN: aten.relu
// REFUSED: kernel library 'onednn' takes no elementwise chains
func.func @conv_add_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                         %skip: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = aten.add %skip, %0 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %2 = aten.relu %1 : tensor<1x4x8x8xf32>
  return %2 : tensor<1x4x8x8xf32>
}

// -----

// A chain without a product: (a + b) * 2, clamp(0, 6), - c is one call of
// 3 inputs and 5 steps {op, lhs, rhs, scalar bits}: ADD(0, 1, alpha 1.0),
// MUL_SCALAR(3, 2.0), CLAMP_MIN(4, 0.0), CLAMP_MAX(5, 6.0), SUB(6, 2,
// alpha 1.0). Registers 0-2 are the inputs, 3.. the steps' results.
// CHECK-DAG: memref.global "private" constant @__kiln_elementwise : memref<35xi64> = dense<[128, 3, 5, 1, 0, 1, 4607182418800017408, 6, 3, 0, 4611686018427387904, 13, 4, 0, 0, 14, 5, 0, 4618441417868443648, 2, 6, 2, 4607182418800017408, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func @chain
// CHECK-DAG: %[[A:.+]] = bufferization.to_memref %arg0 read_only
// CHECK-DAG: %[[B:.+]] = bufferization.to_memref %arg1 read_only
// CHECK-DAG: %[[C:.+]] = bufferization.to_memref %arg2 read_only
// CHECK: call @kiln_rt_elementwise_f32
// CHECK-NOT: aten.
// CHECK: return
// CHECK: func.func private @kiln_rt_elementwise_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// ONEDNN-LABEL: func @chain
// ONEDNN-NOT: call
// ONEDNN: return
func.func @chain(%a: tensor<4x32xf32>, %b: tensor<4x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = aten.constant dense<2.0> : tensor<f32>
  %0 = aten.add %a, %b : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %1 = aten.mul %0, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %2 = aten.pointwise "clamp" %1 {scalars = array<f64: 0.0, 6.0>} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %3 = aten.sub %2, %c : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %3 : tensor<4x32xf32>
}

// -----

// What stays generated: a chain under 64 elements, an add that broadcasts,
// and a function the library lacks (tanh). A result read twice ends a
// chain: relu's result feeds two chains, each one call.
// CHECK-LABEL: func @stays
// CHECK: aten.relu {{.*}} : tensor<2x4xf32>
// CHECK: call @kiln_rt_elementwise_f32
// CHECK: aten.add %{{.*}}, %arg2 : (tensor<8x16xf32>, tensor<16xf32>)
// CHECK: aten.tanh
// CHECK: call @kiln_rt_elementwise_f32
// CHECK: call @kiln_rt_elementwise_f32
// CHECK: return
func.func @stays(%small: tensor<2x4xf32>, %x: tensor<8x16xf32>, %row: tensor<16xf32>)
    -> (tensor<2x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = aten.relu %small : tensor<2x4xf32>
  %1 = aten.relu %x : tensor<8x16xf32>
  %2 = aten.add %1, %row : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %3 = aten.tanh %2 : tensor<8x16xf32>
  %4 = aten.neg %3 : tensor<8x16xf32>
  %5 = aten.mul %3, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %2, %4, %5 : tensor<2x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// The loader's call sites are few (max-calls=1): the product takes the one
// there is, the chain stays generated.
// ONE-LABEL: func @budget
// ONE: call @kiln_rt_matmul_f32
// ONE-NOT: call @kiln_rt_elementwise_f32
// ONE: aten.neg
// CHECK-LABEL: func @budget
// CHECK: call @kiln_rt_matmul_f32
// CHECK: call @kiln_rt_elementwise_f32
func.func @budget(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %0 = aten.mm %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  %1 = aten.neg %c : tensor<16x16xf32>
  return %0, %1 : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// A chain whose result two chains read: the larger is rewritten first, and
// the two read its call's result (the chains hold operands, not values).
// CHECK-LABEL: func @chain_into_chains
// CHECK-COUNT-3: call @kiln_rt_elementwise_f32
// CHECK-NOT: aten.
// CHECK: return
func.func @chain_into_chains(%a: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %one = aten.constant dense<1.0> : tensor<f32>
  %two = aten.constant dense<2.0> : tensor<f32>
  %0 = aten.neg %a : tensor<4x32xf32>
  %1 = aten.add %0, %one : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %2 = aten.mul %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %t = aten.neg %2 : tensor<4x32xf32>
  %r = aten.relu %t : tensor<4x32xf32>
  %n = aten.neg %t : tensor<4x32xf32>
  return %r, %n : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Two runs meeting at one op: the add joins the first (relu's), whose
// second input is the other run's result; the other run is a chain of its
// own (neg). A clamp without a lower bound is one CLAMP_MAX step.
// CHECK-DAG: constant @__kiln_elementwise{{.*}} = dense<[128, 2, 2, 9, 0, 0, 0, 1, 2, 1, 4607182418800017408, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: constant @__kiln_elementwise{{.*}} = dense<[128, 1, 1, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: constant @__kiln_elementwise{{.*}} = dense<[128, 1, 1, 14, 0, 0, 4618441417868443648, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func @meeting
// CHECK-COUNT-3: call @kiln_rt_elementwise_f32
// CHECK-NOT: aten.
// CHECK: return
func.func @meeting(%x: tensor<4x32xf32>, %y: tensor<4x32xf32>, %z: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %r = aten.relu %x : tensor<4x32xf32>
  %n = aten.neg %y : tensor<4x32xf32>
  %s = aten.add %r, %n : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %c = aten.pointwise "clamp" %z {scalars = array<f64: 0x7FF8000000000000, 6.0>} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %s, %c : tensor<4x32xf32>, tensor<4x32xf32>
}
