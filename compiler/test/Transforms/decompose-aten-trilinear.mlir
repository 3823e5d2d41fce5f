// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Bilinear (x1, W, x2): x1 * x2 is the smallest pairwise product; it is
// contracted with W over (in1, in2) by one bmm.
// CHECK-LABEL: func @bilinear
// CHECK: %[[P:.+]] = aten.mul %{{.+}}, %{{.+}} : (tensor<4x1x1x5xf32>, tensor<4x1x3x1xf32>) -> tensor<4x1x3x5xf32>
// CHECK-NOT: tensor<4x6x3x5xf32>
// CHECK: aten.bmm %{{.+}}, %{{.+}} : (tensor<1x4x15xf32>, tensor<1x15x6xf32>) -> tensor<1x4x6xf32>
// CHECK-NOT: aten.trilinear
func.func @bilinear(%x1: tensor<4x1x3x1xf32>, %w: tensor<1x6x3x5xf32>, %x2: tensor<4x1x1x5xf32>) -> tensor<4x6xf32> {
  %0 = aten.trilinear %x1, %w, %x2 {sumdim = array<i64: 2, 3>}
      : (tensor<4x1x3x1xf32>, tensor<1x6x3x5xf32>, tensor<4x1x1x5xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// A summed dim only the product has (dim 2: 7 in i1 and i2, 1 in i3) is
// summed there first; the kept dims come back in order (dim 0 is the
// third's only: a right dim, permuted back in front).
// CHECK-LABEL: func @one_sided
// CHECK: %[[P:.+]] = aten.mul %{{.+}}, %{{.+}} : (tensor<1x3x7xf32>, tensor<1x3x7xf32>) -> tensor<1x3x7xf32>
// CHECK: %[[S:.+]] = aten.sum %[[P]] {dims = array<i64: 2>, keepdim = true} : (tensor<1x3x7xf32>) -> tensor<1x3x1xf32>
// CHECK: aten.bmm
// CHECK: aten.permute %{{.+}} {dims = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
func.func @one_sided(%a: tensor<1x3x7xf32>, %b: tensor<1x3x7xf32>, %c: tensor<5x1x1xf32>) -> tensor<5x3xf32> {
  %0 = aten.trilinear %a, %b, %c {sumdim = array<i64: 2>}
      : (tensor<1x3x7xf32>, tensor<1x3x7xf32>, tensor<5x1x1xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
