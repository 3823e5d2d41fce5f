// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls=channels-last=1 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls=channels-last=1 -kiln-sink-permutes | FileCheck %s --check-prefix=SUNK
// RUN: not kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls="library=aie channels-last=1" 2>&1 | FileCheck %s --check-prefix=AIE

// AIE: kernel library 'aie' takes channels-first convolutions

// Channels last: the call reads permute(x) (n, h, w, c), writes a
// (1, 4, 3, 5) buffer, and its geometry ends with channels_last = 1; the
// graph reads the output permuted back. The residual of the second call's
// epilogue is permuted like its output.
// CHECK-DAG: memref.global "private" constant @__kiln_convolution : memref<31xi64> = dense<[2, 1, 3, 5, 1, 0, 8, 6, 1, 3, 3, 1, 4, 3, 1, 2, 2, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1]>
// CHECK-LABEL: func @two_convolutions
// CHECK: %[[IN:.+]] = aten.permute %arg0 {dims = array<i64: 0, 2, 3, 1>} : (tensor<1x3x8x6xf32>) -> tensor<1x8x6x3xf32>
// CHECK: bufferization.to_memref %[[IN]] read_only : memref<1x8x6x3xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x3x5xf32>
// CHECK: call @kiln_rt_convolution_f32
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK: %[[Y:.+]] = aten.permute %[[T]] {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x4x3x5xf32>) -> tensor<1x5x4x3xf32>
// CHECK: aten.permute %[[Y]] {dims = array<i64: 0, 2, 3, 1>}
// CHECK: aten.permute %[[Y]] {dims = array<i64: 0, 2, 3, 1>}
// CHECK: call @kiln_rt_convolution_f32

// After kiln-sink-permutes the second call reads the first one's output
// buffer as it is, for both its input and its residual; one permute is
// left, for the function's result.
// SUNK-LABEL: func @two_convolutions
// SUNK: %[[FIRST:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x3x5xf32>
// SUNK: call @kiln_rt_convolution_f32
// SUNK-NOT: aten.permute
// SUNK: memref.extract_aligned_pointer_as_index %[[FIRST]]
// SUNK-NOT: aten.permute
// SUNK: memref.extract_aligned_pointer_as_index %[[FIRST]]
// SUNK-NOT: aten.permute
// SUNK: call @kiln_rt_convolution_f32
// SUNK: %[[T2:.+]] = bufferization.to_tensor
// SUNK: %[[R:.+]] = aten.permute %[[T2]] {dims = array<i64: 0, 3, 1, 2>}
// SUNK: return %[[R]]
func.func @two_convolutions(%x: tensor<1x3x8x6xf32>, %w: tensor<5x3x3x3xf32>,
                            %w2: tensor<5x5x1x1xf32>) -> tensor<1x5x4x3xf32> {
  %0 = aten.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x6xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x4x3xf32>
  %1 = aten.convolution %0, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x5x4x3xf32>, tensor<5x5x1x1xf32>) -> tensor<1x5x4x3xf32>
  %2 = aten.add %1, %0 : (tensor<1x5x4x3xf32>, tensor<1x5x4x3xf32>) -> tensor<1x5x4x3xf32>
  return %2 : tensor<1x5x4x3xf32>
}
