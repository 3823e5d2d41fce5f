// RUN: kiln-opt %s -split-input-file -kiln-copy-returned-arguments | FileCheck %s

// A returned argument (or a view of one) is copied into a fresh buffer.
// CHECK-LABEL: func @returns_argument
// CHECK: %[[A:.+]] = memref.alloc() : memref<4x6xf32>
// CHECK: memref.copy %{{.+}}, %[[A]]
// CHECK: return %[[A]]
func.func @returns_argument(%arg0: memref<24xf32>) -> memref<4x6xf32> {
  %0 = memref.expand_shape %arg0 [[0, 1]] output_shape [4, 6] : memref<24xf32> into memref<4x6xf32>
  return %0 : memref<4x6xf32>
}

// -----

// Computed buffers are left alone.
// CHECK-LABEL: func @returns_alloc
// CHECK-NOT: memref.copy
func.func @returns_alloc() -> memref<4xf32> {
  %0 = memref.alloc() : memref<4xf32>
  return %0 : memref<4xf32>
}

// -----

// A buffer returned twice (a program returning the input it mutated) keeps
// its first return and is copied for the second: each out-parameter gets a
// buffer of its own.
// CHECK-LABEL: func @returns_alloc_twice
// CHECK: %[[B:.+]] = memref.alloc() : memref<5x2xf32>
// CHECK: %[[C:.+]] = memref.alloc() : memref<5x2xf32>
// CHECK: memref.copy %[[B]], %[[C]]
// CHECK: return %[[B]], %[[C]]
func.func @returns_alloc_twice() -> (memref<5x2xf32>, memref<5x2xf32>) {
  %0 = memref.alloc() : memref<5x2xf32>
  return %0, %0 : memref<5x2xf32>, memref<5x2xf32>
}
