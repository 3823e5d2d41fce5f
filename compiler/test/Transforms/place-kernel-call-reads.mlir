// RUN: kiln-opt %s -kiln-place-kernel-call-reads | FileCheck %s

// Two calls read %t through one to_memref (as CSE leaves them): each gets
// its own read right before it, and the shared one is dropped, so
// bufferization sees the second read after the in-place write between.
// CHECK-LABEL: func @shared_read
// CHECK: bufferization.to_memref %arg0 read_only
// CHECK: call @kiln_rt_convolution_f32
// CHECK-NEXT: linalg.generic
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.+]] = bufferization.to_memref %arg0 read_only
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[R]]
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[P:.+]] = llvm.inttoptr
// CHECK: call @kiln_rt_convolution_f32(%[[P]], %{{.+}})
// A read that feeds no call stays as it is.
// CHECK-NEXT: bufferization.to_memref %arg0 read_only
// CHECK-NEXT: bufferization.to_tensor
func.func private @kiln_rt_convolution_f32(!llvm.ptr, !llvm.ptr)
func.func @shared_read(%t: tensor<4xf32>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %m = bufferization.to_memref %t read_only : memref<4xf32>
  %i = memref.extract_aligned_pointer_as_index %m : memref<4xf32> -> index
  %c = arith.index_cast %i : index to i64
  %p = llvm.inttoptr %c : i64 to !llvm.ptr
  call @kiln_rt_convolution_f32(%p, %p) : (!llvm.ptr, !llvm.ptr) -> ()
  %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%out : tensor<4xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  } -> tensor<4xf32>
  call @kiln_rt_convolution_f32(%p, %p) : (!llvm.ptr, !llvm.ptr) -> ()
  %u = bufferization.to_memref %t read_only : memref<4xf32>
  %v = bufferization.to_tensor %u : memref<4xf32>
  return %w : tensor<4xf32>
}

// -----

// One call reads another's output straight from its buffer (canonicalization
// folded to_memref(to_tensor(%buf)) to %buf): the read becomes a to_memref
// of that tensor right before the reader, so bufferization sees it. The
// writer's own output operand is left alone.
// CHECK-LABEL: func @reads_another_calls_output
// CHECK: %[[BUF:.+]] = memref.alloc
// CHECK: call @kiln_rt_matmul_f32(%{{.+}}, %[[OUTP:.+]]) :
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: %[[R:.+]] = bufferization.to_memref %[[T]] read_only
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[R]]
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[P:.+]] = llvm.inttoptr
// CHECK-NEXT: call @kiln_rt_matmul_f32(%[[P]], %{{.+}})
func.func private @kiln_rt_matmul_f32(!llvm.ptr, !llvm.ptr)
func.func @reads_another_calls_output(%in: tensor<4xf32>) -> tensor<4xf32> {
  %buf = memref.alloc() : memref<4xf32>
  %i = memref.extract_aligned_pointer_as_index %buf : memref<4xf32> -> index
  %c = arith.index_cast %i : index to i64
  %p = llvm.inttoptr %c : i64 to !llvm.ptr
  %m = bufferization.to_memref %in read_only : memref<4xf32>
  %mi = memref.extract_aligned_pointer_as_index %m : memref<4xf32> -> index
  %mc = arith.index_cast %mi : index to i64
  %mp = llvm.inttoptr %mc : i64 to !llvm.ptr
  call @kiln_rt_matmul_f32(%mp, %p) : (!llvm.ptr, !llvm.ptr) -> ()
  %t = bufferization.to_tensor %buf restrict writable : memref<4xf32>
  %out = memref.alloc() : memref<4xf32>
  %oi = memref.extract_aligned_pointer_as_index %out : memref<4xf32> -> index
  %oc = arith.index_cast %oi : index to i64
  %op = llvm.inttoptr %oc : i64 to !llvm.ptr
  call @kiln_rt_matmul_f32(%p, %op) : (!llvm.ptr, !llvm.ptr) -> ()
  %r = bufferization.to_tensor %out restrict writable : memref<4xf32>
  return %r : tensor<4xf32>
}
