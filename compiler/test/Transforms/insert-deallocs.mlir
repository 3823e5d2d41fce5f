// RUN: kiln-opt %s -split-input-file -kiln-insert-deallocs -verify-diagnostics | FileCheck %s

// Each allocation is freed just before its block's terminator, after its
// last use (views included).
// CHECK-LABEL: func @frees_at_block_end
// CHECK: %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK: scf.for
// CHECK:   %[[B:.+]] = memref.alloc() : memref<2xf32>
// CHECK:   memref.dealloc %[[B]]
// CHECK-NEXT: }
// CHECK: memref.copy %[[A]], %arg0
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @frees_at_block_end(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    %b = memref.alloc() : memref<2xf32>
    %v = memref.subview %a[%i] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: ?>>
    memref.copy %b, %v : memref<2xf32> to memref<2xf32, strided<[1], offset: ?>>
  }
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A buffer passed out of its block cannot be freed there: an error, not a leak.
func.func @escapes() -> memref<4xf32> {
  // expected-error @+1 {{buffer escapes its block}}
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}
