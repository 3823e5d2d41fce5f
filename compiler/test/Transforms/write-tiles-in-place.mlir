// RUN: kiln-opt %s -split-input-file -kiln-write-tiles-in-place | FileCheck %s

// A tile computed into a fresh tensor.empty and inserted into the loop's
// shared output is computed in the output's slice instead.
// CHECK-LABEL: func @tile_in_place
// CHECK: scf.forall (%[[I:.+]]) in (4) shared_outs(%[[OUT:.+]] = %{{.+}})
// CHECK: %[[IN:.+]] = tensor.extract_slice %arg0[%[[I]], 0] [1, 8] [1, 1]
// CHECK: %[[SLOT:.+]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [1, 8] [1, 1]
// CHECK: %[[T:.+]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<1x8xf32>) outs(%[[SLOT]] : tensor<1x8xf32>)
// CHECK: tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[I]], 0] [1, 8] [1, 1]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @tile_in_place(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %r = scf.forall (%i) in (4) shared_outs(%out = %init) -> (tensor<4x8xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    %e = tensor.empty() : tensor<1x8xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
    ^bb0(%a: f32, %b: f32):
      %y = math.exp %a : f32
      linalg.yield %y : f32
    } -> tensor<1x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %out[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
    }
  }
  return %r : tensor<4x8xf32>
}

// -----

// Outside scf.forall nothing changes: the empty the loop's two ping-pong
// buffers share stays an empty (rewriting it into the insert's destination
// aliased them).
// CHECK-LABEL: func @outside_loops_untouched
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x4xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[E]])
// CHECK: tensor.insert_slice
func.func @outside_loops_untouched(%x: tensor<4x4xf32>, %n: index) -> tensor<1x4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %dest = tensor.empty() : tensor<1x4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %start = linalg.copy ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%a = %start, %b = %e) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %f = linalg.fill ins(%zero : f32) outs(%b : tensor<4x4xf32>) -> tensor<4x4xf32>
    %p = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c = linalg.copy ins(%p : tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %c, %p : tensor<4x4xf32>, tensor<4x4xf32>
  }
  %s = tensor.insert_slice %r#0 into %dest[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<4x4xf32> into tensor<1x4x4xf32>
  return %s : tensor<1x4x4xf32>
}
