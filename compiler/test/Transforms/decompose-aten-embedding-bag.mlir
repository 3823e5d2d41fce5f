// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Max mode: the masked window's maximum and the weight row it came from
// (the index at its arg max); an empty bag gives 0 and row 0. bag_size
// counts each bag's indices; with include_last_offset and B + 1 entries
// declared, it is padded by one 0. offset2bag comes back as i32.
// CHECK-LABEL: func @max_mode
// CHECK: %[[ROWS:.+]] = aten.index_select %arg0, %{{.+}} {dim = 0 : i64} : (tensor<10x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
// CHECK: %[[NEG:.+]] = aten.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[WIN:.+]] = aten.pointwise "where" %{{.+}}, %{{.+}}, %[[NEG]] : (tensor<2x5x1xi1>, tensor<1x5x3xf32>, tensor<f32>) -> tensor<2x5x3xf32>
// CHECK: %[[TOP:.+]] = aten.amax %[[WIN]] {dims = array<i64: 1>} : (tensor<2x5x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[AT:.+]] = aten.arg_reduce %[[WIN]] {dim = 1 : i64, max = true}
// CHECK: %[[ROW:.+]] = aten.index_select %{{.+}}, %{{.+}} {dim = 0 : i64} : (tensor<5xi64>, tensor<6xi64>) -> tensor<6xi64>
// CHECK: %[[OUT:.+]] = aten.pointwise "where" %[[FILLED:.+]], %[[TOP]], %{{.+}} : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[MAX:.+]] = aten.pointwise "where" %[[FILLED]], %{{.+}}, %{{.+}} : (tensor<2x1xi1>, tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
// CHECK: %[[O2B:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<5xi64>) -> tensor<5xi32>
// CHECK: %[[SIZE:.+]] = aten.pad %{{.+}} {{.+}} : (tensor<2xi64>) -> tensor<3xi64>
// CHECK: return %[[OUT]], %[[O2B]], %[[SIZE]], %[[MAX]]
// CHECK-NOT: aten.embedding_bag
func.func @max_mode(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<3xi64>)
    -> (tensor<2x3xf32>, tensor<5xi32>, tensor<3xi64>, tensor<2x3xi64>) {
  %r, %o2b, %size, %max = aten.embedding_bag %w, %i, %o {mode = 2 : i64, include_last_offset = true, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<3xi64>) -> (tensor<2x3xf32>, tensor<5xi32>, tensor<3xi64>, tensor<2x3xi64>)
  return %r, %o2b, %size, %max : tensor<2x3xf32>, tensor<5xi32>, tensor<3xi64>, tensor<2x3xi64>
}

// -----

// Sum mode, weighted per sample, f16: rows and weights computed in f32 and
// the sum converted back; i32 indices widened; offset2bag declared empty,
// bag_size and max_indices zeros.
// CHECK-LABEL: func @weighted_sum
// CHECK: %[[I64:.+]] = aten.pointwise "copy" %arg1 : (tensor<4xi32>) -> tensor<4xi64>
// CHECK: %[[ROWS:.+]] = aten.index_select %arg0, %[[I64]] {dim = 0 : i64} : (tensor<6x2xf16>, tensor<4xi64>) -> tensor<4x2xf16>
// CHECK: %[[ROWS32:.+]] = aten.pointwise "copy" %[[ROWS]] : (tensor<4x2xf16>) -> tensor<4x2xf32>
// CHECK: %[[P32:.+]] = aten.pointwise "copy" %arg3 : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: %[[P:.+]] = aten.view %[[P32]] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: aten.mul %[[ROWS32]], %[[P]] : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
// CHECK: %[[SUM:.+]] = aten.sum %{{.+}} {dims = array<i64: 1>} : (tensor<2x4x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[ZEROS:.+]] = aten.constant dense<0> : tensor<2xi64>
// CHECK: %[[OUT:.+]] = aten.pointwise "copy" %[[SUM]] : (tensor<2x2xf32>) -> tensor<2x2xf16>
// CHECK: %[[EMPTY:.+]] = aten.constant dense<> : tensor<0xi64>
// CHECK: return %[[OUT]], %[[EMPTY]], %[[ZEROS]], %[[ZEROS]]
func.func @weighted_sum(%w: tensor<6x2xf16>, %i: tensor<4xi32>, %o: tensor<2xi64>, %p: tensor<4xf16>)
    -> (tensor<2x2xf16>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>) {
  %r, %o2b, %size, %max = aten.embedding_bag %w, %i, %o per_sample_weights %p {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<6x2xf16>, tensor<4xi32>, tensor<2xi64>, tensor<4xf16>) -> (tensor<2x2xf16>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r, %o2b, %size, %max : tensor<2x2xf16>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>
}
