// RUN: kiln-opt %s -split-input-file -verify-diagnostics
// Verifiers of the table-driven, convolution and pooling ops.

func.func @unknown_fn(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown pointwise function "frobnicate"}}
  %0 = aten.pointwise "frobnicate" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_arity(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{"maximum" takes 2 operands, got 1}}
  %0 = aten.pointwise "maximum" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @compare_not_bool(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{"lt" produces i1}}
  %0 = aten.pointwise "lt" %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clamp_scalars(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{"clamp" takes 2 scalars, got 1}}
  %0 = aten.pointwise "clamp" %x {scalars = array<f64: 1.0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pointwise_bad_shape(%x: tensor<4xf32>, %y: tensor<3x1xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{operand #0 dimension 0 (extent 4) does not broadcast to result extent 5}}
  %0 = aten.pointwise "maximum" %x, %y : (tensor<4xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @conv_extent(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{spatial dim 0: result extent 8, expected 6}}
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{groups 2 must divide the 3 input channels}}
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 2 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @pool_padding(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{spatial dim 0: invalid kernel/stride/padding/dilation}}
  %0 = aten.avg_pool %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>,
      padding = array<i64: 2, 2>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @slice_past_end(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{dim 0 reads past extent 4}}
  %0 = aten.slice %x {offsets = array<i64: 1>, strides = array<i64: 2>} : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @cat_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{operand extent 3 of dim 0 differs from the result's}}
  %0 = aten.cat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @index_float(%x: tensor<4x2xf32>, %i: tensor<3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{index must be an integer tensor}}
  %0 = aten.index_select %x, %i {dim = 0 : i64} : (tensor<4x2xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @insert_slice_overflow(%x: tensor<4xf32>, %s: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{dim 0: src does not fit}}
  %0 = aten.insert_slice %x, %s {offsets = array<i64: 2>, strides = array<i64: 1>} : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_extent(%x: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{result dim 0 must be 7}}
  %0 = aten.pad %x {low = array<i64: 1>, high = array<i64: 2>, value = 0.0 : f64} : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @bitwise_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{"bitwise_and" is not defined for these element types}}
  %0 = aten.pointwise "bitwise_and" %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @index_put_values(%x: tensor<5x3xf32>, %i: tensor<2xi64>, %v: tensor<2x4xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{values must be (K, self.shape[1:])}}
  %0 = aten.index_put %x, %i, %v {accumulate = false} : (tensor<5x3xf32>, tensor<2xi64>, tensor<2x4xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @scatter_reduce(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{unknown reduce "mean"}}
  %0 = aten.scatter %x, %i, %s {dim = 1 : i64, reduce = "mean"} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @scatter_reduce_unknown(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{unknown reduce "median"}}
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "median"} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @put_counts(%x: tensor<3x5xf32>, %i: tensor<2xi64>, %s: tensor<3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{index has 2 elements and source 3: they must match}}
  %0 = aten.put %x, %i, %s {accumulate = false} : (tensor<3x5xf32>, tensor<2xi64>, tensor<3xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @index_reduce_sum(%x: tensor<3x5xf32>, %i: tensor<2xi64>, %s: tensor<3x2xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{unknown reduce "sum" (prod, mean, amax or amin)}}
  %0 = aten.index_reduce %x, %i, %s {dim = 1 : i64, reduce = "sum"} : (tensor<3x5xf32>, tensor<2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @index_reduce_source_shape(%x: tensor<3x5xf32>, %i: tensor<2xi64>, %s: tensor<3x3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{source's extent 3 of dim 1 must be 2}}
  %0 = aten.index_reduce %x, %i, %s {dim = 1 : i64, reduce = "amax"} : (tensor<3x5xf32>, tensor<2xi64>, tensor<3x3xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @index_reduce_index_rank(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>, %s: tensor<3x2xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{index must be 1-d}}
  %0 = aten.index_reduce %x, %i, %s {dim = 1 : i64, reduce = "prod"} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @scatter_reduce_index_past_self(%x: tensor<3x5xf32>, %i: tensor<4x4xi64>, %s: tensor<4x4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{index extent 4 of dim 0 is larger than self's}}
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "sum"} : (tensor<3x5xf32>, tensor<4x4xi64>, tensor<4x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @scatter_reduce_index_past_src(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x2xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{index extent 4 of dim 1 is larger than src's}}
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "sum"} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @scatter_reduce_none_without_self(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{a scatter without reduction always keeps self}}
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "none", include_self = false} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @topk_k_past_extent(%x: tensor<2x5xf32>) -> (tensor<2x6xf32>, tensor<2x6xi64>) {
  // expected-error @+1 {{k = 6 is outside [0, 5]}}
  %v, %i = aten.topk %x {k = 6 : i64, dim = 1 : i64, largest = true} : (tensor<2x5xf32>) -> (tensor<2x6xf32>, tensor<2x6xi64>)
  return %v, %i : tensor<2x6xf32>, tensor<2x6xi64>
}

// -----

func.func @kthvalue_shape(%x: tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>) {
  // expected-error @+1 {{values and indices have the wrong shape}}
  %v, %i = aten.kthvalue %x {k = 1 : i64, dim = 1 : i64, keepdim = false} : (tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>)
  return %v, %i : tensor<2x1xf32>, tensor<2x1xi64>
}

// -----

func.func @sort_dim(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>) {
  // expected-error @+1 {{dim 2 is out of range}}
  %v, %i = aten.sort %x {dim = 2 : i64, descending = false} : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>)
  return %v, %i : tensor<2x5xf32>, tensor<2x5xi64>
}

// -----

func.func @scatter_reduce_wrap_u8_float(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{wrap_u8 is for the mean of (widened) uint8 tensors}}
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "mean", wrap_u8} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @scatter_reduce_bool_mean(%x: tensor<3x5xi1>, %i: tensor<3x4xi64>, %s: tensor<3x4xi1>) -> tensor<3x5xi1> {
  // expected-error @+1 {{a boolean tensor has no mean}}
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "mean"} : (tensor<3x5xi1>, tensor<3x4xi64>, tensor<3x4xi1>) -> tensor<3x5xi1>
  return %0 : tensor<3x5xi1>
}

// -----

// Shape arithmetic on client-declared attributes is 128-bit: 2 * 2^62 would
// wrap to a negative offset that passes the bounds check.
func.func @slice_stride_overflow(%x: tensor<10xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{dim 0 reads past extent 10}}
  %0 = aten.slice %x {offsets = array<i64: 0>, strides = array<i64: 4611686018427387904>} : (tensor<10xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @insert_slice_stride_overflow(%x: tensor<10xf32>, %s: tensor<3xf32>) -> tensor<10xf32> {
  // expected-error @+1 {{dim 0: src does not fit}}
  %0 = aten.insert_slice %x, %s {offsets = array<i64: 0>, strides = array<i64: 4611686018427387904>} : (tensor<10xf32>, tensor<3xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

func.func @pad_overflow(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result dim 0 must be out of range}}
  %0 = aten.pad %x {low = array<i64: 9223372036854775807>, high = array<i64: 9223372036854775807>, value = 0.0 : f64} : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @conv_padding_overflow(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{spatial dim 0: result extent 2, expected out of range}}
  %0 = aten.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 9223372036854775807, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

func.func @pool_padding_overflow(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>) {
  // expected-error @+1 {{spatial dim 0: invalid kernel/stride/padding/dilation}}
  %0:2 = aten.max_pool %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 4611686018427387904, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
  return %0#0, %0#1 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>
}

// -----

func.func @permute_result_rank(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result has rank 1, the input 2}}
  %0 = aten.permute %a {dims = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The random functions count and key with i64 words only.
func.func @random_i32_counter(%i: tensor<4xi32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{"random_uniform" is not defined for these element types}}
  %0 = aten.pointwise "random_uniform" %i, %s {scalars = array<f64: 0.0, 0.0, 24.0>} : (tensor<4xi32>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @random_integer_uniform(%i: tensor<4xi64>, %s: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{"random_uniform" needs a floating-point result}}
  %0 = aten.pointwise "random_uniform" %i, %s {scalars = array<f64: 0.0, 0.0, 24.0>} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @pool_channels_last_rank(%x: tensor<2x8x8xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{channels last, input and result need rank 4: (n, spatial..., c)}}
  %0 = aten.avg_pool %x {channels_last, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
      padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
      : (tensor<2x8x8xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @pool_channels_last_kept(%x: tensor<1x8x8x4xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>) {
  // expected-error @+1 {{batch and channel extents must be kept}}
  %v, %i = aten.max_pool %x {channels_last, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
      padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<1x8x8x4xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>)
  return %v, %i : tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>
}

// -----

func.func @median_empty_dim(%x: tensor<2x0xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  // expected-error @+1 {{the median of an empty dim (dim 1) is undefined}}
  %v, %i = aten.median %x {dim = 1 : i64, keepdim = false, ignore_nan = false} : (tensor<2x0xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  return %v, %i : tensor<2xf32>, tensor<2xi64>
}

// -----

func.func @median_dim(%x: tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  // expected-error @+1 {{dim 2 is out of range}}
  %v, %i = aten.median %x {dim = 2 : i64, keepdim = false, ignore_nan = true} : (tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  return %v, %i : tensor<2xf32>, tensor<2xi64>
}

// -----

func.func @kthvalue_dim(%x: tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  // expected-error @+1 {{dim -1 is out of range}}
  %v, %i = aten.kthvalue %x {k = 1 : i64, dim = -1 : i64, keepdim = false} : (tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  return %v, %i : tensor<2xf32>, tensor<2xi64>
}

// -----

func.func @median_shape(%x: tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>) {
  // expected-error @+1 {{values and indices have the wrong shape}}
  %v, %i = aten.median %x {dim = 1 : i64, keepdim = false, ignore_nan = false} : (tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>)
  return %v, %i : tensor<2x1xf32>, tensor<2x1xi64>
}

// -----

func.func @polygamma_order(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{polygamma's order must be an integer in [0, 1e6], got 1.5}}
  %0 = aten.pointwise "polygamma" %x {scalars = array<f64: 1.5>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gcd_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{"gcd" is not defined for these element types}}
  %0 = aten.pointwise "gcd" %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @mode_empty_dim(%x: tensor<2x0xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  // expected-error @+1 {{the mode of an empty dim (dim 1) is undefined}}
  %v, %i = aten.mode %x {dim = 1 : i64, keepdim = false} : (tensor<2x0xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  return %v, %i : tensor<2xf32>, tensor<2xi64>
}

// -----

func.func @mode_shape(%x: tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>) {
  // expected-error @+1 {{}}
  %v, %i = aten.mode %x {dim = 1 : i64, keepdim = false} : (tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>)
  return %v, %i : tensor<2x1xf32>, tensor<2x1xi64>
}
