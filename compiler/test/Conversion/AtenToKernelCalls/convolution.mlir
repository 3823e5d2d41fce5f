// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls | FileCheck %s
// RUN: not kiln-opt %s -split-input-file -kiln-convert-aten-to-kernel-calls=library=mkl 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// UNKNOWN: unknown kernel library 'mkl' (known: onednn, aie)

// A strided, padded 2-d convolution with a bias becomes one library call:
// geometry (rank, batch, in, out, groups, has_bias, input[3], kernel[3],
// output[3], stride[3], pad_begin[3], pad_end[3], dilation[3]) in a
// constant global, a zeroed state slot, read-only operand buffers and a
// fresh 64-byte-aligned output.
// CHECK-DAG: memref.global "private" constant @__kiln_convolution : memref<31xi64> = dense<[2, 1, 3, 4, 1, 1, 8, 8, 1, 3, 3, 1, 4, 4, 1, 2, 2, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" @__kiln_convolution_state : memref<1xi64> = dense<0>
// CHECK-LABEL: func @conv2d
// CHECK-NOT: aten.convolution
// CHECK-DAG: %[[X:.+]] = bufferization.to_memref %arg0 read_only : memref<1x3x8x8xf32>
// CHECK-DAG: %[[W:.+]] = bufferization.to_memref %arg1 read_only : memref<4x3x3x3xf32>
// CHECK-DAG: %[[B:.+]] = bufferization.to_memref %arg2 read_only : memref<4xf32>
// CHECK-DAG: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x4xf32>
// CHECK: call @kiln_rt_convolution_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK: func.func private @kiln_rt_convolution_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = aten.convolution %x, %w, bias %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Two call sites get their own geometry and state; a grouped, dilated 1-d
// convolution without bias has has_bias 0 and unused dims of size 1, and
// passes its output as the (ignored) bias pointer. A depthwise 3-d one
// records groups = channels. With no epilogue, the scale, shift and
// residual pointers are the output's too.
// CHECK-DAG: memref.global "private" constant @__kiln_convolution{{.*}} = dense<[1, 2, 4, 6, 2, 0, 10, 1, 1, 3, 1, 1, 6, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @__kiln_convolution{{.*}} = dense<[3, 1, 2, 2, 2, 0, 4, 4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" @__kiln_convolution_state{{.*}} : memref<1xi64>
// CHECK-DAG: memref.global "private" @__kiln_convolution_state{{.*}} : memref<1xi64>
// CHECK-LABEL: func @grouped_and_depthwise
// CHECK: %[[OUT1:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x6x6xf32>
// CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[OUT1]]
// CHECK: %[[I:.+]] = arith.index_cast %[[P]]
// CHECK: %[[BIAS:.+]] = llvm.inttoptr %[[I]]
// CHECK: call @kiln_rt_convolution_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BIAS]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK: call @kiln_rt_convolution_f32
func.func @grouped_and_depthwise(%x: tensor<2x4x10xf32>, %w: tensor<6x2x3xf32>,
                                 %v: tensor<1x2x4x4x4xf32>, %d: tensor<2x1x3x3x3xf32>)
    -> (tensor<2x6x6xf32>, tensor<1x2x2x2x2xf32>) {
  %0 = aten.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>,
      dilation = array<i64: 2>, output_padding = array<i64: 0>, transposed = false, groups = 2 : i64}
      : (tensor<2x4x10xf32>, tensor<6x2x3xf32>) -> tensor<2x6x6xf32>
  %1 = aten.convolution %v, %d {stride = array<i64: 1, 1, 1>, padding = array<i64: 0, 0, 0>,
      dilation = array<i64: 1, 1, 1>, output_padding = array<i64: 0, 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x2x4x4x4xf32>, tensor<2x1x3x3x3xf32>) -> tensor<1x2x2x2x2xf32>
  return %0, %1 : tensor<2x6x6xf32>, tensor<1x2x2x2x2xf32>
}

// -----

// Left to the generated code: transposed, f64, an empty batch.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: kiln_rt_convolution_f32
// CHECK-COUNT-3: aten.convolution
// CHECK-NOT: kiln_rt_convolution_f32
func.func @left_alone(%x: tensor<1x4x5x5xf32>, %wt: tensor<4x2x3x3xf32>,
                      %xd: tensor<1x3x5x5xf64>, %wd: tensor<2x3x3x3xf64>,
                      %xe: tensor<0x3x5x5xf32>, %we: tensor<2x3x3x3xf32>)
    -> (tensor<1x2x7x7xf32>, tensor<1x2x3x3xf64>, tensor<0x2x3x3xf32>) {
  %0 = aten.convolution %x, %wt {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = true, groups = 1 : i64}
      : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  %1 = aten.convolution %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x5x5xf64>, tensor<2x3x3x3xf64>) -> tensor<1x2x3x3xf64>
  %2 = aten.convolution %xe, %we {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<0x3x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<0x2x3x3xf32>
  return %0, %1, %2 : tensor<1x2x7x7xf32>, tensor<1x2x3x3xf64>, tensor<0x2x3x3xf32>
}
