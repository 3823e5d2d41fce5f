// RUN: kiln-opt %s -kiln-lower-vector-contracts | FileCheck %s

// The accumulator's read/write pair leaves the K loop (it becomes an
// iter_arg), and the contraction becomes one FMA per accumulator row.
// CHECK-LABEL: func @microkernel
// CHECK: %[[ACC:.+]] = vector.transfer_read %arg2
// CHECK: %[[RES:.+]] = scf.for {{.*}} iter_args(%[[IT:.+]] = %[[ACC]]) -> (vector<2x8xf32>)
// CHECK:   %[[B:.+]] = vector.load %arg1
// CHECK-COUNT-2: vector.fma %{{.+}}, %[[B]], %{{.+}} : vector<8xf32>
// CHECK:   scf.yield
// CHECK-NOT: vector.contract
// CHECK: vector.transfer_write %[[RES]], %arg2
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @microkernel(%a: memref<2x16xf32>, %b: memref<16x8xf32>, %c: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c16 step %c1 {
    %va = vector.transfer_read %a[%c0, %k], %zero {in_bounds = [true, true]} : memref<2x16xf32>, vector<2x1xf32>
    %vb = vector.transfer_read %b[%k, %c0], %zero {in_bounds = [true, true]} : memref<16x8xf32>, vector<1x8xf32>
    %vc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<2x8xf32>, vector<2x8xf32>
    %r = vector.contract {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %vc : vector<2x1xf32>, vector<1x8xf32> into vector<2x8xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<2x8xf32>, memref<2x8xf32>
  }
  return
}
