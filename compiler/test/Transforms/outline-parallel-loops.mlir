// RUN: kiln-opt %s -split-input-file -kiln-outline-parallel-loops="min-work=1000" | FileCheck %s

// The outer dimension (64 rows) runs in parallel; the inner one stays a loop
// in the body. The live-in scalar and memrefs are passed, constants cloned.
// CHECK-LABEL: func.func @rows
// CHECK: arith.constant 256 : index
// CHECK-NEXT: %[[COUNT:.+]] = arith.constant 64 : index
// CHECK-NEXT: call @rows_parallel0_launch(%[[COUNT]], %arg0, %arg2, %arg1) : (index, memref<64x256xf32>, f32, memref<64x256xf32>) -> ()
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK: func.func private @rows_parallel0(%[[BEGIN:.+]]: index, %[[END:.+]]: index, %[[IN:.+]]: memref<64x256xf32>, %[[S:.+]]: f32, %[[OUT:.+]]: memref<64x256xf32>)
// CHECK: scf.for %[[T:.+]] = %[[BEGIN]] to %[[END]]
// CHECK:   %[[ROW:.+]] = arith.addi
// CHECK:   scf.parallel (%[[J:.+]]) =
// CHECK:     memref.load %[[IN]][%[[ROW]], %[[J]]]
// CHECK:     arith.mulf %{{.+}}, %[[S]]
// CHECK:     memref.store %{{.+}}, %[[OUT]][%[[ROW]], %[[J]]]
// CHECK: func.func private @rows_parallel0_launch(index, memref<64x256xf32>, f32, memref<64x256xf32>) attributes {kiln.parallel_body = @rows_parallel0}
func.func @rows(%in: memref<64x256xf32>, %out: memref<64x256xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c256) step (%c1, %c1) {
    %v = memref.load %in[%i, %j] : memref<64x256xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %out[%i, %j] : memref<64x256xf32>
  }
  return
}

// -----

// Two leading dimensions (2 x 3) are too few apart: they are collapsed into
// 6 iterations and delinearized; the innermost dimension never is.
// CHECK-LABEL: func.func @collapsed
// CHECK: arith.constant 512 : index
// CHECK-NEXT: %[[COUNT:.+]] = arith.constant 6 : index
// CHECK-NEXT: call @collapsed_parallel0_launch(%[[COUNT]]
// CHECK: func.func private @collapsed_parallel0
// CHECK: scf.for %[[T:.+]] =
// CHECK-DAG: arith.remui %[[T]], %{{.+}} : index
// CHECK-DAG: arith.divui %[[T]], %{{.+}} : index
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}})
func.func @collapsed(%in: memref<2x3x512xf32>, %out: memref<2x3x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c3, %c512) step (%c1, %c1, %c1) {
    %v = memref.load %in[%i, %j, %k] : memref<2x3x512xf32>
    memref.store %v, %out[%i, %j, %k] : memref<2x3x512xf32>
  }
  return
}

// -----

// A live-in view with a dynamic offset travels as its base buffer and the
// offset, and is rebuilt in the body: every argument stays a bare pointer.
// The step of the parallel dimension (2) scales the iteration index.
// CHECK-LABEL: func.func @strided
// CHECK: %[[BASE:.+]], %[[OFFSET:.+]], %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %arg0
// CHECK: call @strided_parallel0_launch(%{{.+}}, %[[BASE]], %[[OFFSET]], %arg1) : (index, memref<f32>, index, memref<32x64xf32>) -> ()
// CHECK: func.func private @strided_parallel0(%{{.+}}: index, %{{.+}}: index, %[[B:.+]]: memref<f32>, %[[O:.+]]: index, %{{.+}}: memref<32x64xf32>)
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast %[[B]] to offset: [%[[O]]], sizes: [32, 64], strides: [128, 1] : memref<f32> to memref<32x64xf32, strided<[128, 1], offset: ?>>
// CHECK: scf.for %[[T:.+]] =
// CHECK:   %[[SCALED:.+]] = arith.muli %[[T]], %c2
// CHECK:   memref.load %[[VIEW]][%{{.+}}, %{{.+}}]
func.func @strided(%in: memref<32x64xf32, strided<[128, 1], offset: ?>>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c64) step (%c2, %c1) {
    %v = memref.load %in[%i, %j] : memref<32x64xf32, strided<[128, 1], offset: ?>>
    memref.store %v, %out[%i, %j] : memref<32x64xf32>
  }
  return
}

// -----

// Too little work to be worth waking threads: left alone.
// CHECK-LABEL: func.func @small
// CHECK: scf.parallel
// CHECK-NOT: call
// CHECK-NOT: func.func private
func.func @small(%in: memref<8x4xf32>, %out: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %v = memref.load %in[%i, %j] : memref<8x4xf32>
    memref.store %v, %out[%i, %j] : memref<8x4xf32>
  }
  return
}

// -----

// An outer loop of 2 iterations holding a serial loop with a parallel loop
// of 16: the nested one is split (16 iterations per outer pass), the outer
// ones stay.
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel (%{{.+}}) = (%c0) to (%c2)
// CHECK:   scf.for
// CHECK:     call @nested_parallel0_launch
// CHECK: func.func private @nested_parallel0
func.func @nested(%buf: memref<2x16x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%b) = (%c0) to (%c2) step (%c1) {
    scf.for %r = %c0 to %c4 step %c1 {
      scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
        scf.for %k = %c0 to %c512 step %c1 {
          %v = memref.load %buf[%b, %i, %k] : memref<2x16x512xf32>
          %w = arith.addf %v, %one : f32
          memref.store %w, %buf[%b, %i, %k] : memref<2x16x512xf32>
        }
      }
    }
  }
  return
}

// -----

// Two column panels around a small parallel copy and the big serial compute
// (a matmul with few panels): the nested copy covers little of the work, so
// the panels themselves are split.
// CHECK-LABEL: func.func @panels
// CHECK: arith.constant 64 : index
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2 : index
// CHECK-NEXT: call @panels_parallel0_launch(%[[TWO]]
// CHECK-NOT: call
// CHECK: func.func private @panels_parallel0(
// CHECK: scf.parallel
// CHECK-NOT: func.func private @panels_parallel1
func.func @panels(%a: memref<2x64xf32>, %packed: memref<2x64xf32>, %out: memref<2x64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%p) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %a[%p, %i] : memref<2x64xf32>
      memref.store %v, %packed[%p, %i] : memref<2x64xf32>
    }
    scf.for %i = %c0 to %c64 step %c1 {
      scf.for %j = %c0 to %c64 step %c1 {
        scf.for %k = %c0 to %c64 step %c1 {
          %x = memref.load %packed[%p, %k] : memref<2x64xf32>
          %y = memref.load %out[%p, %i, %j] : memref<2x64x64xf32>
          %z = arith.addf %x, %y : f32
          memref.store %z, %out[%p, %i, %j] : memref<2x64x64xf32>
        }
      }
    }
  }
  return
}

// -----

// A loop located at a graph node ("relu.3", as the importer names ops) lends
// the node's name to its task function, so profiles name the op.
// CHECK-LABEL: func.func @named
// CHECK: call @named_parallel0_relu_3_launch(
// CHECK: func.func private @named_parallel0_relu_3(
func.func @named(%buf: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c256) step (%c1, %c1) {
    %v = memref.load %buf[%i, %j] : memref<64x256xf32>
    %r = arith.maximumf %v, %zero : f32
    memref.store %r, %buf[%i, %j] : memref<64x256xf32>
  } loc("relu.3")
  return
}

// -----

// A parallel loop with a reduction result is not outlined.
// CHECK-LABEL: func.func @reduction
// CHECK: scf.parallel
// CHECK: scf.reduce
// CHECK-NOT: call
func.func @reduction(%in: memref<4096xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%c4096) step (%c1) init (%zero) -> f32 {
    %v = memref.load %in[%i] : memref<4096xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// -----

// Upper bounds below the lower ones: no iterations at all (two negative trip
// counts must not multiply into a positive one), so nothing is outlined.
// CHECK-LABEL: func.func @empty_ranges
// CHECK-NOT: call @empty_ranges_parallel
// CHECK: scf.parallel
// CHECK-NOT: func.func private @empty_ranges_parallel
func.func @empty_ranges(%out: memref<64x256xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c64, %c256) to (%c0, %c0) step (%c1, %c1) {
    memref.store %s, %out[%i, %j] : memref<64x256xf32>
  }
  return
}
