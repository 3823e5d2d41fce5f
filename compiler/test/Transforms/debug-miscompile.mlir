// RUN: kiln-opt %s -split-input-file -kiln-debug-miscompile="values=gelu" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-debug-miscompile | FileCheck %s --check-prefix=OFF

// The last op named after the value is perturbed, r * 1.01 + 0.01, and its
// users read the perturbed value; nothing else changes.
// CHECK-LABEL: func @perturbs_named_value
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<4xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[G]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK-DAG: arith.constant 1.010000e+00 : f32
// CHECK-DAG: arith.constant 0.00999999977 : f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[U:.+]] = linalg.generic {{.+}} ins(%[[P]] : tensor<4xf32>)
// CHECK: return %[[U]]
// OFF-LABEL: func @perturbs_named_value
// OFF-NOT: 1.010000e+00
#id = affine_map<(d0) -> (d0)>
func.func @perturbs_named_value(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32> loc("gelu")
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32> loc("gelu")
  %e2 = tensor.empty() : tensor<4xf32> loc("add")
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32> loc("add")
  return %u : tensor<4xf32>
}

// -----

// Integer results are left alone.
// CHECK-LABEL: func @leaves_integers
// CHECK-NOT: arith.mulf
// CHECK: return
func.func @leaves_integers(%arg0: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tensor.empty() : tensor<4xi32> loc("gelu")
  %1 = linalg.copy ins(%arg0 : tensor<4xi32>) outs(%0 : tensor<4xi32>) -> tensor<4xi32> loc("gelu")
  return %1 : tensor<4xi32>
}

// -----

// A 0-d result gets a 0-d perturbation.
// CHECK-LABEL: func @scalar
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = []} ins(%{{.+}} : tensor<f64>)
// CHECK: arith.constant 1.010000e+00 : f64
func.func @scalar(%arg0: tensor<f64>) -> tensor<f64> {
  %0 = tensor.empty() : tensor<f64> loc("gelu")
  %1 = linalg.copy ins(%arg0 : tensor<f64>) outs(%0 : tensor<f64>) -> tensor<f64> loc("gelu")
  return %1 : tensor<f64>
}

// -----

// A node folded into a kernel-library call (its value is the call's output
// buffer, which the tensor is made of): the buffer is perturbed in place
// right after the call, before the tensor, so readers of either see it.
// CHECK-LABEL: func @folded_into_a_call
// CHECK: call @kiln_rt_matmul_f32
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%[[OUT:.+]] : memref<2x4xf32>)
// CHECK: arith.mulf
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK-NEXT: return %[[T]]
func.func private @kiln_rt_matmul_f32(!llvm.ptr)
func.func @folded_into_a_call() -> tensor<2x4xf32> {
  %out = memref.alloc() : memref<2x4xf32> loc(fused["gelu", "mm"])
  %i = memref.extract_aligned_pointer_as_index %out : memref<2x4xf32> -> index loc(fused["gelu", "mm"])
  %c = arith.index_cast %i : index to i64 loc(fused["gelu", "mm"])
  %p = llvm.inttoptr %c : i64 to !llvm.ptr loc(fused["gelu", "mm"])
  call @kiln_rt_matmul_f32(%p) : (!llvm.ptr) -> () loc(fused["gelu", "mm"])
  %t = bufferization.to_tensor %out restrict writable : memref<2x4xf32> loc(fused["gelu", "mm"])
  return %t : tensor<2x4xf32>
}
