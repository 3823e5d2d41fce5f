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

// -----

// embedding_renorm, f16: the rows' 2-norms in f32 (an aten.vector_norm,
// itself decomposed), rounded to f16 and read
// in f64; an index_put of ones marks the rows the (flattened, widened)
// indices name; where a marked row's norm exceeds max_norm, the scale
// max_norm / (norm + 1e-7) in f64, else 1; the rows scaled in f32 and
// rounded back.
// CHECK-LABEL: func @renorm
// CHECK: %[[W32:.+]] = aten.pointwise "copy" %arg0 : (tensor<6x2xf16>) -> tensor<6x2xf32>
// CHECK: %[[SQ:.+]] = aten.sum %{{.+}} {dims = array<i64: 1>, keepdim = true} : (tensor<6x2xf32>) -> tensor<6x1xf32>
// CHECK: %[[N:.+]] = aten.pointwise "sqrt" %[[SQ]] : (tensor<6x1xf32>) -> tensor<6x1xf32>
// CHECK: %[[N16:.+]] = aten.pointwise "copy" %[[N]] : (tensor<6x1xf32>) -> tensor<6x1xf16>
// CHECK: %[[N64:.+]] = aten.pointwise "copy" %[[N16]] : (tensor<6x1xf16>) -> tensor<6x1xf64>
// CHECK: %[[I64:.+]] = aten.pointwise "copy" %arg1 : (tensor<2x2xi32>) -> tensor<2x2xi64>
// CHECK: %[[I:.+]] = aten.view %[[I64]] : (tensor<2x2xi64>) -> tensor<4xi64>
// CHECK: %[[NAMED:.+]] = aten.index_put %{{.+}}, %[[I]], %{{.+}} {accumulate = false} : (tensor<6x1xf32>, tensor<4xi64>, tensor<4x1xf32>) -> tensor<6x1xf32>
// CHECK: %[[OVER:.+]] = aten.pointwise "logical_and"
// CHECK: %[[SCALE:.+]] = aten.div %{{.+}}, %{{.+}} : (tensor<f64>, tensor<6x1xf64>) -> tensor<6x1xf64>
// CHECK: %[[S:.+]] = aten.pointwise "where" %[[OVER]], %[[SCALE]], %{{.+}} : (tensor<6x1xi1>, tensor<6x1xf64>, tensor<f64>) -> tensor<6x1xf64>
// CHECK: %[[S32:.+]] = aten.pointwise "copy" %[[S]] : (tensor<6x1xf64>) -> tensor<6x1xf32>
// CHECK: %[[P:.+]] = aten.mul %[[W32]], %[[S32]] : (tensor<6x2xf32>, tensor<6x1xf32>) -> tensor<6x2xf32>
// CHECK: %[[R:.+]] = aten.pointwise "copy" %[[P]] : (tensor<6x2xf32>) -> tensor<6x2xf16>
// CHECK: return %[[R]]
func.func @renorm(%w: tensor<6x2xf16>, %i: tensor<2x2xi32>) -> tensor<6x2xf16> {
  %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<6x2xf16>, tensor<2x2xi32>) -> tensor<6x2xf16>
  return %0 : tensor<6x2xf16>
}

// -----

// No index: the table itself.
// CHECK-LABEL: func @renorm_no_index
// CHECK-NEXT: return %arg0
func.func @renorm_no_index(%w: tensor<6x2xf32>, %i: tensor<0xi64>) -> tensor<6x2xf32> {
  %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<6x2xf32>, tensor<0xi64>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

// A NaN norm_type: eager's NaN norms never exceed max_norm, so the table
// comes back as it is.
// CHECK-LABEL: func @renorm_nan_norm
// CHECK-NEXT: return %arg0
func.func @renorm_nan_norm(%w: tensor<6x2xf32>, %i: tensor<3xi64>) -> tensor<6x2xf32> {
  %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 0x7FF8000000000000 : f64} : (tensor<6x2xf32>, tensor<3xi64>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

// Past 2^26 (bag, index, column) triples, sum mode multiplies the
// membership mask (times the per-sample weights, in f32) by the rows in
// one aten.mm.
// CHECK-LABEL: func @bag_mm
// CHECK: %[[ROWS:.+]] = aten.index_select %arg0, %arg1 {dim = 0 : i64} : (tensor<4x2097152xf32>, tensor<8xi64>) -> tensor<8x2097152xf32>
// CHECK: %[[MASK:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<8x8xi1>) -> tensor<8x8xf32>
// CHECK: %[[W:.+]] = aten.mul %[[MASK]], %{{.+}} : (tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
// CHECK: aten.mm %[[W]], %[[ROWS]] : (tensor<8x8xf32>, tensor<8x2097152xf32>) -> tensor<8x2097152xf32>
// CHECK-NOT: aten.sum %{{.+}} : (tensor<8x8x2097152xf32>)
func.func @bag_mm(%w: tensor<4x2097152xf32>, %i: tensor<8xi64>, %o: tensor<8xi64>, %p: tensor<8xf32>) -> tensor<8x2097152xf32> {
  %r, %o2b, %size, %max = aten.embedding_bag %w, %i, %o per_sample_weights %p {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<4x2097152xf32>, tensor<8xi64>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8x2097152xf32>, tensor<0xi64>, tensor<8xi64>, tensor<8xi64>)
  return %r : tensor<8x2097152xf32>
}
