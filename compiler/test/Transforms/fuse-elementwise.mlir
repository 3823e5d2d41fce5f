// RUN: kiln-opt %s -split-input-file -kiln-fuse-elementwise | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-fuse-elementwise="max-body-ops=4" | FileCheck %s --check-prefix=CAP

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// Elementwise into elementwise: one generic computes erf once per element.
// CHECK-LABEL: func @fuses_into_elementwise
// CHECK: linalg.generic
// CHECK:   math.erf
// CHECK:   arith.mulf
// CHECK-NOT: linalg.generic
func.func @fuses_into_elementwise(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.erf %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#acc = affine_map<(d0, d1) -> (d0)>

// Never into a reduction: erf would be recomputed per reduced element.
// CHECK-LABEL: func @not_into_reduction
// CHECK: %[[E:.+]] = linalg.generic
// CHECK:   math.erf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E]]
func.func @not_into_reduction(%x: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.erf %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #acc], iterator_types = ["parallel", "reduction"]}
      ins(%0 : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>

// Not when the consumer broadcasts the producer: each element would be
// recomputed once per row.
// CHECK-LABEL: func @not_through_broadcast
// CHECK: %[[E:.+]] = linalg.generic
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}} ins(%arg1, %[[E]] :
func.func @not_through_broadcast(%v: tensor<8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ev = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%ev : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %0 : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A fusion whose body would exceed max-body-ops is not made: with a cap of
// 4, the two 3-op bodies stay apart (by default they fuse).
// CHECK-LABEL: func @capped_body
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CAP-LABEL: func @capped_body
// CAP: linalg.generic
// CAP:   math.exp
// CAP: linalg.generic
// CAP:   math.log
func.func @capped_body(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.exp %in : f32
    %b = arith.mulf %a, %a : f32
    linalg.yield %b : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.log %in : f32
    %b = arith.addf %a, %a : f32
    linalg.yield %b : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
