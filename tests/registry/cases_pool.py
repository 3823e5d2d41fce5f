"""Pooling: max, avg (count_include_pad, ceil_mode, divisor_override),
adaptive avg/max, 1-d/2-d/3-d."""

import torch
import torch.nn.functional as F

from tests.registry.registry import (DTYPE_NAMES, const, rand, randint, randn, randperm_values,
                                     register)

register("max_pool2d_k2_f32", lambda x: F.max_pool2d(x, 2), randn(2, 3, 8, 8))
register("max_pool2d_k3_s2_p1_f32", lambda x: F.max_pool2d(x, 3, 2, 1), randn(1, 4, 9, 9))
register("max_pool2d_ceil_f32", lambda x: F.max_pool2d(x, 2, ceil_mode=True), randn(1, 2, 7, 7))
register("max_pool2d_dilation_f32", lambda x: F.max_pool2d(x, 2, 1, dilation=2),
         randn(1, 2, 7, 7))
register("max_pool2d_rect_f32", lambda x: F.max_pool2d(x, (2, 3), (1, 2)), randn(1, 2, 6, 9))
register("max_pool2d_neg_inputs_pad_f32", lambda x: F.max_pool2d(x - 10.0, 3, 1, 1),
         randn(1, 1, 5, 5))
register("max_pool2d_indices_f32", lambda x: F.max_pool2d(x, 2, return_indices=True),
         randperm_values(1, 2, 4, 4))
register("max_pool2d_f64", lambda x: F.max_pool2d(x, 2), randn(1, 2, 6, 6, dtype=torch.float64))
register("max_pool2d_f16", lambda x: F.max_pool2d(x, 2), randn(1, 2, 6, 6, dtype=torch.float16))
register("max_pool1d_f32", lambda x: F.max_pool1d(x, 3, 2), randn(2, 3, 11))
register("max_pool1d_pad_f32", lambda x: F.max_pool1d(x, 2, 2, 1), randn(1, 2, 8))
register("max_pool3d_f32", lambda x: F.max_pool3d(x, 2), randn(1, 2, 4, 4, 4))
register("max_pool3d_s1_p1_f32", lambda x: F.max_pool3d(x, 3, 1, 1), randn(1, 1, 4, 5, 5))
# Max pools in pieces (interior windows, then padded border slabs), and
# after a relu from 0: NaN still wins, an all-negative window gives 0.
register("max_pool2d_after_relu_nan_f32", lambda x: F.max_pool2d(F.relu(x), 3, 2, 1),
         const(torch.tensor([[[[-1.0, -2.0, -3.0, -4.0, 5.0], [-1.0, float("nan"), -3.0, -4.0, -5.0],
                               [-1.0, -2.0, -3.0, -4.0, -5.0], [7.0, -2.0, -3.0, -4.0, -5.0],
                               [-1.0, -2.0, -3.0, -4.0, float("nan")]]]])))
# A dilation past the input leaves a window wholly in the padding: its max
# is -inf, relu or not (no fold from 0 there).
register("max_pool2d_after_relu_window_in_padding_f32",
         lambda x: F.max_pool2d(F.relu(x), 2, 1, 1, dilation=3), randn(1, 2, 2, 2))
register("max_pool1d_after_relu_nan_f32", lambda x: F.max_pool1d(F.relu(x), 3, 2, 1),
         const(torch.tensor([[[float("nan"), -1.0, -2.0, -3.0, -4.0, 5.0, -6.0, float("nan")],
                              [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0]]])))
register("max_pool1d_after_relu_window_in_padding_f32",
         lambda x: F.max_pool1d(F.relu(x), 2, 1, 1, dilation=4), randn(1, 2, 3))
register("max_pool2d_relu_twice_used_f32",
         lambda x: (F.max_pool2d(F.relu(x), 2, 1, 1), F.relu(x).sum()), randn(1, 2, 5, 6))
register("max_pool2d_ceil_pad_s3_f32",
         lambda x: F.max_pool2d(x, 3, 3, 1, ceil_mode=True), randn(1, 3, 10, 11))
register("max_pool2d_dilated_pad_i64",
         lambda x: F.max_pool2d(x, (1, 3), (1, 2), (0, 1), dilation=(1, 2)), randint(-50, 50, 2, 3, 4, 13, dtype=torch.int64))
register("max_pool3d_pad_asym_f32",
         lambda x: F.max_pool3d(F.relu(x), (3, 2, 3), (2, 1, 2), (1, 1, 0)), randn(1, 2, 5, 4, 7))

register("avg_pool2d_k2_f32", lambda x: F.avg_pool2d(x, 2), randn(2, 3, 8, 8))
register("avg_pool2d_k3_s2_p1_f32", lambda x: F.avg_pool2d(x, 3, 2, 1), randn(1, 2, 9, 9))
register("avg_pool2d_exclude_pad_f32",
         lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), randn(1, 2, 9, 9))
register("avg_pool2d_ceil_f32", lambda x: F.avg_pool2d(x, 2, ceil_mode=True), randn(1, 2, 7, 7))
register("avg_pool2d_divisor_f32", lambda x: F.avg_pool2d(x, 2, divisor_override=3),
         randn(1, 2, 6, 6))
register("avg_pool2d_f64", lambda x: F.avg_pool2d(x, 2), randn(1, 2, 6, 6, dtype=torch.float64))
register("avg_pool1d_f32", lambda x: F.avg_pool1d(x, 3, 2), randn(2, 3, 11))
register("avg_pool1d_pad_f32", lambda x: F.avg_pool1d(x, 2, 2, 1), randn(1, 2, 8))
register("avg_pool3d_f32", lambda x: F.avg_pool3d(x, 2), randn(1, 2, 4, 4, 4))

register("adaptive_avg_pool2d_1_f32", lambda x: F.adaptive_avg_pool2d(x, 1), randn(2, 8, 7, 7))
register("adaptive_avg_pool2d_even_f32", lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
         randn(1, 3, 8, 9))
register("adaptive_avg_pool2d_uneven_f32", lambda x: F.adaptive_avg_pool2d(x, 3),
         randn(1, 2, 7, 8))
# Output extents that do not divide the input's: PyTorch's windows
# [floor(i*In/Out), ceil((i+1)*In/Out)) overlap and differ in size.
register("adaptive_avg_pool1d_uneven_f32", lambda x: F.adaptive_avg_pool1d(x, 4), randn(2, 3, 10))
register("adaptive_avg_pool2d_uneven_rect_f32", lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
         randn(1, 2, 5, 9))
register("adaptive_avg_pool2d_mixed_f32", lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
         randn(1, 3, 8, 7))
register("adaptive_avg_pool2d_grow_f32", lambda x: F.adaptive_avg_pool2d(x, 5), randn(1, 2, 3, 3))
register("adaptive_avg_pool2d_uneven_f64", lambda x: F.adaptive_avg_pool2d(x, (4, 3)),
         randn(2, 2, 6, 5, dtype=torch.float64))
register("adaptive_avg_pool2d_uneven_f16", lambda x: F.adaptive_avg_pool2d(x, 3),
         randn(1, 2, 7, 7, dtype=torch.float16))
# Windows of 301 x 301 elements: more than f16's largest value, so the sum
# and the division run in f32 as eager's kernel accumulates.
register("adaptive_avg_pool2d_uneven_large_window_f16",
         lambda x: F.adaptive_avg_pool2d(x + 4.0, 2), randn(1, 1, 601, 601, dtype=torch.float16))
register("adaptive_avg_pool2d_uneven_3d_input_f32", lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
         randn(4, 7, 5))
register("adaptive_max_pool1d_uneven_f32",
         lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True), randperm_values(2, 3, 10))
register("adaptive_max_pool2d_uneven_f32",
         lambda x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True),
         randperm_values(1, 2, 7, 5))
register("adaptive_max_pool2d_grow_f32",
         lambda x: F.adaptive_max_pool2d(x, (4, 5), return_indices=True),
         randperm_values(2, 1, 3, 4))
register("adaptive_max_pool2d_uneven_values_f64", lambda x: F.adaptive_max_pool2d(x, 3),
         randn(1, 2, 8, 7, dtype=torch.float64))
register("adaptive_avg_pool1d_f32", lambda x: F.adaptive_avg_pool1d(x, 4), randn(2, 3, 12))
register("adaptive_avg_pool3d_1_f32", lambda x: F.adaptive_avg_pool3d(x, 1), randn(1, 2, 3, 4, 4))
register("adaptive_max_pool2d_1_f32", lambda x: F.adaptive_max_pool2d(x, 1), randn(2, 3, 5, 5))
register("adaptive_max_pool2d_even_f32", lambda x: F.adaptive_max_pool2d(x, 2),
         randn(1, 3, 6, 6))
register("adaptive_max_pool1d_f32", lambda x: F.adaptive_max_pool1d(x, 3), randn(2, 3, 9))
register("global_mean_pool_f32", lambda x: x.mean((2, 3)), randn(2, 8, 5, 5))
register("upsample_nearest2d_f32", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
         randn(1, 2, 3, 4))
register("upsample_bilinear2d_f32",
         lambda x: F.interpolate(x, size=(6, 8), mode="bilinear", align_corners=False),
         randn(1, 2, 3, 4))
# A scale factor that is not the size ratio (5 * 1.5 -> 7): the source index
# follows 1/scale, not in/out, as eager's does.
register("upsample_nearest2d_fractional_scale_f32",
         lambda x: F.interpolate(x, scale_factor=1.5, mode="nearest"), randn(1, 2, 5, 5))
register("upsample_bilinear2d_fractional_scale_f32",
         lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=False),
         randn(1, 2, 5, 3))
register("pixel_shuffle_f32", lambda x: F.pixel_shuffle(x, 2), randn(1, 8, 3, 3))

# avg_pool on integers sums in int64 and divides with truncation toward zero;
# f16/bf16 sum in f32 (both as eager; found by the OpInfo family: integers
# were refused, and bf16 windows summed in bf16 were off by 0.3).
# (Eager implements integer avg_pool for int64 only.)
register("avg_pool1d_i64", lambda x: F.avg_pool1d(x, 3, 2, 1), randint(-50, 50, 2, 3, 11))
register("avg_pool2d_exclude_pad_i64",
         lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
         randint(-100, 100, 1, 2, 9, 9))
register("avg_pool2d_divisor_ceil_i64",
         lambda x: F.avg_pool2d(x, 2, ceil_mode=True, divisor_override=3),
         randint(-30, 30, 1, 2, 7, 7))
register("avg_pool3d_i64", lambda x: F.avg_pool3d(x, 2), randint(-9, 99, 1, 2, 4, 4, 4))
for dt in (torch.float16, torch.bfloat16):
    register(f"avg_pool2d_large_window_{DTYPE_NAMES[dt]}", lambda x: F.avg_pool2d(x, 7),
             randn(1, 3, 14, 14, dtype=dt, scale=8.0))

# Adaptive pooling over three dims: even windows (a plain pool) and uneven
# ones (gathered windows), values and indices.
register("adaptive_avg_pool3d_even_f32", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
         randn(1, 2, 4, 6, 4))
register("adaptive_avg_pool3d_uneven_f32", lambda x: F.adaptive_avg_pool3d(x, (3, 2, 4)),
         randn(2, 2, 5, 5, 7))
register("adaptive_max_pool3d_even_f32",
         lambda x: F.adaptive_max_pool3d(x, 2, return_indices=True), randn(1, 3, 4, 4, 6))
register("adaptive_max_pool3d_uneven_f32",
         lambda x: F.adaptive_max_pool3d(x, (2, 3, 3), return_indices=True),
         randn(2, 2, 5, 7, 4))


class ConvThenPool(torch.nn.Module):
    """A convolution, optionally a relu, then a pool: on the cpu target the
    convolution runs channels last (the kernel library) and the pool then
    pools its channels-last output (kiln-sink-permutes), as in resnet's stem."""

    def __init__(self, dims: int, channels: int, pool, relu: bool = False):
        super().__init__()
        conv = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[dims]
        self.conv = conv(3, channels, 3, padding=1)
        self.relu = relu
        self.pool = pool

    def forward(self, x):
        y = self.conv(x)
        return self.pool(torch.relu(y) if self.relu else y)


for _name, _dims, _shape, _pool, _relu in [
        ("conv_relu_max_pool2d_stem_f32", 2, (1, 3, 15, 15),
         lambda y: F.max_pool2d(y, 3, 2, 1), True),
        ("conv_max_pool2d_ceil_dilation_f32", 2, (2, 3, 11, 10),
         lambda y: F.max_pool2d(y, 2, 2, dilation=2, ceil_mode=True), False),
        ("conv_max_pool1d_pad_f32", 1, (2, 3, 13), lambda y: F.max_pool1d(y, 3, 2, 1), False),
        ("conv_max_pool3d_f32", 3, (1, 3, 6, 7, 5), lambda y: F.max_pool3d(y, 2, 1, 1), True),
        ("conv_avg_pool2d_exclude_pad_f32", 2, (1, 3, 9, 9),
         lambda y: F.avg_pool2d(y, 3, 2, 1, count_include_pad=False), False),
        ("conv_avg_pool2d_ceil_divisor_f32", 2, (2, 3, 7, 8),
         lambda y: F.avg_pool2d(y, 2, ceil_mode=True, divisor_override=3), True),
        ("conv_avg_pool1d_f32", 1, (1, 3, 12), lambda y: F.avg_pool1d(y, 3, 2, 1), False),
        # The indices are read: this pool keeps the channels-first layout.
        ("conv_max_pool2d_indices_f32", 2, (1, 3, 8, 8),
         lambda y: F.max_pool2d(y, 2, return_indices=True), False)]:
    register(_name, ConvThenPool, randn(*_shape), dims=_dims, channels=5, pool=_pool,
             relu=_relu)

# Antialiased resampling (F.interpolate(..., antialias=True), torchvision's
# Resize): bilinear and bicubic, down and up, sizes and scale factors,
# align_corners; was UNIMPLEMENTED.
register("upsample_bilinear_aa_half_f32",
         lambda x: F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True),
         randn(2, 3, 32, 40))
register("upsample_bilinear_aa_size_f32",
         lambda x: F.interpolate(x, size=(13, 17), mode="bilinear", antialias=True),
         randn(1, 3, 32, 40))
register("upsample_bicubic_aa_size_f32",
         lambda x: F.interpolate(x, size=(11, 30), mode="bicubic", antialias=True),
         randn(1, 2, 29, 64), rtol=1e-5, atol=1e-5)
register("upsample_bicubic_aa_up_f64",
         lambda x: F.interpolate(x, scale_factor=(2.5, 1.5), mode="bicubic", antialias=True),
         randn(1, 2, 6, 8, dtype=torch.float64))
register("upsample_bilinear_aa_align_corners_f32",
         lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True,
                                 antialias=True),
         randn(1, 1, 20, 25))
# A dim whose extent stays is left alone whatever the scale factor (10 rows
# at 1.05 stay 10), as eager does.
register("upsample_bilinear_aa_kept_rows_f32",
         lambda x: F.interpolate(x, scale_factor=(1.05, 0.5), mode="bilinear", antialias=True),
         randn(1, 3, 10, 16))


# uint8 bilinear and bicubic resampling, plain and antialiased: eager's uint8
# kernel resamples in fixed point (int16 weights scaled by 2^p), W first,
# and rounds to uint8 between the passes. Computed in float they were off
# by one in up to a quarter of the elements (found by the OpInfo samples of
# interpolate); antialiased uint8 was UNIMPLEMENTED. Compared exactly.
_U8 = dict(dtype=torch.uint8)
register("upsample_bilinear2d_up_u8",
         lambda x: F.interpolate(x, size=(9, 13), mode="bilinear"), randint(0, 256, 2, 3, 5, 6, **_U8))
register("upsample_bilinear2d_down_align_corners_u8",
         lambda x: F.interpolate(x, size=(4, 3), mode="bilinear", align_corners=True),
         randint(0, 256, 1, 2, 11, 7, **_U8))
register("upsample_bilinear2d_scale_factor_u8",
         lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear"),
         randint(0, 256, 1, 5, 4, 6, **_U8))
# Bicubic's negative lobes overshoot: the clamp to [0, 255] decides the
# values next to black/white edges.
register("upsample_bicubic2d_edges_u8",
         lambda x: F.interpolate(x, size=(10, 11), mode="bicubic"),
         const(torch.tensor([[[[0, 255, 0, 255], [255, 255, 0, 0], [0, 0, 255, 255],
                               [255, 0, 255, 0]]]], dtype=torch.uint8)))
register("upsample_bicubic2d_rows_only_u8",
         lambda x: F.interpolate(x, size=(3, 8), mode="bicubic", align_corners=True),
         randint(0, 256, 2, 2, 7, 8, **_U8))
register("upsample_bilinear_aa_down_u8",
         lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", antialias=True),
         randint(0, 256, 1, 3, 32, 40, **_U8))
register("upsample_bicubic_aa_u8",
         lambda x: F.interpolate(x, scale_factor=(0.3, 2.2), mode="bicubic", antialias=True),
         randint(0, 256, 1, 2, 20, 6, **_U8))

# Fractional max pooling (aten.fractional_max_pool): window starts from
# each plane's samples as eager computes them in the element type,
# trunc((i + u) * alpha) - trunc(u * alpha), the last window at In - K;
# each output the window's first maximum or its last NaN. The samples are
# inputs here (eager's F.fractional_max_pool2d draws them with torch.rand:
# tests/e2e/test_e2e_random.py), and 2d's are (w, h) while 3d's are (t, h, w).
_FMP2 = torch.ops.aten.fractional_max_pool2d
_FMP3 = torch.ops.aten.fractional_max_pool3d
register("fractional_max_pool2d_f32", lambda x, u: tuple(_FMP2(x, [2, 2], [4, 5], u)),
         randn(2, 3, 9, 10), rand(2, 3, 2))
register("fractional_max_pool2d_uneven_kernel_f32",
         lambda x, u: tuple(_FMP2(x, [3, 2], [5, 3], u)), randn(1, 4, 11, 7), rand(1, 4, 2))
register("fractional_max_pool2d_unbatched_f32", lambda x, u: tuple(_FMP2(x, [2, 3], [3, 3], u)),
         randn(3, 7, 8), rand(1, 3, 2))
register("fractional_max_pool2d_one_output_row_f32",
         lambda x, u: tuple(_FMP2(x, [2, 2], [1, 4], u)), randn(1, 2, 5, 6), rand(1, 2, 2))
# Ties: the first maximum's index; NaNs: the last NaN's.
register("fractional_max_pool2d_ties_and_nans_f32",
         lambda x, u: tuple(_FMP2(x, [3, 3], [2, 2], u)),
         const(torch.tensor([[[[1.0, 5.0, 5.0, float("nan"), 2.0],
                               [5.0, float("nan"), 1.0, float("nan"), 2.0],
                               [0.0, 4.0, 3.0, 3.0, 3.0],
                               [4.0, 4.0, 1.0, 0.0, 0.0],
                               [-float("inf"), -float("inf"), 0.0, 0.0, 9.0]]]])),
         const(torch.tensor([[[0.25, 0.75]]])))
register("fractional_max_pool2d_f64", lambda x, u: tuple(_FMP2(x, [2, 2], [5, 5], u)),
         randn(2, 2, 11, 12, dtype=torch.float64), rand(2, 2, 2, dtype=torch.float64))
register("fractional_max_pool2d_f16", lambda x, u: tuple(_FMP2(x, [2, 2], [6, 5], u)),
         randn(2, 2, 13, 12, dtype=torch.float16), rand(2, 2, 2, dtype=torch.float16))
register("fractional_max_pool2d_bf16", lambda x, u: tuple(_FMP2(x, [2, 2], [6, 5], u)),
         randn(2, 2, 13, 12, dtype=torch.bfloat16), rand(2, 2, 2, dtype=torch.bfloat16))
register("fractional_max_pool3d_f32", lambda x, u: tuple(_FMP3(x, [2, 2, 2], [3, 4, 3], u)),
         randn(2, 2, 7, 8, 9), rand(2, 2, 3))
register("fractional_max_pool3d_unbatched_f32",
         lambda x, u: tuple(_FMP3(x, [2, 1, 2], [2, 3, 3], u)), randn(2, 5, 6, 7), rand(1, 2, 3))
# The module form with its samples given, values only.
register("fractional_max_pool2d_module_f32",
         lambda x: F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5),
                                           _random_samples=torch.full((2, 3, 2), 0.6)),
         randn(2, 3, 12, 12))
