// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls -mlir-print-debuginfo | FileCheck %s

// A call's location names every node it runs: first the node whose value it
// computes (the last folded op's), then the contraction's, then the other
// folded ops' (the op report marks them all as the library's). The relu
// after it stays generated and keeps its own name.
// CHECK-LABEL: func @conv_bn_add_relu
// CHECK: call @kiln_rt_convolution_f32({{.*}}) loc(#[[CALL:loc[0-9]*]])
// CHECK: aten.relu {{.*}} loc(#[[RELU:loc[0-9]*]])
// CHECK-DAG: #[[RELU]] = loc("relu")
// CHECK-DAG: #[[CALL]] = loc(fused[#{{loc[0-9]*}}, #{{loc[0-9]*}}, #{{loc[0-9]*}}])
// CHECK-DAG: loc("add")
// CHECK-DAG: loc("convolution")
// CHECK-DAG: loc("batch_norm")
func.func @conv_bn_add_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                            %s: tensor<4x1x1xf32>,
                            %skip: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> loc("convolution")
  %1 = aten.pointwise "batch_norm" %0, %s, %s, %s, %s {scalars = array<f64: 1.0e-05>}
      : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32> loc("batch_norm")
  %2 = aten.add %skip, %1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("add")
  %3 = aten.relu %2 : tensor<1x4x8x8xf32> loc("relu")
  return %3 : tensor<1x4x8x8xf32>
}

// -----

// Without an epilogue the call keeps the contraction's own location.
// CHECK-LABEL: func @bare_matmul
// CHECK: call @kiln_rt_matmul_f32({{.*}}) loc(#[[MM:loc[0-9]*]])
// CHECK: #[[MM]] = loc("mm")
func.func @bare_matmul(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = aten.mm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32> loc("mm")
  return %0 : tensor<4x3xf32>
}

// -----

// A linear layer's transposed weight is read as it is (a flag): the
// transpose's node runs in the call too. One that something else also reads
// stays generated code, and out of the call's location.
// CHECK-LABEL: func @linear
// CHECK: call @kiln_rt_matmul_f32({{.*}}) loc(#[[LINEAR:loc[0-9]*]])
// CHECK-DAG: #[[LINEAR]] = loc(fused[#{{loc[0-9]*}}, #{{loc[0-9]*}}])
// CHECK-DAG: loc("fc")
// CHECK-DAG: loc("t")
func.func @linear(%x: tensor<4x8xf32>, %w: tensor<3x8xf32>) -> tensor<4x3xf32> {
  %t = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<3x8xf32>) -> tensor<8x3xf32> loc("t")
  %0 = aten.mm %x, %t : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32> loc("fc")
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func @shared_transpose
// CHECK: call @kiln_rt_matmul_f32({{.*}}) loc(#[[SHARED:loc[0-9]*]])
// CHECK: #[[SHARED]] = loc("fc2")
func.func @shared_transpose(%x: tensor<4x8xf32>, %w: tensor<3x8xf32>)
    -> (tensor<4x3xf32>, tensor<8x3xf32>) {
  %t = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<3x8xf32>) -> tensor<8x3xf32> loc("t2")
  %0 = aten.mm %x, %t : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32> loc("fc2")
  return %0, %t : tensor<4x3xf32>, tensor<8x3xf32>
}
