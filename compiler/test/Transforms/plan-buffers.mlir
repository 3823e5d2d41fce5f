// RUN: kiln-opt %s -split-input-file -kiln-plan-buffers | FileCheck %s

// Three static buffers: %a dies at the op that fills %c, so %c takes %a's
// bytes; %b lives across both and gets its own. The arena is the largest
// pair alive at once: 1024 + 512 bytes.
// CHECK-LABEL: func @reuses_dead_bytes
// CHECK-NEXT: %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1536xi8>
// CHECK-NOT: memref.alloc
// CHECK: %[[OA:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.+]] = memref.view %[[ARENA]][%[[OA]]][] : memref<1536xi8> to memref<256xf32>
// CHECK: %[[OB:.+]] = arith.constant 1024 : index
// CHECK-NEXT: %[[B:.+]] = memref.view %[[ARENA]][%[[OB]]][] : memref<1536xi8> to memref<128xf32>
// CHECK: %[[OC:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.+]] = memref.view %[[ARENA]][%[[OC]]][] : memref<1536xi8> to memref<64xf32>
// CHECK-NOT: memref.alloc
func.func @reuses_dead_bytes(%in: memref<256xf32>, %out: memref<64xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<128xf32>
  %a0 = memref.subview %a[0] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1]>>
  memref.copy %a0, %b : memref<128xf32, strided<[1]>> to memref<128xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %b0 = memref.subview %b[0] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1]>>
  memref.copy %b0, %c : memref<64xf32, strided<[1]>> to memref<64xf32>
  %b1 = memref.subview %b[64] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: 64>>
  memref.copy %b1, %out : memref<64xf32, strided<[1], offset: 64>> to memref<64xf32>
  memref.copy %c, %out : memref<64xf32> to memref<64xf32>
  return
}

// -----

// A use inside a loop keeps the buffer alive until the loop ends, and a
// pointer taken from it (a kernel call's operand) until the call: neither
// buffer's bytes are reused by the other while both are live.
// CHECK-LABEL: func @uses_in_regions_and_pointers
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<768xi8>
// CHECK: memref.view %{{.+}}[%{{.+}}][] : memref<768xi8> to memref<128xf32>
// CHECK: memref.view %{{.+}}[%{{.+}}][] : memref<768xi8> to memref<64xf32>
func.func private @kernel(!llvm.ptr)
func.func @uses_in_regions_and_pointers(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<128xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<128xf32> -> index
  %i = arith.index_cast %p : index to i64
  %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
  %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  scf.for %k = %c0 to %c4 step %c1 {
    memref.store %f, %b[%k] : memref<64xf32>
  }
  func.call @kernel(%ptr) : (!llvm.ptr) -> ()
  memref.copy %b, %out : memref<64xf32> to memref<64xf32>
  return
}

// -----

// Left as they are: a dynamic size, a sub-byte element type, a buffer
// allocated inside a loop, and a lone buffer (one allocation either way).
// CHECK-LABEL: func @left_alone
// CHECK-NOT: xi8>
// CHECK: memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<8xi1>
// CHECK: scf.for
// CHECK-NEXT: memref.alloc() : memref<4xf32>
func.func @left_alone(%n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.alloc(%n) : memref<?xf32>
  %m = memref.alloc() : memref<8xi1>
  scf.for %k = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<4xf32>
    memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  }
  %v = memref.load %d[%c0] : memref<?xf32>
  %w = memref.load %m[%c0] : memref<8xi1>
  return
}

// -----

// A buffer returned from the body, or whose address is stored, leaves the
// body: it keeps its own allocation, and the other one alone is not planned.
// CHECK-LABEL: func @escaping
// CHECK-NOT: xi8>
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: memref.alloc() : memref<2xf32>
func.func @escaping(%slot: memref<1xmemref<2xf32>>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<2xf32>
  memref.store %b, %slot[%c0] : memref<1xmemref<2xf32>>
  return %a : memref<4xf32>
}

// -----

// A buffer that leaves through an scf.if's result lives as long as that
// result: here until the final copy, so the two never share bytes.
// CHECK-LABEL: func @aliased_through_if
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<128xi8>
func.func @aliased_through_if(%flag: i1, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  %r = scf.if %flag -> memref<16xf32> {
    scf.yield %a : memref<16xf32>
  } else {
    scf.yield %out : memref<16xf32>
  }
  %b = memref.alloc() : memref<16xf32>
  memref.copy %out, %b : memref<16xf32> to memref<16xf32>
  memref.copy %b, %r : memref<16xf32> to memref<16xf32>
  return
}

// -----

// The aligned pointer of a planned buffer (a kernel call's operand), also
// through a subview, is spelled out as the arena's plus the buffer's offset:
// MLIR 19's expand-strided-metadata folds a view's aligned pointer to its
// source's and would hand the call the arena's start.
// CHECK-LABEL: func @call_pointers
// CHECK-DAG: %[[SHIFT:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<320xi8>
// CHECK: %[[BASE:.+]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK-NEXT: %[[PTR:.+]] = arith.addi %[[BASE]], %[[SHIFT]] : index
// CHECK-NEXT: arith.index_cast %[[PTR]]
func.func private @k(!llvm.ptr)
func.func @call_pointers(%out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<64xf32>
  %b = memref.alloc() : memref<16xf32>
  %s = memref.subview %b[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %p = memref.extract_aligned_pointer_as_index %s : memref<8xf32, strided<[1]>> -> index
  %i = arith.index_cast %p : index to i64
  %q = llvm.inttoptr %i : i64 to !llvm.ptr
  func.call @k(%q) : (!llvm.ptr) -> ()
  memref.copy %b, %out : memref<16xf32> to memref<16xf32>
  %v = memref.load %a[%c0] : memref<64xf32>
  return
}

// -----

// A view of a planned byte buffer moves the aligned pointer by its own
// shift too: the call gets arena + the buffer's offset + the view's shift.
// A buffer that asks for more alignment than 64 gets an arena aligned so.
// CHECK-LABEL: func @view_of_planned_bytes
// CHECK-DAG: %[[INNER:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[ARENA:.+]] = memref.alloc() {alignment = 128 : i64} : memref<384xi8>
// CHECK-DAG: %[[OFFSET:.+]] = arith.constant 256 : index
// CHECK: %[[BASE:.+]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK-NEXT: %[[AT:.+]] = arith.addi %[[BASE]], %[[INNER]] : index
// CHECK-NEXT: %[[PTR:.+]] = arith.addi %[[AT]], %[[OFFSET]] : index
// CHECK-NEXT: arith.index_cast %[[PTR]]
func.func private @k(!llvm.ptr)
func.func @view_of_planned_bytes(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %a = memref.alloc() {alignment = 128 : i64} : memref<64xf32>
  %bytes = memref.alloc() : memref<128xi8>
  %v = memref.view %bytes[%c16][] : memref<128xi8> to memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %v : memref<4xf32> -> index
  %i = arith.index_cast %p : index to i64
  %q = llvm.inttoptr %i : i64 to !llvm.ptr
  func.call @k(%q) : (!llvm.ptr) -> ()
  memref.copy %a, %out : memref<64xf32> to memref<64xf32>
  return
}
