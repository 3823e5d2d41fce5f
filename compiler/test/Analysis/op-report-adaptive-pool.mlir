// RUN: kiln-opt %s -kiln-print-op-report -o /dev/null | FileCheck %s
// Adaptive pools read each window's elements once and averaging divides
// each result once (f32 is 4 bytes, i64 8):
//   avg: 5 -> 3 over the last dim, windows {0,1} {1,2,3} {3,4}: 7 reads
//        per row, 6 rows: 42 reads + 18 divisions = 60 FLOPs.
//   max: 4x6 -> 2x3 tiles the input: its 48 elements, read once.

// CHECK:      layer op kind unit macs flops param_bytes act_in act_out read written{{$}}
// CHECK-NEXT: avg aten.adaptive_avg_pool window - 0 60 0 120 72 120 72{{$}}
// CHECK-NEXT: max aten.adaptive_max_pool window - 0 48 0 192 144 192 144{{$}}

func.func @kiln_main(%x: tensor<2x3x5xf32>, %y: tensor<1x2x4x6xf32>)
    -> (tensor<2x3x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>) {
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 1 : i64}
      : (tensor<2x3x5xf32>) -> tensor<2x3x3xf32> loc("avg")
  %v, %i = aten.adaptive_max_pool %y {pooled_dims = 2 : i64}
      : (tensor<1x2x4x6xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>) loc("max")
  return %0, %v, %i : tensor<2x3x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>
}
