// RUN: kiln-opt %s -split-input-file -kiln-convert-aten-to-linalg | FileCheck %s

// Max pooling pads with -inf, reduces each window with a generic whose
// window-shaped operand gives the kernel loops their bounds, and carries the
// flat input index of the first maximum (NaN wins).
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-LABEL: func @max_pool
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<1x2x9x9xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 1] [1, 2, 8, 8] [1, 1, 1, 1]
// CHECK: %[[WS:.+]] = tensor.empty() : tensor<3x3xi1>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: linalg.yield %{{.+}}, %{{.+}} : f32, i64
func.func @max_pool(%x: tensor<1x2x8x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>) {
  %v, %i = aten.max_pool %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x8x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>)
  return %v, %i : tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>
}

// -----

// When nothing reads the indices (eval graphs), the window generics carry
// the values only (no index arithmetic, NaN still wins), and no padded copy
// of the whole input is made: the interior windows (output rows and
// columns 1-3) read the input directly, and the two border slabs (row 0;
// column 0 of rows 1-3) read padded copies of the input rows and columns
// they reach. Each generic writes its slice of one output.
// CHECK-LABEL: func @max_pool_values_only
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<1x2x4x4xf32>
// CHECK: %[[INNER:.+]] = tensor.extract_slice %arg0[0, 0, 1, 1] [1, 2, 7, 7] [1, 1, 1, 1]
// CHECK: %[[PART:.+]] = tensor.extract_slice %[[OUT]][0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 1, 1]
// CHECK: %[[START:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%[[PART]] : tensor<1x2x3x3xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[INNER]], %{{.+}} : tensor<1x2x7x7xf32>, tensor<3x3xi1>) outs(%[[START]] : tensor<1x2x3x3xf32>)
// CHECK-NOT: arith.muli
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: linalg.yield %{{.+}} : f32
// CHECK: %[[OUT1:.+]] = tensor.insert_slice %[[MAX]] into %[[OUT]][0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 1, 1]
// CHECK: %[[TOP:.+]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 2, 8] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<1x2x3x9xf32>)
// CHECK: tensor.insert_slice %[[TOP]] into %{{.+}}[0, 0, 1, 1] [1, 2, 2, 8] [1, 1, 1, 1]
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<1x2x1x4xf32>)
// CHECK: %[[OUT2:.+]] = tensor.insert_slice %{{.+}} into %[[OUT1]][0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1]
// CHECK: %[[LEFT:.+]] = tensor.extract_slice %arg0[0, 0, 1, 0] [1, 2, 7, 2] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<1x2x7x3xf32>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<1x2x3x1xf32>)
// CHECK: %[[OUT3:.+]] = tensor.insert_slice %{{.+}} into %[[OUT2]][0, 0, 1, 0] [1, 2, 3, 1] [1, 1, 1, 1]
// CHECK-NOT: linalg.generic
// CHECK: return %[[OUT3]]
func.func @max_pool_values_only(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %v, %i = aten.max_pool %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x8x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>)
  return %v : tensor<1x2x4x4xf32>
}

// -----

// After a relu nothing else reads, the pool reads the relu's input and its
// windows start from 0: max(0, window) is the relu of the window's maximum
// (NaN still wins), so the relu's pass over the larger input goes (the
// relu's own generic is left unused, for the canonicalizer to drop).
// CHECK-LABEL: func @max_pool_after_relu
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.extract_slice %arg0[0, 0, 1, 1] [1, 2, 7, 7] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<1x2x3x3xf32>)
// CHECK-NOT: arith.maximumf
// CHECK: return
func.func @max_pool_after_relu(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %r = aten.relu %x : tensor<1x2x8x8xf32>
  %v, %i = aten.max_pool %r {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x8x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>)
  return %v : tensor<1x2x4x4xf32>
}

// -----

// max_pool1d is a 2-d pool of a view: the pool reads the relu's input,
// viewed the same way, from 0.
// CHECK-LABEL: func @max_pool_after_relu_view
// CHECK: arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[FLAT:.+]] = tensor.collapse_shape %arg0
// CHECK-NEXT: %[[VIEWED:.+]] = tensor.expand_shape %[[FLAT]] {{.+}} output_shape [2, 4, 1, 16]
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.extract_slice %[[VIEWED]]
// CHECK: linalg.fill ins(%[[ZERO]] : f32)
// CHECK-NOT: arith.maximumf
// CHECK: return
func.func @max_pool_after_relu_view(%x: tensor<2x4x16xf32>) -> tensor<2x4x1x8xf32> {
  %r = aten.relu %x : tensor<2x4x16xf32>
  %v1 = aten.view %r : (tensor<2x4x16xf32>) -> tensor<2x4x1x16xf32>
  %v, %i = aten.max_pool %v1 {kernel = array<i64: 1, 3>, stride = array<i64: 1, 2>,
      padding = array<i64: 0, 1>, dilation = array<i64: 1, 1>}
      : (tensor<2x4x1x16xf32>) -> (tensor<2x4x1x8xf32>, tensor<2x4x1x8xi64>)
  return %v : tensor<2x4x1x8xf32>
}

// -----

// A dilation past the input leaves a window wholly in the padding, whose
// maximum is -inf with the relu or without: the pool reads the relu's
// result and starts from -inf.
// CHECK-LABEL: func @max_pool_after_relu_window_in_padding
// CHECK: %[[RELU:.+]] = linalg.generic
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.extract_slice %[[RELU]]
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK-NOT: arith.constant 0.000000e+00 : f32
// CHECK: return
func.func @max_pool_after_relu_window_in_padding(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
  %r = aten.relu %x : tensor<1x1x2x2xf32>
  %v, %i = aten.max_pool %r {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>,
      padding = array<i64: 1, 1>, dilation = array<i64: 3, 3>}
      : (tensor<1x1x2x2xf32>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1x1xi64>)
  return %v : tensor<1x1x1x1xf32>
}

// -----

// Average pooling: a summing window generic, then a division by PyTorch's
// per-window count computed from the output indices.
// CHECK-LABEL: func @avg_pool
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: linalg.index 2
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = aten.avg_pool %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, count_include_pad = false, divisor_override = 0 : i64}
      : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// divisor_override divides by a constant.
// CHECK-LABEL: func @avg_pool_divisor
// CHECK: %[[D:.+]] = arith.constant 3.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[D]]
func.func @avg_pool_divisor(%x: tensor<3x8x8xf32>) -> tensor<3x4x4xf32> {
  %0 = aten.avg_pool %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 3 : i64}
      : (tensor<3x8x8xf32>) -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

// Integer avg_pool sums in i64 and divides with truncation toward zero, as
// eager does; the result narrows to the input's type once.
// CHECK-LABEL: func @avg_pool_i32
// (eager has int64 only; the lowering takes any integer type)
// CHECK: arith.extsi %{{.+}} : i32 to i64
// CHECK: arith.addi %{{.+}} : i64
// CHECK: arith.divsi
// CHECK: arith.trunci %{{.+}} : i64 to i32
func.func @avg_pool_i32(%x: tensor<2x3x8xi32>) -> tensor<2x3x4xi32> {
  %0 = aten.avg_pool %x {kernel = array<i64: 2>, stride = array<i64: 2>,
      padding = array<i64: 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<2x3x8xi32>) -> tensor<2x3x4xi32>
  return %0 : tensor<2x3x4xi32>
}

// -----

// bf16 avg_pool sums in f32 and rounds once.
// CHECK-LABEL: func @avg_pool_bf16
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.addf %{{.+}} : f32
// CHECK: arith.divf %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @avg_pool_bf16(%x: tensor<1x3x9x9xbf16>) -> tensor<1x3x3x3xbf16> {
  %0 = aten.avg_pool %x {kernel = array<i64: 3, 3>, stride = array<i64: 3, 3>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<1x3x9x9xbf16>) -> tensor<1x3x3x3xbf16>
  return %0 : tensor<1x3x3x3xbf16>
}

// -----

// Channels last, the window slides over the dims before the channels, which
// are the last parallel loop, after the output positions (the innermost dim
// of the data, so it vectorises): pads only h and w, and carries the flat
// spatial index.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>
// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @max_pool_channels_last
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 1, 1, 0] [1, 8, 8, 2] [1, 1, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>)
// CHECK: linalg.index 1
// CHECK: linalg.index 4
// CHECK: linalg.index 2
// CHECK: linalg.index 5
func.func @max_pool_channels_last(%x: tensor<1x8x8x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>) {
  %v, %i = aten.max_pool %x {channels_last, kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x8x8x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>)
  return %v, %i : tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>
}

// -----

// CHECK-LABEL: func @avg_pool_channels_last
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<1x4x4x3xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: linalg.index 1
// CHECK: linalg.index 2
// CHECK: arith.divf
func.func @avg_pool_channels_last(%x: tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = aten.avg_pool %x {channels_last, kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, count_include_pad = false, divisor_override = 0 : i64}
      : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}
