// RUN: kiln-opt %s -split-input-file -kiln-tile-and-vectorize="transpose-tile=16" -canonicalize -cse | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-tile-and-vectorize -canonicalize -cse | FileCheck %s --check-prefix=OFF

// A weight transpose (1 x 512 x 256 -> 1 x 256 x 512) becomes independent
// 16 x 16 blocks: one vector register per row in, a register transpose, one
// per row out.
// CHECK-LABEL: func @weights
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) = (0, 0) to (256, 512) step (16, 16)
// CHECK:   %[[IN:.+]] = tensor.extract_slice %arg0[0, %[[J]], %[[I]]] [1, 16, 16] [1, 1, 1]
// CHECK:   %[[ROWS:.+]] = vector.transfer_read %[[IN]]{{.*}} : tensor<1x16x16xf32>, vector<1x16x16xf32>
// CHECK:   %[[T:.+]] = vector.transpose %[[ROWS]], [0, 2, 1] : vector<1x16x16xf32> to vector<1x16x16xf32>
// CHECK:   vector.transfer_write %[[T]]
// CHECK-NOT: linalg.transpose
// OFF-LABEL: func @weights
// OFF: linalg.transpose
func.func @weights(%w: tensor<1x512x256xf32>) -> tensor<1x256x512xf32> {
  %e = tensor.empty() : tensor<1x256x512xf32>
  %t = linalg.transpose ins(%w : tensor<1x512x256xf32>) outs(%e : tensor<1x256x512xf32>) permutation = [0, 2, 1]
  return %t : tensor<1x256x512xf32>
}

// -----

// Extents that are not multiples of the block, other permutations and
// 64-bit elements are left to the generic lowering.
// CHECK-LABEL: func @left_alone
// CHECK-COUNT-3: linalg.transpose
// CHECK-NOT: vector.transpose
func.func @left_alone(%a: tensor<49x512xf32>, %b: tensor<32x16x8xf32>, %c: tensor<32x32xf64>)
    -> (tensor<512x49xf32>, tensor<8x16x32xf32>, tensor<32x32xf64>) {
  %ea = tensor.empty() : tensor<512x49xf32>
  %ta = linalg.transpose ins(%a : tensor<49x512xf32>) outs(%ea : tensor<512x49xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<8x16x32xf32>
  %tb = linalg.transpose ins(%b : tensor<32x16x8xf32>) outs(%eb : tensor<8x16x32xf32>) permutation = [2, 1, 0]
  %ec = tensor.empty() : tensor<32x32xf64>
  %tc = linalg.transpose ins(%c : tensor<32x32xf64>) outs(%ec : tensor<32x32xf64>) permutation = [1, 0]
  return %ta, %tb, %tc : tensor<512x49xf32>, tensor<8x16x32xf32>, tensor<32x32xf64>
}
