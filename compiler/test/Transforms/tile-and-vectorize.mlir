// RUN: kiln-opt %s -split-input-file -kiln-tile-and-vectorize="register-tile-m=8 register-tile-n=32" -canonicalize -cse | FileCheck %s
// AVX2's register tile (6x16):
// RUN: kiln-opt %s -split-input-file -kiln-tile-and-vectorize="register-tile-m=6 register-tile-n=16" -canonicalize -cse | FileCheck %s --check-prefix=AVX2

// Independent column panels of C (scf.forall: the loop the thread pool
// splits), then (N 128, K 256) panels of B, each copied to a dense buffer
// because it is a strided sub-block of B, then row blocks (M fits whole: no
// loop) and an 8x32
// register tile with unit K, columns outermost (one 32-wide strip of the
// panel stays in L1 across the row tiles), vectorized into a vector.contract
// of an 8x1 by a 1x32 operand.
// CHECK-LABEL: func @matmul
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: scf.forall (%{{.+}}) = (0) to (256) step (128) shared_outs
// CHECK:   scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C256]]
// CHECK:     %[[PANEL:.+]] = linalg.copy ins(%{{.+}} : tensor<256x128xf32>)
// CHECK:     scf.for {{.*}} step %c32
// CHECK:       scf.for {{.*}} step %c8
// CHECK:         scf.for {{.*}} step %c1
// CHECK:           vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: tensor<64x512xf32>, %b: tensor<512x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

// Extents with no nice divisor: the largest divisor for rows (5 of 100) and
// the largest power of two for the vector width (4 of 100): every tile is
// static, no masking.
// CHECK-LABEL: func @odd_sizes
// CHECK: vector.contract {{.*}} : vector<5x1xf32>, vector<1x4xf32> into vector<5x4xf32>
func.func @odd_sizes(%a: tensor<100x100xf32>, %b: tensor<100x100xf32>, %c: tensor<100x100xf32>) -> tensor<100x100xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<100x100xf32>, tensor<100x100xf32>) outs(%c : tensor<100x100xf32>) -> tensor<100x100xf32>
  return %0 : tensor<100x100xf32>
}

// -----

// N = 1000 (a classifier): the cache tile is chosen so that a vector width
// divides it (40 columns, 8-wide vectors), not the largest divisor (125
// columns, which left 1-wide "vectors": scalar code).
// With 6-row register tiles, 196 rows go in blocks of 28 (4-row tiles), not
// 49 (one-row tiles).
// CHECK-LABEL: func @classifier
// CHECK: scf.forall (%{{.+}}) = (0) to (1000) step (40)
// CHECK: vector.contract {{.*}} : vector<7x1xf32>, vector<1x8xf32> into vector<7x8xf32>
// AVX2-LABEL: func @classifier
// AVX2: vector.contract {{.*}} : vector<4x1xf32>, vector<1x8xf32> into vector<4x8xf32>
func.func @classifier(%a: tensor<196x64xf32>, %b: tensor<64x1000xf32>, %c: tensor<196x1000xf32>) -> tensor<196x1000xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<196x64xf32>, tensor<64x1000xf32>) outs(%c : tensor<196x1000xf32>) -> tensor<196x1000xf32>
  return %0 : tensor<196x1000xf32>
}

// -----

// batch_matmul: batch tiled by 1 in independent iterations, same register
// tile; B rows are already dense (N fits one panel), so nothing is copied.
// CHECK-LABEL: func @bmm
// CHECK-NOT: linalg.copy
// CHECK: scf.forall (%{{.+}}) in (2)
// CHECK: scf.for
// CHECK: vector.contract {{.*}} : vector<1x8x1xf32>, vector<1x1x32xf32> into vector<1x8x32xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @bmm(%a: tensor<2x8x4xf32>, %b: tensor<2x4x32xf32>, %c: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x8x4xf32>, tensor<2x4x32xf32>) outs(%c : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

// Other linalg ops are left alone.
// CHECK-LABEL: func @not_a_matmul
// CHECK: linalg.transpose
// CHECK-NOT: vector.
func.func @not_a_matmul(%a: tensor<4x8xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%c : tensor<8x4xf32>) permutation = [1, 0]
  return %0 : tensor<8x4xf32>
}

// -----

// B = transpose(W) (nn.Linear): each panel is transposed straight from the
// matching slice of W, and the full-size transpose is gone.
// CHECK-LABEL: func @transposed_weight
// CHECK-NOT: linalg.transpose ins(%arg1 : tensor<512x256xf32>)
// CHECK: scf.forall (%[[N:.+]]) = (0) to (512) step (128)
// CHECK:   %[[W:.+]] = tensor.extract_slice %arg1[%[[N]], 0] [128, 256] [1, 1] : tensor<512x256xf32> to tensor<128x256xf32>
// CHECK:   %[[PANEL:.+]] = linalg.transpose ins(%[[W]] : tensor<128x256xf32>) outs(%{{.+}} : tensor<256x128xf32>) permutation = [1, 0]
// CHECK:   tensor.extract_slice %[[PANEL]]
// CHECK:   vector.contract
func.func @transposed_weight(%x: tensor<64x256xf32>, %w: tensor<512x256xf32>, %c: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %e = tensor.empty() : tensor<256x512xf32>
  %wt = linalg.transpose ins(%w : tensor<512x256xf32>) outs(%e : tensor<256x512xf32>) permutation = [1, 0]
  %0 = linalg.matmul ins(%x, %wt : tensor<64x256xf32>, tensor<256x512xf32>) outs(%c : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %0 : tensor<64x512xf32>
}

// -----

// An empty iteration space is left alone (nothing to compute).
// CHECK-LABEL: func @empty
// CHECK: linalg.matmul
// CHECK-NOT: vector.contract
func.func @empty(%a: tensor<0x4xf32>, %b: tensor<4x3xf32>, %c: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<0x4xf32>, tensor<4x3xf32>) outs(%c : tensor<0x3xf32>) -> tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

// Rows beyond one block (M 256, blocks of 64) are independent iterations
// too, inside the serial loop over K panels: with few column panels the
// thread pool splits the row blocks instead.
// CHECK-LABEL: func @row_blocks
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1024 step %c256
// CHECK:   scf.forall (%{{.+}}) = (0) to (256) step (64)
// CHECK:     vector.contract
func.func @row_blocks(%a: tensor<256x1024xf32>, %b: tensor<1024x64xf32>, %c: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<256x1024xf32>, tensor<1024x64xf32>) outs(%c : tensor<256x64xf32>) -> tensor<256x64xf32>
  return %0 : tensor<256x64xf32>
}

// -----

// Rows of symbolic size (a batch): within each (N, K) panel, steps of the
// register tile, the loop peeled so that its full steps are static and
// vectorize as above; the last partial step goes one row at a time, also
// vectorized (1x32 tiles).
// CHECK-LABEL: func @dynamic_rows
// CHECK: %[[FULL:.+]] = scf.for %{{.+}} = %c0 to %[[SPLIT:.+]] step %c8
// CHECK:   vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: scf.for %{{.+}} = %[[SPLIT]] to %{{.+}} step %c8 iter_args(%{{.+}} = %[[FULL]])
// CHECK:   vector.contract {{.*}} : vector<1x1xf32>, vector<1x32xf32> into vector<1x32xf32>
// CHECK-NOT: linalg.matmul
func.func @dynamic_rows(%a: tensor<?x64xf32>, %b: tensor<64x128xf32>, %c: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x128xf32>) outs(%c : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}

// -----

// Attention's products over a symbolic sequence: scores (q @ k^T) have
// symbolic rows and columns, both peeled (8x32 full tiles, then 8x1, 1x32
// and 1x1 edges); the mix (p @ v) has a symbolic depth, which the unit-depth
// register tile absorbs.
// CHECK-LABEL: func @attention_scores
// CHECK: vector.contract {{.*}} : vector<1x8x1xf32>, vector<1x1x32xf32> into vector<1x8x32xf32>
// CHECK: vector.contract {{.*}} : vector<1x8x1xf32>, vector<1x1x1xf32> into vector<1x8x1xf32>
// CHECK: vector.contract {{.*}} : vector<1x1x1xf32>, vector<1x1x32xf32> into vector<1x1x32xf32>
// CHECK-NOT: linalg.batch_matmul
// AVX2-LABEL: func @attention_scores
func.func @attention_scores(%q: tensor<?x?x32xf32>, %k: tensor<?x32x?xf32>, %c: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = linalg.batch_matmul ins(%q, %k : tensor<?x?x32xf32>, tensor<?x32x?xf32>) outs(%c : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func @attention_mix
// CHECK: vector.contract {{.*}} : vector<1x8x1xf32>, vector<1x1x32xf32> into vector<1x8x32xf32>
// CHECK: vector.contract {{.*}} : vector<1x1x1xf32>, vector<1x1x32xf32> into vector<1x1x32xf32>
// CHECK-NOT: linalg.batch_matmul
// AVX2-LABEL: func @attention_mix
func.func @attention_mix(%p: tensor<?x?x?xf32>, %v: tensor<?x?x32xf32>, %c: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  %0 = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x32xf32>) outs(%c : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %0 : tensor<?x?x32xf32>
}
