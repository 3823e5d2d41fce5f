// RUN: kiln-opt %s -kiln-print-op-report -o /dev/null | FileCheck %s
// The cost of composite ops the importer keeps whole (f32 is 4 bytes, i64
// 8). Adaptive pools read each window's elements once and averaging
// divides each result once:
//   avg: 5 -> 3 over the last dim, windows {0,1} {1,2,3} {3,4}: 7 reads
//        per row, 6 rows: 42 reads + 18 divisions = 60 FLOPs.
//   max: 4x6 -> 2x3 tiles the input: its 48 elements, read once.
// embedding_bag reduces each index's row into its bag: 5 rows of 3, each
// weighted (30 FLOPs); reads the weight (120 B), indices (40 B), offsets
// (16 B) and weights (20 B); writes the result (24 B), bag_size and
// max_indices (16 B each). embedding_renorm takes each row's norm (|x|, a
// power, the sum) and scales: 4 FLOPs per element of the 10x3 table.
// convolution_backward asked for the weight and bias gradients: the
// forward's 512 x 9 = 4608 multiply-adds once, plus 512 additions.

// CHECK:      layer op kind unit macs flops param_bytes act_in act_out read written{{$}}
// CHECK-NEXT: avg aten.adaptive_avg_pool window - 0 60 0 120 72 120 72{{$}}
// CHECK-NEXT: max aten.adaptive_max_pool window - 0 48 0 192 144 192 144{{$}}
// CHECK-NEXT: bag aten.embedding_bag reduction - 0 30 0 196 56 196 56{{$}}
// CHECK-NEXT: renorm aten.embedding_renorm reduction - 0 120 0 160 120 160 120{{$}}
// CHECK-NEXT: convback aten.convolution_backward contraction - 4608 9728

func.func @kiln_main(%x: tensor<2x3x5xf32>, %y: tensor<1x2x4x6xf32>,
                     %w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>,
                     %p: tensor<5xf32>, %dy: tensor<2x4x8x8xf32>,
                     %cx: tensor<2x2x8x8xf32>, %cw: tensor<4x1x3x3xf32>)
    -> (tensor<2x3x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>, tensor<2x3xf32>,
        tensor<10x3xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) {
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 1 : i64}
      : (tensor<2x3x5xf32>) -> tensor<2x3x3xf32> loc("avg")
  %v, %idx = aten.adaptive_max_pool %y {pooled_dims = 2 : i64}
      : (tensor<1x2x4x6xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>) loc("max")
  %r, %o2b, %size, %mx = aten.embedding_bag %w, %i, %o per_sample_weights %p
      {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<5xf32>)
      -> (tensor<2x3xf32>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>) loc("bag")
  %n = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64}
      : (tensor<10x3xf32>, tensor<5xi64>) -> tensor<10x3xf32> loc("renorm")
  %dx, %dw, %db = aten.convolution_backward %dy, %cx, %cw {stride = array<i64: 1, 1>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64,
      output_mask = array<i1: false, true, true>}
      : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>)
      -> (tensor<2x2x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) loc("convback")
  return %0, %v, %idx, %r, %n, %dw, %db : tensor<2x3x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>, tensor<2x3xf32>,
      tensor<10x3xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>
}
