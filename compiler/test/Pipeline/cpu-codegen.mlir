// RUN: kiln-opt %s -kiln-aten-to-linalg-pipeline -kiln-cpu-codegen-pipeline | FileCheck %s --implicit-check-not=llvm.alloca --implicit-check-not=@erff

// The whole CPU pipeline: aten in, LLVM dialect out, with bare-pointer
// arguments (parameters, inputs, then the output buffer), FMAs from the
// vectorized matmul, erf approximated inline (no libm call), and the C-ABI
// entry point. No stack temporaries: an alloca inside the loops would
// overflow the stack on large inputs.
// CHECK-DAG: llvm.func @kiln_main(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK-DAG: llvm.intr.fmuladd
// CHECK-DAG: llvm.func @kiln_invoke(%{{.+}}: !llvm.ptr)
// CHECK-NOT: memref.
// CHECK-NOT: linalg.
func.func @kiln_main(%w: tensor<32x16xf32> {bufferization.writable = false},
                     %b: tensor<32xf32> {bufferization.writable = false},
                     %x: tensor<8x16xf32> {bufferization.writable = false}) -> tensor<8x32xf32> {
  %wt = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<32x16xf32>) -> tensor<16x32xf32>
  %y = aten.addmm %b, %x, %wt : (tensor<32xf32>, tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = aten.gelu %y : tensor<8x32xf32>
  return %g : tensor<8x32xf32>
}
