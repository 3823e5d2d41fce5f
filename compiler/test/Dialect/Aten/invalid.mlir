// RUN: kiln-opt %s -split-input-file -verify-diagnostics
// Verifiers reject results PyTorch's meta functions would never produce.

func.func @add_bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{rhs dimension 0 (extent 4) does not broadcast to result extent 3}}
  %0 = aten.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @add_wrong_result(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{rhs dimension 1 (extent 3) does not broadcast to result extent 1}}
  %0 = aten.add %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @div_integer(%a: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{true division needs a floating-point result}}
  %0 = aten.div %a, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @mm_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{contraction extents differ: 8 vs 7}}
  %0 = aten.mm %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @bmm_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error @+1 {{batch extents differ: 2 vs 3}}
  %0 = aten.bmm %a, %b : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

func.func @view_count(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{element counts differ}}
  %0 = aten.view %a : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @permute_repeat(%a: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dimension 0 appears twice}}
  %0 = aten.permute %a {dims = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @softmax_dim(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = aten.softmax %a {dim = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @sum_shape(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result shape does not match the reduction}}
  %0 = aten.sum %a {dims = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gelu_mode(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %0 = aten.gelu %a {approximate = "fast"} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @expand_bad(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{input dimension 0 (extent 2) does not broadcast to result extent 4}}
  %0 = aten.expand %a : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @layer_norm_stats(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{mean and rstd keep the normalised dims as extent 1}}
  %0, %1, %2 = aten.native_layer_norm %a {normalized_rank = 1 : i64, eps = 1.0e-05 : f64} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0 : tensor<2x4xf32>
}

// -----

func.func @grid_sample_wrong_result(%x: tensor<2x3x5x7xf32>, %g: tensor<2x4x6x2xf32>) -> tensor<2x3x6x4xf32> {
  // expected-error @+1 {{result must be (N, C, <grid's spatial dims>) of the input and grid}}
  %0 = aten.grid_sample %x, %g {interpolation_mode = 0 : i64, padding_mode = 0 : i64,
      align_corners = false} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x6x4xf32>
  return %0 : tensor<2x3x6x4xf32>
}

// -----

func.func @grid_sample_bad_mode(%x: tensor<1x3x5x7xf32>, %g: tensor<1x4x6x2xf32>) -> tensor<1x3x4x6xf32> {
  // expected-error @+1 {{interpolation_mode 5: 0 (bilinear), 1 (nearest) or 2 (bicubic)}}
  %0 = aten.grid_sample %x, %g {interpolation_mode = 5 : i64, padding_mode = 0 : i64,
      align_corners = false} : (tensor<1x3x5x7xf32>, tensor<1x4x6x2xf32>) -> tensor<1x3x4x6xf32>
  return %0 : tensor<1x3x4x6xf32>
}

// -----

func.func @grid_sample_integer(%x: tensor<1x3x5x7xi32>, %g: tensor<1x4x6x2xi32>) -> tensor<1x3x4x6xi32> {
  // expected-error @+1 {{samples floating-point tensors}}
  %0 = aten.grid_sample %x, %g {interpolation_mode = 0 : i64, padding_mode = 0 : i64,
      align_corners = false} : (tensor<1x3x5x7xi32>, tensor<1x4x6x2xi32>) -> tensor<1x3x4x6xi32>
  return %0 : tensor<1x3x4x6xi32>
}

// -----

func.func @grid_sample_3d_bicubic(%x: tensor<1x2x3x4x5xf32>, %g: tensor<1x2x2x2x3xf32>) -> tensor<1x2x2x2x2xf32> {
  // expected-error @+1 {{interpolation_mode 2: 0 (trilinear) or 1 (nearest) in 3-d}}
  %0 = aten.grid_sample %x, %g {interpolation_mode = 2 : i64, padding_mode = 0 : i64,
      align_corners = false} : (tensor<1x2x3x4x5xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x2x2x2x2xf32>
  return %0 : tensor<1x2x2x2x2xf32>
}

// -----

func.func @grid_sample_3d_grid_of_pairs(%x: tensor<1x2x3x4x5xf32>, %g: tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32> {
  // expected-error @+1 {{or a (N, C, D, H, W) input and a (N, D_out, H_out, W_out, 3) grid}}
  %0 = aten.grid_sample %x, %g {interpolation_mode = 0 : i64, padding_mode = 0 : i64,
      align_corners = false} : (tensor<1x2x3x4x5xf32>, tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  return %0 : tensor<1x2x2x2x2xf32>
}

// -----

func.func @quantize_to_float(%x: tensor<4xf32>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{result must have an integer element type}}
  %0 = aten.quantize %x, %s, %zp {quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<4xf32>, tensor<f64>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @quantize_integer_input(%x: tensor<4xi32>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xi8> {
  // expected-error @+1 {{input must be floating point}}
  %0 = aten.quantize %x, %s, %zp {quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<4xi32>, tensor<f64>, tensor<i64>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @quantize_inverted_range(%x: tensor<4xf32>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xi8> {
  // expected-error @+1 {{quant_min 5 is above quant_max 4}}
  %0 = aten.quantize %x, %s, %zp {quant_min = 5 : i64, quant_max = 4 : i64} : (tensor<4xf32>, tensor<f64>, tensor<i64>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @quantize_shape(%x: tensor<4xf32>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<5xi8> {
  // expected-error @+1 {{result shape must equal the input's}}
  %0 = aten.quantize %x, %s, %zp {quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<4xf32>, tensor<f64>, tensor<i64>) -> tensor<5xi8>
  return %0 : tensor<5xi8>
}

// -----

func.func @quantize_per_tensor_vector_scale(%x: tensor<4xf32>, %s: tensor<4xf64>, %zp: tensor<i64>) -> tensor<4xi8> {
  // expected-error @+1 {{per-tensor scale must be 0-d, not rank 1}}
  %0 = aten.quantize %x, %s, %zp {quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<4xf32>, tensor<4xf64>, tensor<i64>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @quantize_axis_out_of_range(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %zp: tensor<4xi64>) -> tensor<2x4xi8> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = aten.quantize %x, %s, %zp {axis = 2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xi64>) -> tensor<2x4xi8>
  return %0 : tensor<2x4xi8>
}

// -----

func.func @quantize_channel_count(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %zp: tensor<2xi64>) -> tensor<2x4xi8> {
  // expected-error @+1 {{per-channel zero_point must be 1-d with 4 entries (input dim 1)}}
  %0 = aten.quantize %x, %s, %zp {axis = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<2xi64>) -> tensor<2x4xi8>
  return %0 : tensor<2x4xi8>
}

// -----

func.func @dequantize_integer_scale(%q: tensor<4xi8>, %s: tensor<i64>, %zp: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{scale must be floating point}}
  %0 = aten.dequantize %q, %s, zero_point %zp : (tensor<4xi8>, tensor<i64>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dequantize_bool(%q: tensor<4xi1>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{input must have an integer element type}}
  %0 = aten.dequantize %q, %s, zero_point %zp : (tensor<4xi1>, tensor<f64>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dequantize_to_integer(%q: tensor<4xi8>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{result must be floating point}}
  %0 = aten.dequantize %q, %s, zero_point %zp : (tensor<4xi8>, tensor<f64>, tensor<i64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @dequantize_per_tensor_without_zero_point(%q: tensor<4xi8>, %s: tensor<f64>) -> tensor<4xf32> {
  // expected-error @+1 {{a per-tensor dequantize needs a zero_point}}
  %0 = aten.dequantize %q, %s : (tensor<4xi8>, tensor<f64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @fake_quantize_result_type(%x: tensor<4xf32>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xf16> {
  // expected-error @+1 {{result type must equal the input's}}
  %0, %1 = aten.fake_quantize %x, %s, %zp {quant_min = 0 : i64, quant_max = 255 : i64} : (tensor<4xf32>, tensor<f64>, tensor<i64>) -> (tensor<4xf16>, tensor<4xi1>)
  return %0 : tensor<4xf16>
}

// -----

func.func @fake_quantize_mask(%x: tensor<4xf32>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xi8> {
  // expected-error @+1 {{mask must be i1 with the input's shape}}
  %0, %1 = aten.fake_quantize %x, %s, %zp {quant_min = 0 : i64, quant_max = 255 : i64} : (tensor<4xf32>, tensor<f64>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi8>)
  return %1 : tensor<4xi8>
}

// -----

func.func @fake_quantize_enabled_shape(%x: tensor<4xf32>, %s: tensor<f64>, %zp: tensor<i64>, %e: tensor<1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{enabled must be a 0-d number}}
  %0, %1 = aten.fake_quantize %x, %s, %zp, enabled %e {quant_min = 0 : i64, quant_max = 255 : i64} : (tensor<4xf32>, tensor<f64>, tensor<i64>, tensor<1xi64>) -> (tensor<4xf32>, tensor<4xi1>)
  return %0 : tensor<4xf32>
}

// -----

func.func @searchsorted_leading_dims(%s: tensor<2x5xf32>, %v: tensor<3x4xf32>) -> tensor<3x4xi64> {
  // expected-error @+1 {{the values must have the sorted sequence's 1 leading dims and one more}}
  %0 = aten.searchsorted %s, %v : (tensor<2x5xf32>, tensor<3x4xf32>) -> tensor<3x4xi64>
  return %0 : tensor<3x4xi64>
}

// -----

func.func @searchsorted_float_result(%s: tensor<5xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the result must have an integer element type}}
  %0 = aten.searchsorted %s, %v : (tensor<5xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @searchsorted_result_shape(%s: tensor<5xf32>, %v: tensor<4xf32>) -> tensor<5xi64> {
  // expected-error @+1 {{the result must have the values' shape}}
  %0 = aten.searchsorted %s, %v : (tensor<5xf32>, tensor<4xf32>) -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @cummax_dim(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dim 2 is out of range}}
  %v, %i = aten.cummax %x {dim = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %v : tensor<2x3xf32>
}

// -----

func.func @cummin_indices(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{indices must be i64}}
  %v, %i = aten.cummin %x {dim = 0 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  return %v : tensor<2x3xf32>
}

// -----

func.func @logcumsumexp_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{the result must be floating point}}
  %0 = aten.logcumsumexp %x {dim = 0 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @complex_logcumsumexp_no_pairs(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{complex parts need a last dim of size 2 after the scanned one}}
  %0 = aten.logcumsumexp %x {complex, dim = 0 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @complex_logcumsumexp_along_pairs(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{the scanned dim of complex parts must come before their last dim}}
  %0 = aten.logcumsumexp %x {complex, dim = 1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @quantize_range_past_type(%x: tensor<4xf32>, %s: tensor<f64>, %zp: tensor<i64>) -> tensor<4xi8> {
  // expected-error @+1 {{[0, 255] does not fit i8}}
  %0 = aten.quantize %x, %s, %zp {quant_min = 0 : i64, quant_max = 255 : i64} : (tensor<4xf32>, tensor<f64>, tensor<i64>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @vector_norm_shape(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result shape does not match the reduction}}
  %0 = aten.vector_norm %x {ord = 2.0 : f64, dims = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @vector_norm_integer(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{needs a floating-point result}}
  %0 = aten.vector_norm %x {ord = 1.0 : f64, dims = array<i64: 1>} : (tensor<2x3xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @group_norm_groups(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{groups 3 must divide the 4 channels}}
  %y, %m, %r = aten.group_norm %x {groups = 3 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<2x4x3xf32>
}

// -----

func.func @group_norm_statistics(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{mean and rstd must be float tensors of shape [2, 2]}}
  %y, %m, %r = aten.group_norm %x {groups = 2 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<2x2xf32>)
  return %y : tensor<2x4x3xf32>
}

// -----

func.func @group_norm_integer(%x: tensor<2x4x3xi32>) -> tensor<2x4x3xi32> {
  // expected-error @+1 {{needs a floating-point (N, C, ...) input}}
  %y, %m, %r = aten.group_norm %x {groups = 2 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x3xi32>) -> (tensor<2x4x3xi32>, tensor<2x2xf32>, tensor<2x2xf32>)
  return %y : tensor<2x4x3xi32>
}

// -----

func.func @batch_stats_norm_weight(%x: tensor<2x4x3xf32>, %w: tensor<3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{weight must be a 1-d float tensor of the 4 channels}}
  %y, %m, %r = aten.batch_stats_norm %x weight %w {eps = 1.0e-5 : f64}
      : (tensor<2x4x3xf32>, tensor<3xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<2x4x3xf32>
}

// -----

func.func @batch_stats_norm_result(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf16> {
  // expected-error @+1 {{result must have the input's type}}
  %y, %m, %r = aten.batch_stats_norm %x {eps = 1.0e-5 : f64}
      : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf16>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<2x4x3xf16>
}

// -----

func.func @trilinear_rank(%a: tensor<4x3xf32>, %w: tensor<1x6x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{i1, i2 and i3 must have one rank}}
  %0 = aten.trilinear %a, %w, %b {sumdim = array<i64: 2>}
      : (tensor<4x3xf32>, tensor<1x6x3xf32>, tensor<4x1x1xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @trilinear_broadcast(%a: tensor<4x1x3xf32>, %w: tensor<1x6x2xf32>, %b: tensor<4x1x1xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{do not broadcast at dim 2}}
  %0 = aten.trilinear %a, %w, %b {sumdim = array<i64: 2>}
      : (tensor<4x1x3xf32>, tensor<1x6x2xf32>, tensor<4x1x1xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @trilinear_sumdim(%a: tensor<4x1x3xf32>, %w: tensor<1x6x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{sumdim must be distinct ascending dims in [0, 3)}}
  %0 = aten.trilinear %a, %w, %b {sumdim = array<i64: 2, 1>}
      : (tensor<4x1x3xf32>, tensor<1x6x3xf32>, tensor<4x1x1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @trilinear_result(%a: tensor<4x1x3xf32>, %w: tensor<1x6x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<4x6x3xf32> {
  // expected-error @+1 {{result must be the broadcast shape without the summed dims}}
  %0 = aten.trilinear %a, %w, %b {sumdim = array<i64: 2>}
      : (tensor<4x1x3xf32>, tensor<1x6x3xf32>, tensor<4x1x1xf32>) -> tensor<4x6x3xf32>
  return %0 : tensor<4x6x3xf32>
}

// -----

func.func @trilinear_types(%a: tensor<4x1x3xf16>, %w: tensor<1x6x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{i1, i2, i3 and the result share their element type}}
  %0 = aten.trilinear %a, %w, %b {sumdim = array<i64: 2>}
      : (tensor<4x1x3xf16>, tensor<1x6x3xf32>, tensor<4x1x1xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @lu_factor_rectangular_pivots(%a: tensor<2x3x4xf32>) -> tensor<2x4xi64> {
  // expected-error @+1 {{pivots must be (B, min(m, n)) i64}}
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x4xi64>, tensor<2x1xi1>)
  return %pivots : tensor<2x4xi64>
}

// -----

func.func @lu_factor_pivots(%a: tensor<2x3x3xf32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{pivots must be (B, min(m, n)) i64}}
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2x1xi1>)
  return %pivots : tensor<2x3xi32>
}

// -----

func.func @lu_factor_odd(%a: tensor<2x3x3xf32>) -> tensor<2xi1> {
  // expected-error @+1 {{odd must be (B, 1) i1}}
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi64>, tensor<2xi1>)
  return %odd : tensor<2xi1>
}

// -----

func.func @lu_factor_order(%a: tensor<1x513x513xf32>) -> tensor<1x513xi64> {
  // expected-error @+1 {{needs N >= 1 matrices with 1 <= m, n <= 512}}
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<1x513x513xf32>) -> (tensor<1x513x513xf32>, tensor<1x513xi64>, tensor<1x1xi1>)
  return %pivots : tensor<1x513xi64>
}

// -----

// A trailing dim other than 2 is not complex pairs.
func.func @lu_factor_not_pairs(%a: tensor<2x3x3x3xf32>) -> tensor<2x3xi64> {
  // expected-error @+1 {{takes a (N, m, n) batch of f32 or f64 matrices, or (N, m, n, 2) of complex pairs}}
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3x3xf32>) -> (tensor<2x3x3x3xf32>, tensor<2x3xi64>, tensor<2x1xi1>)
  return %pivots : tensor<2x3xi64>
}

// -----

// The pivots of complex pairs count the matrices' rows, not the pairs.
func.func @lu_factor_complex_pivots(%a: tensor<2x3x3x2xf32>) -> tensor<2x2xi64> {
  // expected-error @+1 {{pivots must be (B, min(m, n)) i64}}
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3x2xf32>) -> (tensor<2x3x3x2xf32>, tensor<2x2xi64>, tensor<2x1xi1>)
  return %pivots : tensor<2x2xi64>
}

// -----

func.func @lu_factor_complex_result(%a: tensor<2x3x3x2xf32>) -> tensor<2x3x3xf32> {
  // expected-error @+1 {{lu must have the input's type}}
  %lu, %pivots, %odd = aten.lu_factor %a
      : (tensor<2x3x3x2xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi64>, tensor<2x1xi1>)
  return %lu : tensor<2x3x3xf32>
}

// -----

func.func @cholesky_complex_square(%a: tensor<1x3x4x2xf64>) -> tensor<1x1xi64> {
  // expected-error @+1 {{takes a (N, n, n) batch of f32 or f64 matrices, or (N, n, n, 2) of complex pairs}}
  %l, %info = aten.cholesky %a : (tensor<1x3x4x2xf64>) -> (tensor<1x3x4x2xf64>, tensor<1x1xi64>)
  return %info : tensor<1x1xi64>
}

// -----

// A complex triangular solve takes a right-hand side of pairs.
func.func @triangular_solve_complex_rhs(%a: tensor<1x3x3x2xf32>, %b: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  // expected-error @+1 {{rhs must be (N, n, k, 2) pairs of a's element type, k >= 1}}
  %x = aten.triangular_solve %a, %b : (tensor<1x3x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  return %x : tensor<1x3x2xf32>
}

// -----

// Ops without a complex form refuse pairs.
func.func @linalg_solve_complex_pairs(%a: tensor<1x2x2x2xf32>, %b: tensor<1x2x1xf32>) -> tensor<1x2x1xf32> {
  // expected-error @+1 {{takes a (N, n, n) batch of f32 or f64 matrices}}
  %x = aten.linalg_solve %a, %b : (tensor<1x2x2x2xf32>, tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
  return %x : tensor<1x2x1xf32>
}

// -----

func.func @linalg_solve_rhs_rows(%a: tensor<2x3x3xf32>, %b: tensor<2x4x1xf32>) -> tensor<2x4x1xf32> {
  // expected-error @+1 {{rhs must be (N, n, k) of a's element type, k >= 1}}
  %x = aten.linalg_solve %a, %b : (tensor<2x3x3xf32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  return %x : tensor<2x4x1xf32>
}

// -----

func.func @linalg_solve_integer(%a: tensor<1x2x2xi32>, %b: tensor<1x2x1xi32>) -> tensor<1x2x1xi32> {
  // expected-error @+1 {{takes a (N, n, n) batch of f32 or f64 matrices}}
  %x = aten.linalg_solve %a, %b : (tensor<1x2x2xi32>, tensor<1x2x1xi32>) -> tensor<1x2x1xi32>
  return %x : tensor<1x2x1xi32>
}

// -----

func.func @triangular_solve_result(%a: tensor<2x3x3xf32>, %b: tensor<2x3x2xf32>) -> tensor<2x3x3xf32> {
  // expected-error @+1 {{result must have rhs's type}}
  %x = aten.triangular_solve %a, %b : (tensor<2x3x3xf32>, tensor<2x3x2xf32>) -> tensor<2x3x3xf32>
  return %x : tensor<2x3x3xf32>
}

// -----

func.func @cholesky_info(%a: tensor<2x3x3xf64>) -> tensor<2x1xi32> {
  // expected-error @+1 {{info must be (N, 1) i64}}
  %l, %info = aten.cholesky %a : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x1xi32>)
  return %info : tensor<2x1xi32>
}

// -----

func.func @cholesky_order(%a: tensor<1x513x513xf32>) -> tensor<1x513x513xf32> {
  // expected-error @+1 {{needs N >= 1 matrices of order n in [1, 512]}}
  %l, %info = aten.cholesky %a : (tensor<1x513x513xf32>) -> (tensor<1x513x513xf32>, tensor<1x1xi64>)
  return %l : tensor<1x513x513xf32>
}

// -----

func.func @matrix_exp_square(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{takes a (N, n, n) batch of f32 or f64 matrices}}
  %e = aten.matrix_exp %a : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %e : tensor<2x3x4xf32>
}

// -----

func.func @matrix_exp_type(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf64> {
  // expected-error @+1 {{result must have the input's type}}
  %e = aten.matrix_exp %a : (tensor<2x3x3xf32>) -> tensor<2x3x3xf64>
  return %e : tensor<2x3x3xf64>
}

// -----

func.func @qr_complete_shape(%a: tensor<1x5x3xf32>) -> tensor<1x5x3xf32> {
  // expected-error @+1 {{q must be (N, m, m)}}
  %q, %r = aten.qr %a {complete} : (tensor<1x5x3xf32>) -> (tensor<1x5x3xf32>, tensor<1x3x3xf32>)
  return %q : tensor<1x5x3xf32>
}

// -----

func.func @qr_complex_q_not_pairs(%a: tensor<1x5x3x2xf32>) -> tensor<1x5x3xf32> {
  // expected-error @+1 {{q must be (N, m, min(m, n)) pairs}}
  %q, %r = aten.qr %a : (tensor<1x5x3x2xf32>) -> (tensor<1x5x3xf32>, tensor<1x3x3x2xf32>)
  return %q : tensor<1x5x3xf32>
}

// -----

func.func @geqrf_complex_tau_not_pairs(%a: tensor<1x4x3x2xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{tau must be (N, min(m, n), 2) of the input's element type}}
  %r, %tau = aten.geqrf %a : (tensor<1x4x3x2xf32>) -> (tensor<1x4x3x2xf32>, tensor<1x3xf32>)
  return %tau : tensor<1x3xf32>
}

// -----

func.func @householder_product_complex_tau_not_pairs(%a: tensor<1x4x2x2xf32>, %tau: tensor<1x2xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{tau must be (N, k, 2) of the reflectors' element type with k <= 2}}
  %q = aten.householder_product %a, %tau : (tensor<1x4x2x2xf32>, tensor<1x2xf32>) -> tensor<1x4x2x2xf32>
  return %q : tensor<1x4x2x2xf32>
}

// -----

func.func @ormqr_complex_reflectors_real_other(%a: tensor<1x4x2x2xf32>, %tau: tensor<1x2x2xf32>, %c: tensor<1x4x3xf32>) -> tensor<1x4x3xf32> {
  // expected-error @+1 {{other must be complex pairs exactly when the reflectors are}}
  %y = aten.ormqr %a, %tau, %c : (tensor<1x4x2x2xf32>, tensor<1x2x2xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

func.func @eigvalsh_shape(%a: tensor<2x3x3xf32>) -> tensor<2x3x1xf32> {
  // expected-error @+1 {{result must be (N, n) of the input's element type}}
  %w = aten.eigvalsh %a : (tensor<2x3x3xf32>) -> tensor<2x3x1xf32>
  return %w : tensor<2x3x1xf32>
}

// -----

func.func @svdvals_wide(%a: tensor<1x2x5xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{needs N >= 1 matrices with 1 <= n <= m <= 512}}
  %s = aten.svdvals %a : (tensor<1x2x5xf32>) -> tensor<1x2xf32>
  return %s : tensor<1x2xf32>
}

// -----

func.func @lu_permutation_too_short(%pivots: tensor<2x3xi64>) -> tensor<2x2xi64> {
  // expected-error @+1 {{result must be (B, n) i64 with n >= k}}
  %p = aten.lu_permutation %pivots : (tensor<2x3xi64>) -> tensor<2x2xi64>
  return %p : tensor<2x2xi64>
}

// -----

func.func @householder_product_too_many_reflectors(%a: tensor<1x4x2xf32>, %tau: tensor<1x3xf32>) -> tensor<1x4x2xf32> {
  // expected-error @+1 {{tau must be (N, k) of the reflectors' element type with k <= 2}}
  %q = aten.householder_product %a, %tau : (tensor<1x4x2xf32>, tensor<1x3xf32>) -> tensor<1x4x2xf32>
  return %q : tensor<1x4x2xf32>
}

// -----

func.func @ormqr_other_rows(%a: tensor<1x4x2xf32>, %tau: tensor<1x2xf32>, %c: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  // expected-error @+1 {{other must be (N, m, p) of the reflectors' element type}}
  %y = aten.ormqr %a, %tau, %c : (tensor<1x4x2xf32>, tensor<1x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}

// -----

func.func @lu_permutation_pivots_type(%pivots: tensor<2x3xi32>) -> tensor<2x3xi64> {
  // expected-error @+1 {{pivots must be (B, k) i64}}
  %p = aten.lu_permutation %pivots : (tensor<2x3xi32>) -> tensor<2x3xi64>
  return %p : tensor<2x3xi64>
}

// -----

func.func @eigh_vectors_shape(%a: tensor<2x3x3xf64>) -> tensor<2x3x1xf64> {
  // expected-error @+1 {{eigenvectors must be (N, n, n) of the input's element type}}
  %w, %v = aten.eigh %a : (tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3x1xf64>)
  return %v : tensor<2x3x1xf64>
}

// -----

func.func @svd_complete_u(%a: tensor<1x5x2xf32>) -> tensor<1x5x2xf32> {
  // expected-error @+1 {{u must be (N, m, m) of the input's element type}}
  %u, %s, %v = aten.svd %a {complete} : (tensor<1x5x2xf32>) -> (tensor<1x5x2xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>)
  return %u : tensor<1x5x2xf32>
}

// -----

func.func @svd_wide(%a: tensor<1x2x5xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{needs N >= 1 matrices with 1 <= n <= m <= 512}}
  %u, %s, %v = aten.svd %a : (tensor<1x2x5xf32>) -> (tensor<1x2x2xf32>, tensor<1x2xf32>, tensor<1x5x5xf32>)
  return %s : tensor<1x2xf32>
}

// -----

func.func @histc_range(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{min and max must be finite with min <= max}}
  %h = aten.histc %x {bins = 4 : i64, min = 2.0 : f64, max = 1.0 : f64} : (tensor<8xf32>) -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func @histc_bins(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result must be (bins) with bins >= 1}}
  %h = aten.histc %x {bins = 5 : i64, min = 0.0 : f64, max = 1.0 : f64} : (tensor<8xf32>) -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func @histc_integer(%x: tensor<8xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{counts floating-point elements in their own type}}
  %h = aten.histc %x {bins = 4 : i64, min = 0.0 : f64, max = 1.0 : f64} : (tensor<8xi32>) -> tensor<4xi32>
  return %h : tensor<4xi32>
}

// -----

func.func @group_norm_empty(%x: tensor<0x4x3xf32>) -> tensor<0x4x3xf32> {
  // expected-error @+1 {{needs an input with elements}}
  %y, %m, %r = aten.group_norm %x {groups = 2 : i64, eps = 1.0e-5 : f64}
      : (tensor<0x4x3xf32>) -> (tensor<0x4x3xf32>, tensor<0x2xf32>, tensor<0x2xf32>)
  return %y : tensor<0x4x3xf32>
}

// -----

func.func @trilinear_empty(%a: tensor<4x1x0xf32>, %w: tensor<1x6x0xf32>, %b: tensor<4x1x1xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{needs inputs with elements}}
  %0 = aten.trilinear %a, %w, %b {sumdim = array<i64: 2>}
      : (tensor<4x1x0xf32>, tensor<1x6x0xf32>, tensor<4x1x1xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @adaptive_pool_dims(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32> {
  // expected-error @+1 {{pools 1 to 3 dims, not 4}}
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 4 : i64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

func.func @adaptive_pool_rank(%x: tensor<6x6xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{input and result need one rank, 3 or 4}}
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 2 : i64} : (tensor<6x6xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @adaptive_pool_rank_high(%x: tensor<1x2x3x6xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+1 {{input and result need one rank, 2 or 3}}
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 1 : i64} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @adaptive_pool_lead(%x: tensor<1x4x6x6xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+1 {{the dims before the pooled ones must be kept}}
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 2 : i64} : (tensor<1x4x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @adaptive_pool_empty(%x: tensor<1x4x0x6xf32>) -> tensor<1x4x3x3xf32> {
  // expected-error @+1 {{pooled dims need non-empty input and result extents}}
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 2 : i64} : (tensor<1x4x0x6xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

func.func @adaptive_avg_pool_uneven_int(%x: tensor<1x5xi32>) -> tensor<1x3xi32> {
  // expected-error @+1 {{averages uneven windows of floating-point tensors only}}
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 1 : i64} : (tensor<1x5xi32>) -> tensor<1x3xi32>
  return %0 : tensor<1x3xi32>
}

// -----

func.func @adaptive_pool_table(%x: tensor<1x33554431xf32>) -> tensor<1x16777216xf32> {
  // expected-error @+1 {{uneven windows need gather tables of at most 16777216 entries}}
  %0 = aten.adaptive_avg_pool %x {pooled_dims = 1 : i64} : (tensor<1x33554431xf32>) -> tensor<1x16777216xf32>
  return %0 : tensor<1x16777216xf32>
}

// -----

func.func @adaptive_max_pool_bool(%x: tensor<1x6xi1>) -> (tensor<1x3xi1>, tensor<1x3xi64>) {
  // expected-error @+1 {{needs a numeric tensor, not bool}}
  %v, %i = aten.adaptive_max_pool %x {pooled_dims = 1 : i64} : (tensor<1x6xi1>) -> (tensor<1x3xi1>, tensor<1x3xi64>)
  return %v, %i : tensor<1x3xi1>, tensor<1x3xi64>
}

// -----

func.func @adaptive_max_pool_indices(%x: tensor<1x6xf32>) -> (tensor<1x3xf32>, tensor<1x3xi32>) {
  // expected-error @+1 {{indices are i64 with the values' shape}}
  %v, %i = aten.adaptive_max_pool %x {pooled_dims = 1 : i64} : (tensor<1x6xf32>) -> (tensor<1x3xf32>, tensor<1x3xi32>)
  return %v, %i : tensor<1x3xf32>, tensor<1x3xi32>
}

// -----

func.func @adaptive_max_pool_type(%x: tensor<1x6xf32>) -> (tensor<1x3xf16>, tensor<1x3xi64>) {
  // expected-error @+1 {{keeps the input's element type}}
  %v, %i = aten.adaptive_max_pool %x {pooled_dims = 1 : i64} : (tensor<1x6xf32>) -> (tensor<1x3xf16>, tensor<1x3xi64>)
  return %v, %i : tensor<1x3xf16>, tensor<1x3xi64>
}

// -----

func.func @embedding_bag_mode(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{mode 3 is not 0 (sum), 1 (mean) or 2 (max)}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 3 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_weight(%w: tensor<10x3xi64>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xi64> {
  // expected-error @+1 {{weight must be a 2-d floating-point tensor}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xi64>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xi64>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xi64>
}

// -----

func.func @embedding_bag_indices(%w: tensor<10x3xf32>, %i: tensor<5xf32>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{indices and offsets must be 1-d integer tensors}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xf32>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_padding(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{padding_idx 10 is outside the weight's 10 rows}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 1 : i64, include_last_offset = false, padding_idx = 10 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_per_sample_mode(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>, %p: tensor<5xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{per_sample_weights are only defined for mode sum}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o per_sample_weights %p {mode = 1 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<5xf32>) -> (tensor<2x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_per_sample_type(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>, %p: tensor<5xf64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{per_sample_weights must have one entry per index, in the weight's type}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o per_sample_weights %p {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<5xf64>) -> (tensor<2x3xf32>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_result(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<3xi64>) -> tensor<3x3xf32> {
  // expected-error @+1 {{result must be (2, 3) in the weight's type}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = true, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<3xi64>) -> (tensor<3x3xf32>, tensor<0xi64>, tensor<3xi64>, tensor<3xi64>)
  return %r : tensor<3x3xf32>
}

// -----

func.func @embedding_bag_offset2bag(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{offset2bag must have 5 entries}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 2 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<0xi64>, tensor<2xi64>, tensor<2x3xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_offset2bag_sum(%w: tensor<10x3xf64>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf64> {
  // expected-error @+1 {{offset2bag must have 0 or 5 entries}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf64>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf64>, tensor<3xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf64>
}

// -----

func.func @embedding_bag_bag_size(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{bag_size must have 2 entries}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<0xi64>, tensor<3xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_max_indices(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{max_indices must be (bags, columns)}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 2 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_empty(%w: tensor<10x3xf32>, %i: tensor<0xi64>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{needs at least one index and one bag}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<0xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<0xi64>, tensor<2xi64>, tensor<2xi64>)
  return %r : tensor<2x3xf32>
}

// -----

func.func @embedding_bag_window(%w: tensor<10x65536xf32>, %i: tensor<1024xi64>, %o: tensor<2xi64>) -> tensor<2x65536xf32> {
  // expected-error @+1 {{max mode needs at most 67108864 (bag, index, column) triples}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 2 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x65536xf32>, tensor<1024xi64>, tensor<2xi64>) -> (tensor<2x65536xf32>, tensor<1024xi64>, tensor<2xi64>, tensor<2x65536xi64>)
  return %r : tensor<2x65536xf32>
}

// -----

func.func @embedding_renorm_self(%w: tensor<10xf32>, %i: tensor<2xi64>) -> tensor<10xf32> {
  // expected-error @+1 {{self must be a 2-d floating-point tensor}}
  %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<10xf32>, tensor<2xi64>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

func.func @embedding_renorm_indices(%w: tensor<10x3xf32>, %i: tensor<2xi1>) -> tensor<10x3xf32> {
  // expected-error @+1 {{indices must be an integer tensor}}
  %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<10x3xf32>, tensor<2xi1>) -> tensor<10x3xf32>
  return %0 : tensor<10x3xf32>
}

// -----

func.func @embedding_renorm_result(%w: tensor<10x3xf32>, %i: tensor<2xi64>) -> tensor<10x3xf64> {
  // expected-error @+1 {{result must have self's type}}
  %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<10x3xf32>, tensor<2xi64>) -> tensor<10x3xf64>
  return %0 : tensor<10x3xf64>
}

// -----

func.func @max_pool_backward_result(%dy: tensor<1x2x2x2xf32>, %x: tensor<1x2x4x4xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf64> {
  // expected-error @+1 {{result must have self's type}}
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf64>
  return %0 : tensor<1x2x4x4xf64>
}

// -----

func.func @max_pool_backward_indices(%dy: tensor<1x2x2x2xf32>, %x: tensor<1x2x4x4xf32>, %i: tensor<1x2x2x2xi32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{grad_output has self's element type and i64 indices its shape}}
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xi32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @max_pool_backward_attrs(%dy: tensor<1x2x2x2xf32>, %x: tensor<1x2x4x4xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{kernel, stride, padding and dilation need 1 to 3 entries each, the same number}}
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @max_pool_backward_rank(%dy: tensor<2x2xf32>, %x: tensor<4x4xf32>, %i: tensor<2x2xi64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{self and grad_output need rank 3 or 4 and the same leading dims}}
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<2x2xf32>, tensor<4x4xf32>, tensor<2x2xi64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @max_pool_backward_padding(%dy: tensor<1x2x3x3xf32>, %x: tensor<1x2x4x4xf32>, %i: tensor<1x2x3x3xi64>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{spatial dim 0: invalid kernel/stride/padding/dilation}}
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 2, 0>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x3x3xf32>, tensor<1x2x4x4xf32>, tensor<1x2x3x3xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @max_pool_backward_extent(%dy: tensor<1x2x3x2xf32>, %x: tensor<1x2x4x4xf32>, %i: tensor<1x2x3x2xi64>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{spatial dim 0: grad_output extent 3 does not match the window}}
  %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
      : (tensor<1x2x3x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x3x2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @embedding_bag_last_offset(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<0xi64>) -> tensor<0x3xf32> {
  // expected-error @+1 {{include_last_offset needs at least one offset}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = true, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<5xi64>, tensor<0xi64>) -> (tensor<0x3xf32>, tensor<0xi64>, tensor<0xi64>, tensor<0xi64>)
  return %r : tensor<0x3xf32>
}

// -----

func.func @embedding_bag_pairs(%w: tensor<10x3xf32>, %i: tensor<8192xi64>, %o: tensor<4096xi64>) -> tensor<4096x3xf32> {
  // expected-error @+1 {{needs at most 16777216 (bag, index) pairs}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<10x3xf32>, tensor<8192xi64>, tensor<4096xi64>) -> (tensor<4096x3xf32>, tensor<0xi64>, tensor<4096xi64>, tensor<4096xi64>)
  return %r : tensor<4096x3xf32>
}

// -----

func.func @embedding_bag_rows(%w: tensor<1x549755813888xf32>, %i: tensor<8388608xi64>, %o: tensor<1xi64>) -> tensor<1x549755813888xf32> {
  // expected-error @+1 {{needs at most 1099511627776 gathered (index, column) elements}}
  %r, %a, %b, %c = aten.embedding_bag %w, %i, %o {mode = 0 : i64, include_last_offset = false, padding_idx = -1 : i64}
      : (tensor<1x549755813888xf32>, tensor<8388608xi64>, tensor<1xi64>) -> (tensor<1x549755813888xf32>, tensor<0xi64>, tensor<1xi64>, tensor<1xi64>)
  return %r : tensor<1x549755813888xf32>
}

// -----

func.func @convolution_backward_rank(%dy: tensor<4x8xf32>, %x: tensor<2x8xf32>, %w: tensor<4x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{grad_output, input and weight need one rank, 3 to 5}}
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64>, padding = array<i64>, dilation = array<i64>, groups = 1 : i64, output_mask = array<i1: true, true, true>}
      : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<4x2xf32>) -> (tensor<2x8xf32>, tensor<4x2xf32>, tensor<4xf32>)
  return %db : tensor<4xf32>
}

// -----

func.func @convolution_backward_groups(%dy: tensor<2x4x8x8xf32>, %x: tensor<2x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{grad_output, input, weight and groups do not agree}}
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64, output_mask = array<i1: true, true, true>}
      : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x1x3x3xf32>) -> (tensor<2x3x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>)
  return %db : tensor<4xf32>
}

// -----

func.func @convolution_backward_extent(%dy: tensor<2x4x4x4xf32>, %x: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{spatial dim 0: grad_output extent 4 is not the forward's}}
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, output_mask = array<i1: true, true, true>}
      : (tensor<2x4x4x4xf32>, tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  return %db : tensor<4xf32>
}

// -----

func.func @convolution_backward_types(%dy: tensor<2x4x8x8xf32>, %x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{the gradients have the input's, the weight's and (C_out) types}}
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, output_mask = array<i1: true, true, true>}
      : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf16>)
  return %db : tensor<4xf16>
}

// -----

func.func @convolution_backward_too_many_groups(%dy: tensor<3x0x8x8xf32>, %x: tensor<3x0x8x8xf32>, %w: tensor<0x0x3x3xf32>) -> tensor<0xf32> {
  // expected-error @+1 {{grad_output, input, weight and groups do not agree}}
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4611686018427387904 : i64, output_mask = array<i1: false, true, false>}
      : (tensor<3x0x8x8xf32>, tensor<3x0x8x8xf32>, tensor<0x0x3x3xf32>) -> (tensor<3x0x8x8xf32>, tensor<0x0x3x3xf32>, tensor<0xf32>)
  return %db : tensor<0xf32>
}

// -----

func.func @convolution_backward_huge_padding(%dy: tensor<1x1x3xf32>, %x: tensor<1x1x1xf32>, %w: tensor<1x1x1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{spatial dim 0: invalid stride/padding/dilation}}
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 4611686018427387904>, padding = array<i64: 4611686018427387904>, dilation = array<i64: 1>, groups = 1 : i64, output_mask = array<i1: false, true, false>}
      : (tensor<1x1x3xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> (tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1xf32>)
  return %db : tensor<1xf32>
}

// -----

func.func @layer_norm_integer_statistics(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x1xi32>, tensor<2x1xi32>) {
  // expected-error @+1 {{mean and rstd must be floating-point}}
  %0, %1, %2 = aten.native_layer_norm %x {normalized_rank = 1 : i64, eps = 1.0e-05 : f64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x1xi32>, tensor<2x1xi32>)
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x1xi32>, tensor<2x1xi32>
}

// -----

func.func @as_strided_rank(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{has 1 strides for a rank-2 result}}
  %0 = aten.as_strided %x {stride = array<i64: 1>, storage_offset = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @as_strided_negative_stride(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{stride -1 is negative}}
  %0 = aten.as_strided %x {stride = array<i64: -1, 1>, storage_offset = 4 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @as_strided_negative_offset(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{storage_offset -1 is negative}}
  %0 = aten.as_strided %x {stride = array<i64: 1, 1>, storage_offset = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @as_strided_past_self(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{reads past the 6 elements of self}}
  %0 = aten.as_strided %x {stride = array<i64: 3, 1>, storage_offset = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @as_strided_past_int64(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{reads past the 6 elements of self}}
  %0 = aten.as_strided %x {stride = array<i64: 9223372036854775807, 9223372036854775807>, storage_offset = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @as_strided_element(%x: tensor<2x3xf32>) -> tensor<2x2xf64> {
  // expected-error @+1 {{result element type must be self's}}
  %0 = aten.as_strided %x {stride = array<i64: 1, 1>, storage_offset = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}

// -----

func.func @repeat_too_few(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{has 1 repeats for a rank-2 self}}
  %0 = aten.repeat %x {repeats = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @repeat_zero(%x: tensor<2x3xf32>) -> tensor<0x3xf32> {
  // expected-error @+1 {{repeat count 0 of dim 0 is below 1}}
  %0 = aten.repeat %x {repeats = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

func.func @repeat_shape(%x: tensor<2x3xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{result dim 2 must be 1 * 3}}
  %0 = aten.repeat %x {repeats = array<i64: 2, 2, 1>} : (tensor<2x3xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @repeat_element(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{result element type must be self's}}
  %0 = aten.repeat %x {repeats = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

func.func @flip_dim_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dim 2 is out of range}}
  %0 = aten.flip %x {dims = array<i64: 2>} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @flip_dim_twice(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dim 1 appears twice}}
  %0 = aten.flip %x {dims = array<i64: 1, 1>} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @diagonal_rank(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{self needs rank 2 or more}}
  %0 = aten.diagonal %x {offset = 0 : i64, dim1 = 0 : i64, dim2 = 1 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @diagonal_same_dims(%x: tensor<3x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{dim1 1 and dim2 1 must be distinct dims of self}}
  %0 = aten.diagonal %x {offset = 0 : i64, dim1 = 1 : i64, dim2 = 1 : i64} : (tensor<3x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @diagonal_length(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  // An offset of 3 leaves 2 elements: (0, 3) and (1, 4).
  // expected-error @+1 {{result shape must be self's other dims, then the diagonal's length}}
  %0 = aten.diagonal %x {offset = 3 : i64, dim1 = 0 : i64, dim2 = 1 : i64} : (tensor<3x5xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @diagonal_element_type(%x: tensor<3x3xf32>) -> tensor<3xf64> {
  // expected-error @+1 {{cannot change the element type}}
  %0 = aten.diagonal %x {offset = 0 : i64, dim1 = 0 : i64, dim2 = 1 : i64} : (tensor<3x3xf32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

func.func @arange_infinite_step() -> tensor<3xf32> {
  // expected-error @+1 {{start and step must be finite}}
  %0 = aten.arange {start = 0.0 : f64, step = 0x7FF0000000000000 : f64} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @convolution_backward_uncut_gradient(%dy: tensor<2x1x1xf32>, %x: tensor<2x1x1xf32>, %w: tensor<1x1x1xf32>) -> tensor<2x1x1xf32> {
  // Padding 2^39 - 1 past a 1-wide kernel: the transposed convolution's
  // uncut output is 2 x 1 x (2^40 - 1) elements.
  // expected-error @+1 {{the input gradient's uncut extents pass 1099511627776 elements}}
  %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1099511627776>, padding = array<i64: 549755813887>, dilation = array<i64: 1>, groups = 1 : i64, output_mask = array<i1: true, false, false>}
      : (tensor<2x1x1xf32>, tensor<2x1x1xf32>, tensor<1x1x1xf32>) -> (tensor<2x1x1xf32>, tensor<1x1x1xf32>, tensor<1xf32>)
  return %dx : tensor<2x1x1xf32>
}

// -----

func.func @pad_crop_past_the_dim(%x: tensor<3x5xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{dim 1 crops more than its 5 elements}}
  %0 = aten.pad %x {low = array<i64: 0, -6>, high = array<i64: 0, 4>, value = 0.0 : f64} : (tensor<3x5xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @nonzero_static_rows(%x: tensor<4x5xf32>) -> tensor<3x2xi64> {
  // expected-error @+1 {{result must be tensor<?x2xi64>}}
  %0 = aten.nonzero %x : (tensor<4x5xf32>) -> tensor<3x2xi64>
  return %0 : tensor<3x2xi64>
}

// -----

func.func @nonzero_columns(%x: tensor<4x5xf32>) -> tensor<?x3xi64> {
  // expected-error @+1 {{result must be tensor<?x2xi64>}}
  %0 = aten.nonzero %x : (tensor<4x5xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

func.func @boolean_mask_not_bool(%x: tensor<4x5xf32>, %m: tensor<4xi8>) -> tensor<?x5xf32> {
  // expected-error @+1 {{mask must be a boolean (i1) tensor}}
  %0 = aten.boolean_mask %x, %m : (tensor<4x5xf32>, tensor<4xi8>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

func.func @boolean_mask_not_leading(%x: tensor<4x5xf32>, %m: tensor<5xi1>) -> tensor<?x5xf32> {
  // expected-error @+1 {{mask's shape must be self's leading dims}}
  %0 = aten.boolean_mask %x, %m : (tensor<4x5xf32>, tensor<5xi1>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

func.func @boolean_mask_result(%x: tensor<4x5xf32>, %m: tensor<4xi1>) -> tensor<?xf32> {
  // expected-error @+1 {{result must be 'tensor<?x5xf32>'}}
  %0 = aten.boolean_mask %x, %m : (tensor<4x5xf32>, tensor<4xi1>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @unique_static_values(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{values must be 'tensor<?xf32>'}}
  %v, %i, %c = aten.unique %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<?xi64>)
  return %v : tensor<4xf32>
}

// -----

func.func @unique_inverse_shape(%x: tensor<2x2xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{inverse must be 'tensor<2x2xi64>'}}
  %v, %i, %c = aten.unique %x : (tensor<2x2xf32>) -> (tensor<?xf32>, tensor<4xi64>, tensor<?xi64>)
  return %i : tensor<4xi64>
}

// -----

func.func @unique_of_nothing(%x: tensor<0xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{self must have elements}}
  %v, %i, %c = aten.unique %x : (tensor<0xf32>) -> (tensor<?xf32>, tensor<0xi64>, tensor<?xi64>)
  return %v : tensor<?xf32>
}

// -----

func.func @unique_dim_out_of_range(%x: tensor<2x2xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %v, %i, %c = aten.unique_dim %x {dim = 2 : i64} : (tensor<2x2xf32>) -> (tensor<2x?xf32>, tensor<2xi64>, tensor<?xi64>)
  return %v : tensor<2x?xf32>
}

// -----

func.func @unique_dim_values_dim(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{values must be 'tensor<2x?xf32>'}}
  %v, %i, %c = aten.unique_dim %x {dim = 1 : i64} : (tensor<2x3xf32>) -> (tensor<?x3xf32>, tensor<3xi64>, tensor<?xi64>)
  return %v : tensor<?x3xf32>
}

// -----

func.func @unique_dim_inverse_per_element(%x: tensor<2x3xf32>) -> tensor<2x3xi64> {
  // expected-error @+1 {{inverse must be 'tensor<3xi64>'}}
  %v, %i, %c = aten.unique_dim %x {dim = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2x?xf32>, tensor<2x3xi64>, tensor<?xi64>)
  return %i : tensor<2x3xi64>
}

// -----

func.func @histogramdd_edges_per_coordinate(%x: tensor<5x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{hist must have one dim, and bin_edges one tensor, per coordinate (2)}}
  %h, %e0 = aten.histogramdd %x : (tensor<5x2xf32>) -> (tensor<3x2xf32>, tensor<4xf32>)
  return %h : tensor<3x2xf32>
}

// -----

func.func @histogramdd_range_per_coordinate(%x: tensor<5x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{range must be (lo, hi) per coordinate}}
  %h, %e0, %e1 = aten.histogramdd %x {range = array<f64: 0.0, 1.0>} : (tensor<5x2xf32>) -> (tensor<3x2xf32>, tensor<4xf32>, tensor<3xf32>)
  return %h : tensor<3x2xf32>
}

// -----

func.func @bincount_of_floats(%x: tensor<4xf32>) -> tensor<?xi64> {
  // expected-error @+1 {{self must be a 1-D integer tensor}}
  %0 = aten.bincount %x {capacity = 4 : i64, minlength = 0 : i64} : (tensor<4xf32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @bincount_f16_weights(%x: tensor<4xi64>, %w: tensor<4xf16>) -> tensor<?xf64> {
  // expected-error @+1 {{weights must be f32 or f64}}
  %0 = aten.bincount %x, %w {capacity = 4 : i64, minlength = 0 : i64} : (tensor<4xi64>, tensor<4xf16>) -> tensor<?xf64>
  return %0 : tensor<?xf64>
}

// -----

func.func @bincount_counts_as_floats(%x: tensor<4xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{result must be 'tensor<?xi64>'}}
  %0 = aten.bincount %x {capacity = 4 : i64, minlength = 0 : i64} : (tensor<4xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @bincount_capacity_below_minlength(%x: tensor<4xi64>) -> tensor<?xi64> {
  // expected-error @+1 {{capacity must be at least minlength}}
  %0 = aten.bincount %x {capacity = 2 : i64, minlength = 3 : i64} : (tensor<4xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @repeat_interleave_float(%r: tensor<3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{repeats must be a 1-D integer tensor}}
  %0 = aten.repeat_interleave %r {capacity = 4 : i64} : (tensor<3xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @repeat_interleave_type(%r: tensor<3xi32>) -> tensor<?xi64> {
  // expected-error @+1 {{result must be a 1-D tensor of repeats' type}}
  %0 = aten.repeat_interleave %r {capacity = 4 : i64} : (tensor<3xi32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @repeat_interleave_static_capacity(%r: tensor<3xi64>) -> tensor<5xi64> {
  // expected-error @+1 {{a static result holds capacity (4) elements}}
  %0 = aten.repeat_interleave %r {capacity = 4 : i64} : (tensor<3xi64>) -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @cdist_widths(%a: tensor<4x3xf32>, %b: tensor<5x2xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{x1 and x2 must be (batch..., rows, M) with the same batch dims and M}}
  %0 = aten.cdist %a, %b {p = 2.0 : f64} : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @cdist_mm_p1(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{use_mm is for p = 2}}
  %0 = aten.cdist %a, %b {p = 1.0 : f64, use_mm} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @cdist_negative_p(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{p must be a non-negative number}}
  %0 = aten.cdist %a, %b {p = -1.0 : f64} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @upsample_separable_mode(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{mode 'nearest' is not bilinear or bicubic}}
  %0 = aten.upsample_separable %x {mode = "nearest", antialias = true, align_corners = false} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @upsample_separable_channels(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{needs (N, C, H, W) into (N, C, H_out, W_out)}}
  %0 = aten.upsample_separable %x {mode = "bilinear", antialias = true, align_corners = false} : (tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @eigvals_parts(%a: tensor<2x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{real and imag must be (N, n) of the input's element type}}
  %re, %im = aten.eigvals %a : (tensor<2x3x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf64>)
  return %re : tensor<2x3xf32>
}

// -----

func.func @eigvals_square(%a: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{takes a (N, n, n) batch of f32 or f64 matrices, or (N, n, n, 2) of complex pairs}}
  %re, %im = aten.eigvals %a : (tensor<2x3x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %re : tensor<2x3xf32>
}

// -----

func.func @eigvals_complex_parts(%a: tensor<2x3x3x2xf32>) -> tensor<2x3x2xf32> {
  // expected-error @+1 {{real and imag must be (N, n) of the input's element type}}
  %re, %im = aten.eigvals %a : (tensor<2x3x3x2xf32>) -> (tensor<2x3x2xf32>, tensor<2x3xf32>)
  return %re : tensor<2x3x2xf32>
}

// -----

func.func @eigvals_not_pairs(%a: tensor<2x3x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{takes a (N, n, n) batch of f32 or f64 matrices, or (N, n, n, 2) of complex pairs}}
  %re, %im = aten.eigvals %a : (tensor<2x3x3x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %re : tensor<2x3xf32>
}

// -----

func.func @eig_complex_vectors(%a: tensor<1x3x3x2xf64>) -> tensor<1x3xf64> {
  // expected-error @+1 {{vectors_real and vectors_imag must be (N, n, n) of the input's element type}}
  %re, %im, %vr, %vi = aten.eig %a : (tensor<1x3x3x2xf64>) -> (tensor<1x3xf64>, tensor<1x3xf64>, tensor<1x3x3x2xf64>, tensor<1x3x3xf64>)
  return %re : tensor<1x3xf64>
}

// -----

func.func @eig_vectors(%a: tensor<2x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{vectors_real and vectors_imag must be (N, n, n) of the input's element type}}
  %re, %im, %vr, %vi = aten.eig %a : (tensor<2x3x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3xf32>)
  return %re : tensor<2x3xf32>
}

// -----

func.func @ldl_factor_pivots(%a: tensor<2x3x3xf32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{pivots must be (B, n) i64}}
  %ld, %pivots, %info = aten.ldl_factor %a
      : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2x1xi64>)
  return %pivots : tensor<2x3xi32>
}

// -----

func.func @ldl_solve_pivots(%ld: tensor<2x3x3xf32>, %p: tensor<2x3xi32>, %b: tensor<2x3x1xf32>) -> tensor<2x3x1xf32> {
  // expected-error @+1 {{pivots must be (N, n) i64}}
  %x = aten.ldl_solve %ld, %p, %b : (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  return %x : tensor<2x3x1xf32>
}

// -----

func.func @upsample_separable_integer(%x: tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32> {
  // expected-error @+1 {{resamples a floating-point tensor, or uint8 values carried in i16, into its own type}}
  %0 = aten.upsample_separable %x {mode = "bilinear", antialias = false, align_corners = false} : (tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32>
  return %0 : tensor<1x1x2x2xi32>
}

// -----

func.func @upsample_separable_empty(%x: tensor<1x1x0x4xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{H, W, H_out and W_out >= 1}}
  %0 = aten.upsample_separable %x {mode = "bilinear", antialias = false, align_corners = false} : (tensor<1x1x0x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @bitcast_width(%x: tensor<4xf32>) -> tensor<4xi16> {
  // expected-error @+1 {{reads integers or floats as another type of the same width}}
  %0 = aten.bitcast %x : (tensor<4xf32>) -> tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

func.func @bitcast_shape(%x: tensor<4xf32>) -> tensor<2x2xi32> {
  // expected-error @+1 {{keeps the shape}}
  %0 = aten.bitcast %x : (tensor<4xf32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

func.func @histogram_range(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<5xf32>) {
  // expected-error @+1 {{range must be two finite numbers, lo <= hi}}
  %h, %e = aten.histogram %x {range = array<f64: 2.0, 1.0>} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<5xf32>)
  return %h, %e : tensor<4xf32>, tensor<5xf32>
}

// -----

func.func @histogram_edges_shape(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{hist must be (bins) with bins >= 1, and bin_edges (bins + 1)}}
  %h, %e = aten.histogram %x : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %h, %e : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @histogram_range_and_edges(%x: tensor<8xf32>, %b: tensor<5xf32>) -> (tensor<4xf32>, tensor<5xf32>) {
  // expected-error @+1 {{takes a range or edges, not both}}
  %h, %e = aten.histogram %x edges %b {range = array<f64: 0.0, 1.0>} : (tensor<8xf32>, tensor<5xf32>) -> (tensor<4xf32>, tensor<5xf32>)
  return %h, %e : tensor<4xf32>, tensor<5xf32>
}

// -----

func.func @histogram_integers(%x: tensor<8xi32>) -> (tensor<4xi32>, tensor<5xi32>) {
  // expected-error @+1 {{counts floating-point elements}}
  %h, %e = aten.histogram %x : (tensor<8xi32>) -> (tensor<4xi32>, tensor<5xi32>)
  return %h, %e : tensor<4xi32>, tensor<5xi32>
}

// -----

func.func @histogram_weight(%x: tensor<8xf32>, %w: tensor<7xf32>) -> (tensor<4xf32>, tensor<5xf32>) {
  // expected-error @+1 {{weight must have the input's shape}}
  %h, %e = aten.histogram %x weight %w : (tensor<8xf32>, tensor<7xf32>) -> (tensor<4xf32>, tensor<5xf32>)
  return %h, %e : tensor<4xf32>, tensor<5xf32>
}

// -----

func.func @fractional_max_pool_fit(%x: tensor<1x2x5x5xf32>, %u: tensor<1x2x2xf32>) -> (tensor<1x2x5x2xf32>, tensor<1x2x5x2xi64>) {
  // expected-error @+1 {{pooled dim 0: output 5 with kernel 2 does not fit an input of 5}}
  %v, %i = aten.fractional_max_pool %x, %u {kernel = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<1x2x2xf32>) -> (tensor<1x2x5x2xf32>, tensor<1x2x5x2xi64>)
  return %v, %i : tensor<1x2x5x2xf32>, tensor<1x2x5x2xi64>
}

// -----

func.func @fractional_max_pool_samples(%x: tensor<1x2x5x5xf32>, %u: tensor<1x2x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
  // expected-error @+1 {{values and samples keep the leading dims; samples have one per pooled dim}}
  %v, %i = aten.fractional_max_pool %x, %u {kernel = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<1x2x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  return %v, %i : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
}

// -----

func.func @fractional_max_pool_one_dim(%x: tensor<2x5xf32>, %u: tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>) {
  // expected-error @+1 {{pools the last 2 or 3 dims}}
  %v, %i = aten.fractional_max_pool %x, %u {kernel = array<i64: 2>} : (tensor<2x5xf32>, tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  return %v, %i : tensor<2x2xf32>, tensor<2x2xi64>
}

// -----

func.func @segment_reduce_kind(%x: tensor<6xf32>, %l: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{reduce must be sum, mean, max, min or prod}}
  %r = aten.segment_reduce %x, %l {reduce = "median", axis = 0 : i64} : (tensor<6xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

func.func @segment_reduce_bounds(%x: tensor<2x6xf32>, %l: tensor<3xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{bounds must have the data's dims before axis, then the segments}}
  %r = aten.segment_reduce %x, %l {reduce = "sum", axis = 1 : i64} : (tensor<2x6xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

func.func @segment_reduce_result(%x: tensor<6xf32>, %o: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{result must be the data's shape with the segments at axis}}
  %r = aten.segment_reduce %x, %o {reduce = "sum", axis = 0 : i64, offsets} : (tensor<6xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

func.func @hermitian_eigenvectors_odd(%v: tensor<1x5x5xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{the embedding's order must be even (2n)}}
  %0 = aten.hermitian_eigenvectors %v : (tensor<1x5x5xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @hermitian_eigenvectors_not_pairs(%v: tensor<1x4x4xf32>) -> tensor<1x2x2xf32> {
  // expected-error @+1 {{the result must be (N, n, n, 2) pairs of the input's element type}}
  %0 = aten.hermitian_eigenvectors %v : (tensor<1x4x4xf32>) -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}

// -----

func.func @complex_singular_vectors_odd(%u: tensor<1x6x5xf32>, %s: tensor<1x5xf32>, %v: tensor<1x5x5xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{v must be a (N, 2n, 2n) batch of f32 or f64, N >= 1, n >= 1}}
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<1x6x5xf32>, tensor<1x5xf32>, tensor<1x5x5xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>)
  return %l, %r : tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

func.func @complex_singular_vectors_short_u(%u: tensor<1x2x4xf32>, %s: tensor<1x4xf32>, %v: tensor<1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{u must be (N, 2m, 2n) or (N, 2m, 2m) of v's element type, m >= n}}
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<1x2x4xf32>, tensor<1x4xf32>, tensor<1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x2x2x2xf32>)
  return %l, %r : tensor<1x1x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

func.func @complex_singular_vectors_left(%u: tensor<1x6x4xf32>, %s: tensor<1x4xf32>, %v: tensor<1x4x4xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{left must be (N, 3, 2, 2) pairs}}
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<1x6x4xf32>, tensor<1x4xf32>, tensor<1x4x4xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>)
  return %l, %r : tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>
}

// -----

func.func @complex_singular_vectors_values(%u: tensor<1x6x4xf32>, %s: tensor<1x3xf32>, %v: tensor<1x4x4xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{s must be (N, 2n) of v's element type}}
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<1x6x4xf32>, tensor<1x3xf32>, tensor<1x4x4xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>)
  return %l, %r : tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

func.func @complex_singular_vectors_right(%u: tensor<1x6x4xf32>, %s: tensor<1x4xf32>, %v: tensor<1x4x4xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x2x2xf32>) {
  // expected-error @+1 {{right must be (N, 2, 2, 2) pairs}}
  %l, %r = aten.complex_singular_vectors %u, %s, %v : (tensor<1x6x4xf32>, tensor<1x4xf32>, tensor<1x4x4xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x2x2xf32>)
  return %l, %r : tensor<1x3x2x2xf32>, tensor<1x2x2xf32>
}
