// RUN: kiln-opt %s -kiln-print-op-report=num-parameters=2 -o /dev/null | FileCheck %s
// The cost table on hand-written aten IR: layers are named by loc("..."); the
// first two arguments (an embedding table, a transposed-conv weight) are
// parameters. f32 is 4 bytes, i64 8.
//   embed:   gathers 2x5 rows of 16: reads the ids (80 B) and the table (6400 B).
//   bmm:     2 * 4x8 @ 8x5: 2*4*5*8 = 320 MACs.
//   softmax: 5 FLOPs per element (40), var 4 per element.
//   deconv:  transposed: each of the 100 input elements meets C_out/groups = 2
//            channels of 3x3 taps: 1800 MACs.
//   clampmin: the constant is made inside the layer, so not an input.
//   The sum has no name: it is a layer of its own, named after its op.
//   A combining scatter (as imported, aten.scatter_reduce, or the primitive
//   aten.scatter) costs one FLOP per index element, a plain one none;
//   an accumulating index_put one per values element.

// CHECK:      layer op kind unit macs flops param_bytes act_in act_out read written{{$}}
// CHECK-NEXT: embed aten.index_select data-movement - 0 0 6400 80 640 6480 640{{$}}
// CHECK-NEXT: bmm aten.bmm contraction - 320 640 0 576 160 576 160{{$}}
// CHECK-NEXT: softmax aten.softmax reduction - 0 200 0 160 160 160 160{{$}}
// CHECK-NEXT: var aten.var reduction - 0 160 0 160 32 160 32{{$}}
// CHECK-NEXT: deconv aten.convolution contraction - 1800 3600 288 400 392 688 392{{$}}
// CHECK-NEXT: clampmin aten.pointwise elementwise - 0 40 0 160 160 160 160{{$}}
// CHECK-NEXT: aten.sum#0 aten.sum reduction - 0 40 0 160 4 160 4{{$}}
// CHECK-NEXT: logits aten.log_softmax reduction - 0 200 0 160 160 160 160{{$}}
// CHECK-NEXT: padded aten.pad data-movement - 0 0 0 160 224 160 224{{$}}
// CHECK-NEXT: scatter_add aten.scatter_reduce reduction - 0 6 0 136 64 136 64{{$}}
// CHECK-NEXT: scatter aten.scatter data-movement - 0 0 0 136 64 136 64{{$}}
// CHECK-NEXT: index_add aten.index_put reduction - 0 6 0 100 60 100 60{{$}}
// CHECK-NEXT: total 2120 4892 6688 2388 2120 9076 2120{{$}}

func.func @kiln_main(%emb: tensor<100x16xf32>, %wt: tensor<4x2x3x3xf32>,
                     %ids: tensor<2x5xi64>, %a: tensor<2x4x8xf32>,
                     %b: tensor<2x8x5xf32>, %x: tensor<1x4x5x5xf32>,
                     %dst: tensor<2x8xf32>, %idx: tensor<2x3xi64>, %src: tensor<2x3xf32>,
                     %rows: tensor<5x3xf32>, %ridx: tensor<2xi64>, %rv: tensor<2x3xf32>)
    -> (tensor<2x5x16xf32>, tensor<2x4xf32>, tensor<1x2x7x7xf32>, tensor<f32>,
        tensor<2x4x7xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<5x3xf32>) {
  %0 = aten.index_select %emb, %ids {dim = 0 : i64}
      : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32> loc("embed")
  %1 = aten.bmm %a, %b : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32> loc("bmm")
  %2 = aten.softmax %1 {dim = 2 : i64} : tensor<2x4x5xf32> loc("softmax")
  %3 = aten.var %1 {dims = array<i64: 2>, correction = 1.0 : f64, keepdim = false, std = false}
      : (tensor<2x4x5xf32>) -> tensor<2x4xf32> loc("var")
  %4 = aten.convolution %x, %wt {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = true,
      groups = 1 : i64}
      : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32> loc("deconv")
  %c = aten.constant dense<0.0> : tensor<f32> loc("clampmin")
  %5 = aten.pointwise "maximum" %2, %c
      : (tensor<2x4x5xf32>, tensor<f32>) -> tensor<2x4x5xf32> loc("clampmin")
  %6 = aten.sum %5 {dims = array<i64>, keepdim = false} : (tensor<2x4x5xf32>) -> tensor<f32>
  %7 = aten.log_softmax %5 {dim = 2 : i64} : tensor<2x4x5xf32> loc("logits")
  %8 = aten.pad %7 {low = array<i64: 0, 0, 1>, high = array<i64: 0, 0, 1>, value = 0.0 : f64}
      : (tensor<2x4x5xf32>) -> tensor<2x4x7xf32> loc("padded")
  %9 = aten.scatter_reduce %dst, %idx, %src {dim = 1 : i64, reduce = "sum"}
      : (tensor<2x8xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<2x8xf32> loc("scatter_add")
  %10 = aten.scatter %dst, %idx, %src {dim = 1 : i64, reduce = "none"}
      : (tensor<2x8xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<2x8xf32> loc("scatter")
  %11 = aten.index_put %rows, %ridx, %rv {accumulate = true}
      : (tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32> loc("index_add")
  return %0, %3, %4, %6, %8, %9, %10, %11
      : tensor<2x5x16xf32>, tensor<2x4xf32>, tensor<1x2x7x7xf32>, tensor<f32>, tensor<2x4x7xf32>,
        tensor<2x8xf32>, tensor<2x8xf32>, tensor<5x3xf32>
}
