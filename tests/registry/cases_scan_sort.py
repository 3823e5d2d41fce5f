"""cumsum / cumprod, cummax / cummin (ties and NaN included), topk, sort,
argsort (inputs without ties)."""

import torch

from tests.registry.registry import (DTYPE_NAMES, const, rand, randint, randn, randperm_values,
                                     register)

for dim in (0, 1, -1):
    register(f"cumsum_d{dim if dim >= 0 else 'last'}_f32", lambda x, d=dim: torch.cumsum(x, d),
             randn(4, 5, 6))
for dt in (torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
           torch.int8, torch.uint8, torch.bool):
    n = DTYPE_NAMES[dt]
    spec = randn(3, 7, dtype=dt) if dt.is_floating_point else randint(0, 5, 3, 7, dtype=dt)
    register(f"cumsum_{n}", lambda x: torch.cumsum(x, 1), spec)
register("cumsum_dtype_f64_f32", lambda x: torch.cumsum(x, 0, dtype=torch.float64), randn(5, 3))
register("cumsum_long_f32", lambda x: torch.cumsum(x, -1), randn(2, 500))
# f16/bf16 accumulate in f32 as eager's acc_type does; summed in f16 the
# running values drifted past the tolerance (issue 15, OpInfo cumsum).
for dt in (torch.float16, torch.bfloat16):
    register(f"cumsum_long_{DTYPE_NAMES[dt]}", lambda x: torch.cumsum(x, -1),
             randn(4, 200, dtype=dt))
register("cumsum_1d_i64", lambda x: torch.cumsum(x, 0), randint(-9, 9, 10))
# Dims over 128 scan by a loop over the dim (O(n)); shorter ones by a
# triangular reduction. Quadratic, 200,000 elements were 4e10 steps.
register("cumsum_very_long_1d_f64", lambda x: torch.cumsum(x, 0),
         randn(200_000, dtype=torch.float64))
register("cumsum_long_d0_3d_f32", lambda x: torch.cumsum(x, 0), randn(300, 2, 3))
register("cumsum_long_dtype_i32_i64", lambda x: torch.cumsum(x, 1, dtype=torch.int64),
         randint(-50, 50, 2, 1000, dtype=torch.int32))
register("cumprod_long_f64", lambda x: torch.cumprod(x, -1),
         rand(2, 400, dtype=torch.float64, low=0.9, high=1.1))
register("cumsum_long_u8", lambda x: torch.cumsum(x, 0), randint(0, 255, 300, dtype=torch.uint8))
# Long scans run a tile of lines at a time (LinearScan.cpp): 4 rows a tile
# along the last dim (a prime row count: tiles of one), up to 512 elements
# of the contiguous dim along another (1030: two tiles of 515), tiles over
# outer dims, and scans with two results.
register("cumsum_tiles_rows_12x1000_f32", lambda x: torch.cumsum(x, -1), randn(12, 1000))
register("cumsum_tiles_prime_rows_7x301_f32", lambda x: torch.cumsum(x, 1), randn(7, 301))
register("cumsum_tiles_mid_3x200x1030_f32", lambda x: torch.cumsum(x, 1), randn(3, 200, 1030))
register("cummax_tiles_d0_150x6x7_f32", lambda x: torch.cummax(x, 0),
         randint(0, 4, 150, 6, 7, dtype=torch.float32))
register("cummin_tiles_last_2x6x257_i64", lambda x: torch.cummin(x, -1),
         randint(-5, 5, 2, 6, 257))
register("logcumsumexp_tiles_mid_2x300x5_f64", lambda x: torch.logcumsumexp(x, 1),
         randn(2, 300, 5, dtype=torch.float64))
register("cumprod_f32", lambda x: torch.cumprod(x, 1), rand(3, 6, low=0.5, high=1.5))
register("cummax_f32", lambda x: torch.cummax(x, 1), randperm_values(3, 6))
# cummax/cummin: ties give the last index of the extremum, a NaN sticks and
# each later NaN takes the index, as eager.
register("cummax_d0_f32", lambda x: torch.cummax(x, 0), randn(5, 3))
register("cummin_dlast_3d_f64", lambda x: torch.cummin(x, -1), randn(2, 3, 7, dtype=torch.float64))
register("cummin_f16", lambda x: torch.cummin(x, 1), randn(3, 8, dtype=torch.float16))
register("cummax_ties_f32", lambda x: torch.cummax(x, 1), randint(0, 3, 4, 9, dtype=torch.float32))
register("cummin_ties_d0_i64", lambda x: torch.cummin(x, 0), randint(-2, 2, 7, 3))
register("cummax_ties_i32", lambda x: torch.cummax(x, -1), randint(0, 3, 2, 10, dtype=torch.int32))
register("cummax_u8", lambda x: torch.cummax(x, 1), randint(0, 255, 3, 6, dtype=torch.uint8))
register("cummin_bool", lambda x: torch.cummin(x, 1), randint(0, 2, 3, 6, dtype=torch.bool))
register("cummax_1d_long_f32", lambda x: torch.cummax(x, 0), randn(300))
_NAN = float("nan")
register("cummax_nan_f32", lambda x: torch.cummax(x, 1),
         const(torch.tensor([[1.0, _NAN, 3.0, _NAN, 0.0], [2.0, 2.0, -1.0, 5.0, _NAN]])))
register("cummin_nan_f32", lambda x: torch.cummin(x, 0),
         const(torch.tensor([[1.0, _NAN], [_NAN, -3.0], [-5.0, -3.0], [_NAN, -4.0]])))

for k, largest in ((1, True), (3, True), (3, False), (6, True)):
    register(f"topk_k{k}_{'largest' if largest else 'smallest'}_f32",
             lambda x, k=k, l=largest: torch.topk(x, k, largest=l), randperm_values(4, 6))
register("topk_d0_f32", lambda x: torch.topk(x, 2, dim=0), randperm_values(5, 3))
register("topk_3d_f32", lambda x: torch.topk(x, 2, dim=1), randperm_values(2, 5, 3))
register("topk_i64", lambda x: torch.topk(x, 3), randperm_values(3, 8, dtype=torch.int64))
register("topk_f64", lambda x: torch.topk(x, 2), randperm_values(3, 8, dtype=torch.float64))
register("topk_values_only_f32", lambda x: torch.topk(x, 2).values * 2, randperm_values(3, 8))

for desc in (False, True):
    tag = "desc" if desc else "asc"
    register(f"sort_{tag}_f32", lambda x, d=desc: torch.sort(x, -1, descending=d),
             randperm_values(4, 7))
    register(f"sort_d0_{tag}_f32", lambda x, d=desc: torch.sort(x, 0, descending=d),
             randperm_values(5, 3))
    register(f"argsort_{tag}_f32", lambda x, d=desc: torch.argsort(x, -1, descending=d),
             randperm_values(3, 6))
register("sort_i32", lambda x: torch.sort(x), randperm_values(3, 9, dtype=torch.int32))
register("sort_f16", lambda x: torch.sort(x), randperm_values(3, 9, dtype=torch.float16))
register("sort_stable_ties_i64", lambda x: torch.sort(x, stable=True),
         randint(0, 3, 2, 9))   # stable: equal keys keep their order, as eager
register("sort_values_1d_f32", lambda x: torch.sort(x).values, randperm_values(20))
register("msort_f32", torch.msort, randperm_values(6, 2))
# Rows longer than 256 elements sort by merging (O(n log n)); shorter ones by
# counting ranks. Once refused above 4096 (issue 15, OpInfo sort of 8000).
register("sort_long_rows_f32", lambda x: torch.sort(x, -1), randperm_values(3, 1000))
register("sort_long_1d_desc_i64", lambda x: torch.sort(x, descending=True),
         randperm_values(8000, dtype=torch.int64))
register("sort_long_stable_ties_i32", lambda x: torch.sort(x, dim=0, stable=True),
         randint(0, 40, 700, 3, dtype=torch.int32))
register("sort_long_stable_ties_desc_f16",
         lambda x: torch.sort(x, dim=-1, descending=True, stable=True),
         randint(-8, 8, 2, 513, dtype=torch.float16))
register("sort_long_nan_f64", lambda x: torch.sort(x.masked_fill(x > 1.5, float("nan")), dim=1,
                                                   stable=True),
         randn(2, 300, dtype=torch.float64))
register("sort_long_stable_bool", lambda x: torch.sort(x, stable=True),
         randint(0, 2, 2, 600, dtype=torch.bool))
register("sort_long_d0_i64", lambda x: torch.sort(x, dim=0), randperm_values(300, 4, dtype=torch.int64))
register("argsort_long_u8", lambda x: torch.argsort(x, stable=True),
         randint(0, 255, 3, 257, dtype=torch.uint8))
register("topk_long_row_bf16", lambda x: torch.topk(x, 5).values,
         randn(2, 4097, dtype=torch.bfloat16))
# 0-d: the one element, index 0 (once refused as "sorting a 0-d tensor").
register("sort_0d_f32", lambda x: torch.sort(x), randn())
register("topk_0d_i64", lambda x: torch.topk(x, 1), randint(-5, 5))

# kthvalue: a stable sort's k-th entry (inputs without ties: eager's
# selection may return any index among equal values).
register("kthvalue_f32", lambda x: torch.kthvalue(x, 3), randperm_values(4, 7))
register("kthvalue_d0_keepdim_f32", lambda x: torch.kthvalue(x, 2, 0, keepdim=True),
         randperm_values(5, 3))
register("kthvalue_first_last_f64", lambda x: (torch.kthvalue(x, 1, 1), torch.kthvalue(x, 6, 1)),
         randperm_values(3, 6, dtype=torch.float64))
register("kthvalue_i32", lambda x: torch.kthvalue(x, 4, -1), randperm_values(2, 3, 9, dtype=torch.int32))
register("kthvalue_nan_largest_f32", lambda x: torch.kthvalue(x, 4, 1),
         const(torch.tensor([[3.0, _NAN, 1.0, 2.0], [_NAN, -1.0, 5.0, 0.5]])))
register("kthvalue_values_only_f16", lambda x: torch.kthvalue(x, 2).values,
         randperm_values(3, 5, dtype=torch.float16))

# median and nanmedian: the lower median along a dim (inputs without ties,
# as for kthvalue) and of all elements; median's row with a NaN gives its
# first NaN, nanmedian's the median of the rest.
_MEDIAN_NANS = const(torch.tensor([[3.0, _NAN, 1.0, _NAN, 2.0], [5.0, 4.5, 4.0, -4.0, 1.0],
                                   [2.0, 1.0, _NAN, 0.0, 7.0], [_NAN, 9.0, 8.0, 7.5, 6.0]]))
register("median_dim_f32", lambda x: torch.median(x, 1), randperm_values(4, 7))
register("median_d0_keepdim_even_f64", lambda x: torch.median(x, 0, keepdim=True),
         randperm_values(6, 3, dtype=torch.float64))
register("median_nan_rows_f32", lambda x: torch.median(x, 1), _MEDIAN_NANS)
register("nanmedian_nan_rows_f32", lambda x: torch.nanmedian(x, -1), _MEDIAN_NANS)
register("nanmedian_all_nan_row_values_f64", lambda x: torch.nanmedian(x, 1).values,
         const(torch.tensor([[_NAN, _NAN, _NAN], [1.0, _NAN, 3.0]], dtype=torch.float64)))
register("median_i32", lambda x: torch.median(x, -1), randperm_values(2, 3, 9, dtype=torch.int32))
register("median_bf16_values", lambda x: torch.median(x, 1).values,
         randperm_values(3, 8, dtype=torch.bfloat16))
register("median_ties_values_f32", lambda x: torch.median(x, 1).values,
         const(torch.tensor([[5.0, 4.0, 4.0, 4.0, 1.0], [2.0, 2.0, 1.0, 1.0, 3.0]])))
register("median_all_f32", torch.median, randperm_values(5, 4))
register("median_all_nan_f32", torch.median, _MEDIAN_NANS)
register("nanmedian_all_f64", lambda x: torch.nanmedian(x.double()), _MEDIAN_NANS)
register("median_all_i64", torch.median, randperm_values(3, 3, dtype=torch.int64))
register("median_0d_f32", lambda x: torch.median(x, 0), randn())
register("median_all_empty_f32", torch.median, randn(0, 3))

# logcumsumexp: a masked log-sum-exp per prefix, shifted by its maximum,
# so that large and very negative inputs neither overflow nor underflow.
for dim in (0, 1, -1):
    register(f"logcumsumexp_d{dim if dim >= 0 else 'last'}_f32",
             lambda x, d=dim: torch.logcumsumexp(x, d), randn(4, 5, 6, scale=3.0))
register("logcumsumexp_f64", lambda x: torch.logcumsumexp(x, 1), randn(3, 9, dtype=torch.float64))
register("logcumsumexp_bf16", lambda x: torch.logcumsumexp(x, 1), randn(3, 9, dtype=torch.bfloat16))
register("logcumsumexp_wide_range_f32", lambda x: torch.logcumsumexp(x, 1),
         const(torch.tensor([[-1000.0, 0.0, 1000.0, -1000.0], [500.0, -500.0, 88.0, 89.0]])))
_INF = float("inf")
register("logcumsumexp_infinities_nan_f32", lambda x: torch.logcumsumexp(x, 1),
         const(torch.tensor([[-_INF, -_INF, 1.0, -_INF], [2.0, _INF, 3.0, -_INF],
                             [0.0, _NAN, 1.0, 2.0]])))
register("logcumsumexp_long_f32", lambda x: torch.logcumsumexp(x, 0), randn(300))
# Scanned dims over 128 lower to a loop over the dim (each step as eager's
# kernel); shorter ones to triangular reductions. Past 4096 these were
# refused (issue 15).
register("logcumsumexp_very_long_f64", lambda x: torch.logcumsumexp(x, -1),
         randn(2, 5000, dtype=torch.float64, scale=3.0))
register("logcumsumexp_long_infinities_nan_f16",
         lambda x: torch.logcumsumexp(x.masked_fill(x > 2.0, _INF)
                                      .masked_fill(x < -2.0, -_INF)
                                      .masked_fill(x.abs() < 0.01, _NAN), 0),
         randn(200, 3, dtype=torch.float16))
# Complex logcumsumexp: eager's loop of complex log-add-exp steps, whose
# imaginary parts are not reduced to (-pi, pi] (scale 3 gives many past
# pi, where a principal log of the prefix sums would differ by 2 pi); short
# and long dims, a 0-d input, and infinite and NaN parts: equal real parts
# -inf keep the running value, +inf add exp(+inf + bi) (b = 0 gives
# (inf, 0), both b = 0.5 (inf, pi/4)), a NaN part gives (NaN, NaN) from
# there on.
_C64, _C128 = torch.complex64, torch.complex128
register("logcumsumexp_d1_c64", lambda z: torch.logcumsumexp(z, 1), randn(3, 9, dtype=_C64, scale=3.0))
register("logcumsumexp_d0_c128", lambda z: torch.logcumsumexp(z, 0),
         randn(7, 2, 3, dtype=_C128, scale=3.0))
register("logcumsumexp_last_c128", lambda z: torch.logcumsumexp(z, -1), randn(2, 3, 20, dtype=_C128))
register("logcumsumexp_long_c64", lambda z: torch.logcumsumexp(z, 0), randn(300, 2, dtype=_C64))
register("logcumsumexp_0d_c64", lambda z: torch.logcumsumexp(z, 0), randn(dtype=_C64))
register("logcumsumexp_wide_range_c128", lambda z: torch.logcumsumexp(z, 1),
         const(torch.tensor([[-1000 + 1j, 0 - 2j, 1000 + 3j, -1000 - 3j],
                             [500 + 0.5j, -500 + 0j, 88 - 1j, 88 + 1j]], dtype=_C128)))
register("logcumsumexp_infinities_nan_c128", lambda z: torch.logcumsumexp(z, 1),
         const(torch.tensor([[complex(-_INF, 0.0), complex(-_INF, 3.0), 1 + 1j, complex(-_INF, 0.5)],
                             [2 + 0j, complex(_INF, 0.0), complex(_INF, 0.0), 3 - 1j],
                             [complex(_INF, 0.5), complex(_INF, 0.5), 1 + 0j, 0 + 0j],
                             [1 + 1j, complex(_NAN, 0.0), 1 + 0j, 2 + 0j],
                             [1 + 1j, 2 - 1j, complex(0.0, _NAN), 2 + 0j]], dtype=_C128)))
# Where C's complex functions meet infinities (review of session 69): two
# +inf real parts whose exponentials cancel to a NaN part, an infinite
# imaginary part next to a finite element (exp of a finite re with an
# infinite angle is NaN, even where e^re underflows), and -0 kept.
register("logcumsumexp_infinite_parts_c128", lambda z: torch.logcumsumexp(z, 1),
         const(torch.tensor([[complex(_INF, 0.0), complex(_INF, 3.0)],
                             [complex(_INF, 0.5), complex(_INF, -0.5)],
                             [complex(0.0, _INF), 800 + 1j],
                             [800 + 1j, complex(0.0, _INF)],
                             [complex(-0.0, 3.0), 1 + 0j]], dtype=_C128)))
register("logcumsumexp_equal_real_parts_c64", lambda z: torch.logcumsumexp(z, 0),
         const(torch.tensor([1 + 3j, 1 - 3j, 1 + 0.5j, 1 + 3.1j], dtype=_C64)))
register("cummax_very_long_f32", lambda x: torch.cummax(x, 0), randn(10_000))
register("cummin_long_ties_nan_d1_f64",
         lambda x: torch.cummin(x.masked_fill(x > 2.9, _NAN), 1),
         randint(-3, 4, 2, 300, 2, dtype=torch.float64))
register("cummax_long_ties_i32", lambda x: torch.cummax(x, -1),
         randint(-5, 5, 3, 400, dtype=torch.int32))
register("cummin_long_bool", lambda x: torch.cummin(x, 0),
         randint(0, 2, 200, 2, dtype=torch.bool))
register("cummax_long_u8", lambda x: torch.cummax(x, 0), randint(0, 255, 500, dtype=torch.uint8))
# i64 values carry a slab of the indices' type (i64): two loop-carried slabs
# and results of one type.
register("cummax_long_i64", lambda x: torch.cummax(x, 1), randint(-50, 50, 2, 300))

# bucketize / searchsorted: counts of the entries before each value.
_BOUNDS = const(torch.tensor([-1.5, -0.5, 0.0, 0.0, 0.25, 1.0, 2.0]), "sorted, one repeat")
for right in (False, True):
    side = "right" if right else "left"
    register(f"bucketize_{side}_f32", lambda x, b, r=right: torch.bucketize(x, b, right=r),
             randn(4, 5, scale=1.5), _BOUNDS)
    register(f"bucketize_{side}_on_boundaries_f32",
             lambda x, b, r=right: torch.bucketize(x, b, right=r),
             const(torch.tensor([-1.5, 0.0, 2.0, 3.0, -9.0, _NAN])), _BOUNDS)
    register(f"searchsorted_rows_{side}_f32",
             lambda s, x, r=right: torch.searchsorted(s, x, right=r),
             const(torch.tensor([[0.0, 1.0, 2.0, 3.0], [-2.0, -1.0, 5.0, 5.0]])),
             randn(2, 6, scale=2.0))
register("bucketize_int32_out_i64", lambda x, b: torch.bucketize(x, b, out_int32=True),
         randint(-5, 15, 3, 4), const(torch.tensor([0, 2, 4, 8, 10])))
register("bucketize_mixed_dtypes_f32_i64", lambda x, b: torch.bucketize(x, b),
         randn(3, 4, scale=4.0), const(torch.tensor([-3, -1, 0, 2, 5])))
register("searchsorted_side_right_1d_f64",
         lambda s, x: torch.searchsorted(s, x, side="right"),
         const(torch.tensor([0.0, 0.5, 0.5, 1.0], dtype=torch.float64)),
         const(torch.tensor([[0.5, 0.2], [1.0, -1.0]], dtype=torch.float64)))
register("searchsorted_sorter_f32",
         lambda s, x, i: torch.searchsorted(s, x, sorter=i),
         const(torch.tensor([3.0, 1.0, 2.0, 0.0])), randn(5, scale=2.0),
         const(torch.tensor([3, 1, 2, 0])))
register("searchsorted_scalar_i32", lambda s: torch.searchsorted(s, 4),
         const(torch.tensor([1, 3, 4, 4, 9], dtype=torch.int32)))

# mode: the smallest of the most frequent values along a dim, at the index
# of its last occurrence (eager's for rows of up to 16 entries; its sort is
# not stable past 16, so longer rows check the value each index picks).
register("mode_dim_i64", lambda x: torch.mode(x, 1), randint(0, 4, 5, 12))
register("mode_d0_keepdim_f32", lambda x: torch.mode(x, 0, keepdim=True),
         randint(-2, 3, 9, 4, dtype=torch.float32))
register("mode_ties_pick_smallest_f64", lambda x: torch.mode(x),
         const(torch.tensor([[3.0, 1.0, 3.0, 1.0, 2.0], [-1.0, 7.0, 7.0, -1.0, -1.0],
                             [4.0, 3.0, 2.0, 1.0, 0.5]], dtype=torch.float64)))
register("mode_long_rows_f32",
         lambda x: (lambda v, i: (v, x.gather(1, i[:, None])))(*torch.mode(x, 1)),
         randint(0, 6, 4, 100, dtype=torch.float32))
register("mode_nan_rows_values_f32", lambda x: torch.mode(x, 1).values,
         const(torch.tensor([[_NAN, _NAN, _NAN, _NAN], [1.0, _NAN, 1.0, 2.0]])))
register("mode_i8", lambda x: torch.mode(x, -1), randint(-3, 3, 2, 3, 7, dtype=torch.int8))
register("mode_u8", lambda x: torch.mode(x, -1), randint(250, 256, 3, 9, dtype=torch.uint8))
register("mode_bf16", lambda x: torch.mode(x, 1), randint(0, 3, 3, 8, dtype=torch.bfloat16))
register("mode_0d_f32", lambda x: torch.mode(x, 0), randn())
register("mode_all_nan_row_f32", lambda x: torch.mode(x, 1),
         const(torch.tensor([[_NAN, _NAN, _NAN], [_NAN, _NAN, _NAN]])))
