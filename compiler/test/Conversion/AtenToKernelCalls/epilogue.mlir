// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls | FileCheck %s

// resnet's block tail: convolution, batch norm and the residual add become
// one call; relu stays generated (the library's loses NaNs). The epilogue
// fields (has_scale_shift, has_residual, activation) end the geometry; the
// norm's per-channel scale and shift are computed from its statistics on 4
// values (the norm at 1 with zero mean and bias, and at 0), and passed with
// the residual.
// CHECK-DAG: memref.global "private" constant @__kiln_convolution : memref<31xi64> = dense<[2, 1, 3, 4, 1, 0, 8, 8, 1, 3, 3, 1, 8, 8, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0]>
// CHECK-LABEL: func @conv_bn_add_relu
// CHECK-DAG: %[[ONE:.+]] = aten.constant dense<1.000000e+00> : tensor<4x1x1xf32>
// CHECK-DAG: %[[ZERO:.+]] = aten.constant dense<0.000000e+00> : tensor<4x1x1xf32>
// CHECK: %[[SCALE:.+]] = aten.pointwise "batch_norm" %[[ONE]], %[[ZERO]], %arg3, %arg4, %[[ZERO]] {scalars = array<f64: 1.000000e-05>}
// CHECK: %[[SHIFT:.+]] = aten.pointwise "batch_norm" %[[ZERO]], %arg2, %arg3, %arg4, %arg5 {scalars = array<f64: 1.000000e-05>}
// CHECK-DAG: bufferization.to_memref %[[SCALE]] read_only : memref<4x1x1xf32>
// CHECK-DAG: bufferization.to_memref %[[SHIFT]] read_only : memref<4x1x1xf32>
// CHECK-DAG: bufferization.to_memref %arg6 read_only : memref<1x4x8x8xf32>
// CHECK: call @kiln_rt_convolution_f32
// CHECK-NOT: aten.add
// CHECK-NOT: "batch_norm"
// CHECK: %[[R:.+]] = aten.relu
// CHECK: return %[[R]]
func.func @conv_bn_add_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                            %mean: tensor<4x1x1xf32>, %var: tensor<4x1x1xf32>,
                            %gamma: tensor<4x1x1xf32>, %beta: tensor<4x1x1xf32>,
                            %skip: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = aten.pointwise "batch_norm" %0, %mean, %var, %gamma, %beta {scalars = array<f64: 1.0e-05>}
      : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %2 = aten.add %skip, %1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = aten.relu %2 : tensor<1x4x8x8xf32>
  return %3 : tensor<1x4x8x8xf32>
}

// -----

// mobilenet's: batch norm then hardswish (activation 1).
// CHECK-DAG: constant @__kiln_convolution{{.*}} dense<[2, 1, 2, 2, 2, 0, 4, 4, 1, 3, 3, 1, 4, 4, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0]>
// CHECK-LABEL: func @bn_hardswish
// CHECK-NOT: "hardswish"
// CHECK: return
func.func @bn_hardswish(%x: tensor<1x2x4x4xf32>, %w: tensor<2x1x3x3xf32>,
                        %s: tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = aten.pointwise "batch_norm" %0, %s, %s, %s, %s {scalars = array<f64: 1.0e-03>}
      : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = aten.pointwise "hardswish" %1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// Nothing folds where another op reads the intermediate result, where the
// add broadcasts or adds the result to itself, or for relu and clamp.
// CHECK-LABEL: func @not_folded
// CHECK: call @kiln_rt_convolution_f32
// CHECK: aten.relu
// CHECK: call @kiln_rt_convolution_f32
// CHECK: aten.add %{{.+}}, %{{.+}} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>)
// CHECK: call @kiln_rt_convolution_f32
// CHECK: aten.add %[[Y:[0-9]+]], %[[Y]] :
// CHECK: call @kiln_rt_convolution_f32
// CHECK: aten.pointwise "clamp"
func.func @not_folded(%x: tensor<1x2x4x4xf32>, %w: tensor<2x1x3x3xf32>, %c: tensor<2x1x1xf32>)
    -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = aten.relu %0 : tensor<1x2x4x4xf32>
  %2 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %3 = aten.add %2, %c : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %5 = aten.add %4, %4 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %6 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %7 = aten.pointwise "clamp" %6 {scalars = array<f64: 0.0, 6.0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0, %1, %3, %5, %7 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A transformer's feed-forward: nn.Linear then gelu, and nn.Linear plus the
// residual; the epilogue's channel is the product's column.
// CHECK-DAG: constant @__kiln_matmul{{.*}} = dense<[1, 16, 64, 32, 0, 1, 1, 0, 0, 2]>
// CHECK-DAG: constant @__kiln_matmul{{.*}} = dense<[1, 16, 32, 64, 0, 1, 1, 0, 1, 0]>
// CHECK-LABEL: func @linear_gelu_linear_add
// CHECK-NOT: aten.gelu
// CHECK-NOT: aten.add
func.func @linear_gelu_linear_add(%x: tensor<16x32xf32>, %w1: tensor<64x32xf32>, %b1: tensor<64xf32>,
                                  %w2: tensor<32x64xf32>, %b2: tensor<32xf32>) -> tensor<16x32xf32> {
  %t1 = aten.permute %w1 {dims = array<i64: 1, 0>} : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %0 = aten.addmm %b1, %x, %t1 : (tensor<64xf32>, tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = aten.gelu %0 : tensor<16x64xf32>
  %t2 = aten.permute %w2 {dims = array<i64: 1, 0>} : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %2 = aten.addmm %b2, %1, %t2 : (tensor<32xf32>, tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %3 = aten.add %x, %2 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  return %3 : tensor<16x32xf32>
}

// -----

// hardswish as torch.export decomposes it (mobilenet_v3 after every norm):
// y * clamp(clamp(y + 3, min=0), max=6) / 6 folds as activation 1.
// CHECK-DAG: constant @__kiln_convolution{{.*}} dense<[2, 1, 2, 2, 1, 0, 4, 4, 1, 1, 1, 1, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0]>
// CHECK-LABEL: func @decomposed_hardswish
// CHECK: call @kiln_rt_convolution_f32
// CHECK-NOT: aten.
// CHECK: return
func.func @decomposed_hardswish(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %three = aten.constant dense<3.0> : tensor<f32>
  %1 = aten.add %0, %three : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = aten.pointwise "clamp" %1 {scalars = array<f64: 0.0, 0x7FF8000000000000>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = aten.pointwise "clamp" %2 {scalars = array<f64: 0x7FF8000000000000, 6.0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = aten.mul %0, %3 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %six = aten.constant dense<6.0> : tensor<f32>
  %5 = aten.div %4, %six : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  return %5 : tensor<1x2x4x4xf32>
}

// -----

// Clamps other than relu6 around y + 3 are another function: not folded.
// CHECK-LABEL: func @not_hardswish
// CHECK: call @kiln_rt_convolution_f32
// CHECK: aten.pointwise "clamp"
// CHECK: aten.div
func.func @not_hardswish(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %three = aten.constant dense<3.0> : tensor<f32>
  %1 = aten.add %0, %three : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = aten.pointwise "clamp" %1 {scalars = array<f64: 0x7FF8000000000000, 3.0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = aten.pointwise "clamp" %2 {scalars = array<f64: 0.0, 6.0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = aten.mul %0, %3 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %six = aten.constant dense<6.0> : tensor<f32>
  %5 = aten.div %4, %six : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  return %5 : tensor<1x2x4x4xf32>
}
