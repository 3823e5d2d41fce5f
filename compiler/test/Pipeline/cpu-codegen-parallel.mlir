// RUN: kiln-opt %s -kiln-aten-to-linalg-pipeline -kiln-cpu-codegen-pipeline="parallel-loops=1 plan-buffers=1" | FileCheck %s
// RUN: kiln-opt %s -kiln-aten-to-linalg-pipeline -kiln-cpu-codegen-pipeline | FileCheck %s --check-prefix=SERIAL

// With parallel loops, the matmul's independent tiles and the elementwise
// loops are outlined into tasks the runtime's thread pool runs
// (kiln_rt_parallel_for); their contexts live in the entry block. Without,
// nothing calls the runtime.
// CHECK: llvm.func @kiln_main(
// CHECK-NEXT: llvm.mlir.addressof @kiln_main_parallel{{[0-9]+}}_task
// CHECK: llvm.alloca
// CHECK: llvm.call @kiln_rt_parallel_for(
// CHECK: llvm.func internal @kiln_main_parallel{{[0-9]+}}(
// CHECK: llvm.intr.fmuladd
// CHECK: llvm.func internal @kiln_main_parallel{{[0-9]+}}_task(%{{.+}}: !llvm.ptr, %{{.+}}: i64, %{{.+}}: i64)
// CHECK: llvm.func @kiln_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64)
// CHECK: llvm.func @kiln_invoke(%{{.+}}: !llvm.ptr)
// SERIAL-NOT: kiln_rt_parallel_for
// SERIAL-NOT: _task
func.func @kiln_main(%w: tensor<512x256xf32> {bufferization.writable = false},
                     %b: tensor<512xf32> {bufferization.writable = false},
                     %x: tensor<256x256xf32> {bufferization.writable = false}) -> tensor<256x512xf32> {
  %wt = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<512x256xf32>) -> tensor<256x512xf32>
  %y = aten.addmm %b, %x, %wt : (tensor<512xf32>, tensor<256x256xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
  %g = aten.gelu %y : tensor<256x512xf32>
  return %g : tensor<256x512xf32>
}
