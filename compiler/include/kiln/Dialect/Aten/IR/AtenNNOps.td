//===- AtenNNOps.td - convolution and pooling ops ----------*- tablegen -*-===//
//
// This file defines the aten ops of convolutional networks: convolution
// (1-3 spatial dims, groups, transposed), max/average pooling and grid
// sampling.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_ATEN_ATENNNOPS_TD
#define KILN_DIALECT_ATEN_ATENNNOPS_TD

def Aten_ConvolutionOp : Aten_Op<"convolution", [Pure]> {
  let summary = "N-d convolution (NC + spatial layout), grouped or transposed.";
  let description = [{
    `aten.convolution.default`. The weight is (C_out, C_in / groups, k...)
    or, transposed, (C_in, C_out / groups, k...). `stride`, `padding`,
    `dilation` and `output_padding` have one entry per spatial dimension.

    Example:
    ```mlir
    %0 = aten.convolution %x, %w, bias %b {stride = array<i64: 1, 1>,
        padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>,
        output_padding = array<i64: 0, 0>, transposed = false, groups = 1 : i64}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, AnyStaticShapeTensor:$weight,
                   Optional<AnyStaticShapeTensor>:$bias,
                   DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                   DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$output_padding,
                   BoolAttr:$transposed, I64Attr:$groups);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` `bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_GroupNormOp : Aten_Op<"group_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "Group normalization, with each group's mean and 1/std.";
  let description = [{
    `native_group_norm`: the (N, C, ...) input's channels cut into `groups`
    groups; each sample's group is normalized by its mean and biased
    variance, `(x - mean) * rsqrt(var + eps)`, then scaled by `weight` and
    shifted by `bias` per channel (each optional, 1-d of C). The statistics
    are computed in f32 for an f16/bf16 input, as eager's CPU kernel does.
    `mean` and `rstd` are (N, groups). kiln-decompose-aten writes it as
    views, a mean, a variance and pointwise ops (DecomposeNorm.cpp).

    Example:
    ```mlir
    %y, %m, %r = aten.group_norm %x weight %w bias %b {groups = 2 : i64, eps = 1.0e-5 : f64}
        : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>)
        -> (tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                   Optional<AnyStaticShapeTensor>:$weight,
                   Optional<AnyStaticShapeTensor>:$bias, I64Attr:$groups,
                   F64Attr:$eps);
  let results = (outs AnyStaticShapeTensor:$result, AnyStaticShapeTensor:$mean,
                      AnyStaticShapeTensor:$rstd);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_BatchStatsNormOp : Aten_Op<"batch_stats_norm",
                                    [Pure, AttrSizedOperandSegments]> {
  let summary = "Batch normalization by the batch's own statistics.";
  let description = [{
    Training-mode batch norm (`native_batch_norm` with training set,
    `_native_batch_norm_legit` without running statistics, what
    instance_norm decomposes to): each channel of the (N, C, ...) input is
    normalized by its mean and biased variance over every other dimension,
    `(x - mean) * rsqrt(var + eps)`, then scaled by `weight` and shifted by
    `bias` (each optional, 1-d of C). The statistics are computed in f32
    for an f16/bf16 input. `mean` and `rstd` are (C). kiln-decompose-aten
    writes it as a mean, a variance and one `batch_norm` pointwise op.

    Example:
    ```mlir
    %y, %m, %r = aten.batch_stats_norm %x {eps = 1.0e-5 : f64}
        : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                   Optional<AnyStaticShapeTensor>:$weight,
                   Optional<AnyStaticShapeTensor>:$bias, F64Attr:$eps);
  let results = (outs AnyStaticShapeTensor:$result, AnyStaticShapeTensor:$mean,
                      AnyStaticShapeTensor:$rstd);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_MaxPoolOp : Aten_Op<"max_pool", [Pure]> {
  let summary = "N-d max pooling with the flat spatial index of each maximum.";
  let description = [{
    `max_pool2d_with_indices` (and 1-d/3-d). Padding reads as -inf; the
    result extents (floor or ceil mode) come from the result type. `indices`
    holds, per output element, the index of the maximum within the
    flattened spatial dims of its input plane (i64). With `channels_last`
    the data is (n, spatial..., c): the last dim is kept, not pooled, and
    the indices are laid out as the values.

    Example:
    ```mlir
    %v, %i = aten.max_pool %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
        padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
        : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                   DenseI64ArrayAttr:$dilation, UnitAttr:$channels_last);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_AvgPoolOp : Aten_Op<"avg_pool", [Pure]> {
  let summary = "N-d average pooling.";
  let description = [{
    `avg_pool1d/2d/3d`. The divisor is `divisor_override` when non-zero, else
    the window size clipped to the padded input (`count_include_pad`) or to
    the input itself, as PyTorch computes it. With `channels_last` the data
    is (n, spatial..., c): the last dim is kept, not pooled.

    Example:
    ```mlir
    %0 = aten.avg_pool %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
        padding = array<i64: 0, 0>, count_include_pad = true, divisor_override = 0 : i64}
        : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                   BoolAttr:$count_include_pad, I64Attr:$divisor_override,
                   UnitAttr:$channels_last);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_ConvolutionBackwardOp : Aten_Op<"convolution_backward", [Pure]> {
  let summary = "The gradients of a convolution's input, weight and bias.";
  let description = [{
    `convolution_backward` of a (non-transposed) convolution of `input`
    (N, C_in, S...) by `weight` (C_out, C_in / groups, K...) with
    `stride`, `padding`, `dilation` (one entry per spatial dim, 1 to 3) and
    `groups`, given `grad_output` (N, C_out, O...), O the forward's
    extents. `output_mask` says which gradients the graph reads; the others
    are typed but never computed. kiln-decompose-aten writes them as eager
    computes them (DecomposeConvolutionBackward.cpp): grad_input a
    transposed convolution of grad_output by the weight (so the padding is
    at most dilation * (K - 1) when it is asked for), grad_weight a grouped
    convolution of the input by grad_output with stride and dilation
    swapped, grad_bias grad_output summed over all dims but 1. As eager,
    `groups` is at most C_out; S + 2 * padding is at most 2^40.

    Example:
    ```mlir
    %dx, %dw, %db = aten.convolution_backward %dy, %x, %w {stride = array<i64: 1, 1>,
        padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64,
        output_mask = array<i1: true, true, false>}
        : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>)
        -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$grad_output, AnyStaticShapeTensor:$input,
                   AnyStaticShapeTensor:$weight, DenseI64ArrayAttr:$stride,
                   DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
                   I64Attr:$groups, DenseBoolArrayAttr:$output_mask);
  let results = (outs AnyStaticShapeTensor:$grad_input, AnyStaticShapeTensor:$grad_weight,
                      AnyStaticShapeTensor:$grad_bias);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_MaxPoolBackwardOp : Aten_Op<"max_pool_backward", [Pure]> {
  let summary = "The input gradient of max pooling, from its saved indices.";
  let description = [{
    `max_pool2d_with_indices_backward` and `max_pool3d_with_indices_backward`:
    each position of `self`'s (N, C, spatial...) or (C, spatial...) planes
    sums the `grad_output` entries whose saved `indices` (i64, the flat
    position within the plane, as aten.max_pool gives them) name it, in
    ascending output order as eager adds them. `kernel`, `stride`,
    `padding` and `dilation` (one entry per spatial dim) are the forward's:
    kiln-decompose-aten uses them to gather only the windows that can
    cover each position (DecomposePoolBackward.cpp), and scatter-adds over
    the whole plane when that table would pass 2^24 entries or the gathered
    windows 2^28 elements. The geometry is checked as eager's pooling
    checks it (the padding at most half the kernel), and grad_output's
    extents against it.

    Example:
    ```mlir
    %0 = aten.max_pool_backward %dy, %x, %i {kernel = array<i64: 3, 3>,
        stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
        : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$grad_output, AnyStaticShapeTensor:$self,
                   AnyStaticShapeTensor:$indices, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                   DenseI64ArrayAttr:$dilation);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $grad_output `,` $self `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_AdaptiveAvgPoolOp : Aten_Op<"adaptive_avg_pool", [Pure]> {
  let summary = "Adaptive average pooling over the last 1 to 3 dims.";
  let description = [{
    `adaptive_avg_pool1d/2d/3d` (and `_adaptive_avg_pool2d/3d`): the last
    `pooled_dims` dims are pooled to the result's extents there; the one or
    two before them ((C) or (N, C)) are kept. Output element i of a pooled dim averages
    PyTorch's window [floor(i * In / Out), ceil((i + 1) * In / Out))
    (AdaptiveWindows.h). kiln-decompose-aten writes it as aten.avg_pool
    with kernel = stride = In / Out when every Out divides its In, and
    otherwise as gathered windows summed and divided (floating-point types
    only; the gather tables are at most 2^24 entries).

    Example:
    ```mlir
    %0 = aten.adaptive_avg_pool %x {pooled_dims = 2 : i64}
        : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$pooled_dims);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_AdaptiveMaxPoolOp : Aten_Op<"adaptive_max_pool", [Pure]> {
  let summary = "Adaptive max pooling over the last 1 to 3 dims, with indices.";
  let description = [{
    `adaptive_max_pool1d/2d/3d`: the last `pooled_dims` dims are pooled to
    the result's extents over the windows of aten.adaptive_avg_pool;
    `indices` (i64) holds each maximum's index within the flattened pooled
    dims of its input plane. kiln-decompose-aten writes it as aten.max_pool
    when every Out divides its In, and otherwise as the first maximum of
    each gathered window (with several NaNs in one window it names the
    first, where PyTorch names the last).

    Example:
    ```mlir
    %v, %i = aten.adaptive_max_pool %x {pooled_dims = 2 : i64}
        : (tensor<1x4x6x9xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$pooled_dims);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_FractionalMaxPoolOp : Aten_Op<"fractional_max_pool", [Pure]> {
  let summary = "Fractional max pooling over the last 2 or 3 dims, with indices.";
  let description = [{
    `fractional_max_pool2d/3d`: each plane of `self` (its leading dims) is
    pooled over the last `kernel.size()` dims by windows of `kernel` whose
    starts come from the plane's `samples` (the leading dims, then one
    sample per pooled dim, in the pooled dims' order): for an output of
    Out positions over In, with alpha = (In - K) / (Out - 1) in the element
    type, position i < Out - 1 starts at trunc((i + u) * alpha) - trunc(u *
    alpha) and the last at In - K, as eager computes them (a start outside
    [0, In - K], from a sample outside [0, 1), is clamped). Each output is
    the window's first maximum, or its last NaN, as eager's scan keeps it;
    `indices` (i64) holds its index within the flattened pooled dims of its
    plane. kiln-decompose-aten writes it as gathered windows.

    Example:
    ```mlir
    %v, %i = aten.fractional_max_pool %x, %u {kernel = array<i64: 2, 2>}
        : (tensor<1x3x9x9xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$samples,
                   DenseI64ArrayAttr:$kernel);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self `,` $samples attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_GridSampleOp : Aten_Op<"grid_sample", [Pure]> {
  let summary = "2-d or 3-d sampling of an input at the grid's normalised points.";
  let description = [{
    `aten.grid_sampler_2d.default` and `aten.grid_sampler_3d.default`
    (`F.grid_sample` on 4-d and 5-d inputs). `input` is (N, C, H, W) with
    `grid` (N, H_out, W_out, 2) holding (x, y), or (N, C, D, H, W) with
    `grid` (N, D_out, H_out, W_out, 3) holding (x, y, z), in [-1, 1] and the
    input's element type; the result is (N, C, <the grid's spatial dims>).
    `interpolation_mode` is PyTorch's: 0 bilinear (trilinear in 3-d),
    1 nearest, 2 bicubic (2-d only); `padding_mode` 0 zeros, 1 border,
    2 reflection.

    Example:
    ```mlir
    %0 = aten.grid_sample %x, %g {interpolation_mode = 0 : i64,
        padding_mode = 0 : i64, align_corners = false}
        : (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, AnyStaticShapeTensor:$grid,
                   I64Attr:$interpolation_mode, I64Attr:$padding_mode,
                   BoolAttr:$align_corners);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `,` $grid attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_UpsampleSeparableOp : Aten_Op<"upsample_separable", [Pure]> {
  let summary = "Bilinear or bicubic resampling of the last two dims, one dim at a time.";
  let description = [{
    Eager's separable resampling kernel: `aten._upsample_bilinear2d_aa` and
    `aten._upsample_bicubic2d_aa` (`antialias`: `F.interpolate(...,
    antialias=True)`, torchvision's Resize), and `aten.upsample_bilinear2d`
    / `aten.upsample_bicubic2d` of uint8 tensors (no `antialias`). self is
    (N, C, H, W), the result (N, C, H_out, W_out). Each output row (column)
    is a weighted sum of the input rows (columns), W first, then H; a dim
    whose extent stays is left alone. scale = H / H_out (or 1 / scale_h when
    given; (H - 1) / (H_out - 1) with align_corners).

    - `antialias`: PIL's weights, as eager's: the triangle (`bilinear`) or
      Keys cubic with a = -0.5 (`bicubic`) filter, widened by the scale when
      downsampling, normalised to sum 1.
    - Otherwise: the plain interpolation's 2 or 4 taps (Keys cubic with a =
      -0.75), taps past the edge folded onto the edge sample.

    A floating-point tensor resamples in its own type (f16 and bf16 in f32).
    An integer tensor holds uint8 values (the i16 the importer carries them
    in) and resamples as eager's uint8 kernel does, in fixed point: the
    weights scaled by 2^p and rounded to int16 (p the largest precision, at
    most 22, that keeps the dim's largest weight below 2^14), each pass's
    sums rounded (+ 2^(p-1), shifted right by p) and clamped to [0, 255].

    Example:
    ```mlir
    %0 = aten.upsample_separable %x {mode = "bilinear", antialias = true, align_corners = false}
        : (tensor<1x3x32x40xf32>) -> tensor<1x3x16x20xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, StrAttr:$mode, BoolAttr:$antialias,
                   BoolAttr:$align_corners, OptionalAttr<F64Attr>:$scale_h,
                   OptionalAttr<F64Attr>:$scale_w);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // KILN_DIALECT_ATEN_ATENNNOPS_TD
