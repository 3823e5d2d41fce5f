// RUN: kiln-opt %s -split-input-file -kiln-bare-boundary | FileCheck %s

// A graph function with a symbolic batch: its dynamic arguments become base
// pointers, reshaped inside from the symbols argument (after the inputs),
// the output's size evaluated from its expression (2*batch).
// CHECK-LABEL: func.func @kiln_main
// CHECK-SAME: (%[[X:.+]]: memref<0xf32>, %[[S:.+]]: memref<1xi64>, %[[OUT:.+]]: memref<0xf32>)
// CHECK: %[[RAW:.+]] = memref.load %[[S]][%{{.+}}] : memref<1xi64>
// CHECK: %[[BATCH:.+]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[BATCH]], 3], strides: [3, 1] : memref<0xf32> to memref<?x3xf32>
// CHECK: %[[ROWS:.+]] = arith.muli %{{.+}}, %[[BATCH]] : index
// CHECK: memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [%[[ROWS]], 6], strides: [6, 1] : memref<0xf32> to memref<?x6xf32>
func.func @kiln_main(%x: memref<?x3xf32>, %s: memref<1xi64>, %out: memref<?x6xf32>)
    attributes {kiln.symbols = ["batch"], kiln.symbols_position = 1 : i64,
                kiln.boundary_sizes = [["batch", ""], ["2*batch", ""]]} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0] : memref<?x3xf32>
  memref.store %v, %out[%c0, %c0] : memref<?x6xf32>
  return
}

// -----

// Two symbolic dims: the outer stride is a product computed at run time.
// CHECK-LABEL: func.func @two_symbols
// CHECK-SAME: (%[[X:.+]]: memref<0xf32>, %[[S:.+]]: memref<2xi64>)
// CHECK: %[[STRIDE:.+]] = arith.muli
// CHECK: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%{{.+}}, %{{.+}}, 8], strides: [%[[STRIDE]], 8, 1]
func.func @two_symbols(%x: memref<?x?x8xf32>, %s: memref<2xi64>)
    attributes {kiln.symbols = ["b", "t"], kiln.symbols_position = 1 : i64,
                kiln.boundary_sizes = [["b", "t", ""]]} {
  return
}

// -----

// A static graph is left alone.
// CHECK-LABEL: func.func @static_graph
// CHECK-SAME: (%{{.+}}: memref<2x3xf32>)
// CHECK-NOT: reinterpret_cast
func.func @static_graph(%x: memref<2x3xf32>) {
  return
}
