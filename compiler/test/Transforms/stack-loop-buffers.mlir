// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -kiln-stack-loop-buffers="max-buffer-bytes=256 max-function-bytes=384" | FileCheck %s

// A loop body's small scratch becomes one alloca at the function's start
// (its alignment kept) and its dealloc goes; the function's own buffers stay
// on the heap.
// CHECK-LABEL: func @loop_scratch_on_stack
// CHECK-NEXT: %[[S:.+]] = memref.alloca() {alignment = 64 : i64} : memref<1x64xf32>
// CHECK: %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[S]] : memref<1x64xf32>)
// CHECK-NOT: memref.dealloc
// CHECK: }
// CHECK: memref.dealloc %[[A]]
func.func @loop_scratch_on_stack(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    %s = memref.alloc() {alignment = 64 : i64} : memref<1x64xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<1x64xf32>)
    memref.dealloc %s : memref<1x64xf32>
  }
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// Inside a parallel loop too (after outlining, the loops left in a function
// run their iterations one after another). Past max-buffer-bytes, and once
// the function's stack buffers would pass max-function-bytes, buffers stay
// on the heap: 256 + 128 bytes move, the next 128 and the 512 do not.
// CHECK-LABEL: func @limits
// CHECK-DAG: memref.alloca() : memref<64xf32>
// CHECK-DAG: memref.alloca() : memref<32xf32>
// CHECK: scf.parallel
// CHECK: memref.alloc() : memref<128xf32>
// CHECK: memref.alloc() : memref<32xi32>
// CHECK: memref.dealloc
// CHECK: memref.dealloc
// CHECK-NOT: memref.dealloc
func.func @limits(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = memref.alloc() : memref<64xf32>
    %b = memref.alloc() : memref<128xf32>
    %c = memref.alloc() : memref<32xf32>
    %d = memref.alloc() : memref<32xi32>
    "test.use"(%a, %b, %c, %d) : (memref<64xf32>, memref<128xf32>, memref<32xf32>, memref<32xi32>) -> ()
    memref.dealloc %a : memref<64xf32>
    memref.dealloc %b : memref<128xf32>
    memref.dealloc %c : memref<32xf32>
    memref.dealloc %d : memref<32xi32>
    scf.reduce
  }
  return
}

// -----

// Dynamic sizes stay on the heap, as do buffers outside loops.
// CHECK-LABEL: func @dynamic_and_outside
// CHECK-NOT: memref.alloca
// CHECK: memref.alloc() : memref<8xf32>
// CHECK: memref.alloc(%{{.+}}) : memref<?xf32>
func.func @dynamic_and_outside(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  "test.use"(%a) : (memref<8xf32>) -> ()
  memref.dealloc %a : memref<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    %d = memref.alloc(%n) : memref<?xf32>
    "test.use"(%d) : (memref<?xf32>) -> ()
    memref.dealloc %d : memref<?xf32>
  }
  return
}
