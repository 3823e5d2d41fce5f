"""Data movement: slice, select, narrow, cat, stack, split, chunk, views,
permutes, expand, flip, repeat, pad."""

import torch
import torch.nn.functional as F

from tests.registry.registry import DTYPE_NAMES, const, randbool, randint, randn, register

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
          torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)


def any_dtype(*shape, dtype):
    if dtype == torch.bool:
        return randbool(*shape)
    if dtype.is_floating_point:
        return randn(*shape, dtype=dtype)
    return randint(0 if dtype == torch.uint8 else -50, 50, *shape, dtype=dtype)


# Every dtype through a few pure data movements (exact results).
for dt in DTYPES:
    n = DTYPE_NAMES[dt]
    register(f"slice_step_{n}", lambda x: x[:, 1:7:2], any_dtype(3, 8, dtype=dt))
    register(f"cat_d1_{n}", lambda a, b: torch.cat([a, b], 1), any_dtype(2, 3, dtype=dt),
             any_dtype(2, 5, dtype=dt))
    register(f"permute_{n}", lambda x: x.permute(2, 0, 1).contiguous(),
             any_dtype(2, 3, 4, dtype=dt))

# slice / select / narrow
register("slice_d0_f32", lambda x: x[1:3], randn(5, 4))
register("slice_neg_f32", lambda x: x[:, -3:-1], randn(5, 6))
register("slice_end_past_f32", lambda x: x[2:100], randn(5, 4))
register("slice_step3_d2_f32", lambda x: x[..., ::3], randn(2, 3, 10))
register("slice_multi_f32", lambda x: x[1:, :2, 1::2], randn(4, 5, 6))
register("select_d0_f32", lambda x: x[2], randn(5, 4))
register("select_neg_f32", lambda x: x[:, -1], randn(5, 4))
register("select_d2_i64", lambda x: x.select(2, 1), randint(0, 9, 2, 3, 4))
register("narrow_f32", lambda x: torch.narrow(x, 1, 2, 3), randn(4, 6))
register("narrow_d0_i32", lambda x: x.narrow(0, 1, 2), randint(0, 9, 4, 6, dtype=torch.int32))
register("select_then_add_f32", lambda x: x[0] + x[-1], randn(3, 5))
register("slice_scatter_f32", lambda x, y: torch.slice_scatter(x, y, 1, 1, 3), randn(3, 5),
         randn(3, 2))
register("select_scatter_f32", lambda x, y: torch.select_scatter(x, y, 0, 1), randn(3, 5),
         randn(5))
register("setitem_slice_f32", lambda x: x.clone().index_fill(1, torch.tensor([0, 2]), 0.0),
         randn(3, 4))

# cat / stack
register("cat_d0_f32", lambda a, b: torch.cat([a, b]), randn(2, 4), randn(3, 4))
register("cat_three_f32", lambda a, b, c: torch.cat([a, b, c], -1), randn(2, 1), randn(2, 3),
         randn(2, 2))
register("cat_self_f32", lambda a: torch.cat([a, a, a], 1), randn(2, 3))
register("cat_rank4_d2_f32", lambda a, b: torch.cat([a, b], 2), randn(1, 2, 3, 4),
         randn(1, 2, 5, 4))
register("cat_promote_f32_i64", lambda a, b: torch.cat([a, b]), randn(2, 3), randint(0, 5, 2, 3))
register("stack_d0_f32", lambda a, b: torch.stack([a, b]), randn(3, 4), randn(3, 4))
register("stack_d1_f32", lambda a, b, c: torch.stack([a, b, c], 1), randn(3, 4), randn(3, 4),
         randn(3, 4))
register("stack_dlast_i32", lambda a, b: torch.stack([a, b], -1),
         randint(0, 9, 3, 4, dtype=torch.int32), randint(0, 9, 3, 4, dtype=torch.int32))
register("hstack_f32", lambda a, b: torch.hstack([a, b]), randn(3, 2), randn(3, 4))

# split / chunk / unbind
register("split_equal_f32", lambda x: torch.split(x, 2, 1), randn(3, 6))
register("split_uneven_f32", lambda x: torch.split(x, 4, 0), randn(10, 3))
register("split_sizes_f32", lambda x: torch.split(x, [1, 3, 2], -1), randn(2, 6))
register("chunk_3_f32", lambda x: torch.chunk(x, 3, 1), randn(2, 9))
register("chunk_uneven_f32", lambda x: torch.chunk(x, 3, 0), randn(7, 2))
register("chunk_sum_f32", lambda x: sum(torch.chunk(x, 4, -1)), randn(2, 8))
register("unbind_f32", lambda x: torch.unbind(x, 1), randn(2, 3, 4))
register("split_i64", lambda x: x.split(1, 0), randint(0, 9, 3, 4))

# views and reshapes
register("view_f32", lambda x: x.view(6, 4), randn(2, 3, 4))
register("reshape_infer_f32", lambda x: x.reshape(-1, 8), randn(2, 4, 4))
register("flatten_f32", lambda x: torch.flatten(x, 1), randn(2, 3, 4, 5))
register("unflatten_f32", lambda x: x.unflatten(1, (3, 4)), randn(2, 12))
register("transpose_f32", lambda x: x.transpose(0, 2).contiguous(), randn(2, 3, 4))
register("t_f32", lambda x: x.t() * 2, randn(3, 5))
register("mT_f32", lambda x: x.mT + 1, randn(2, 3, 5))
register("unsqueeze_f32", lambda x: x.unsqueeze(1) + 0, randn(3, 4))
register("squeeze_dim_f32", lambda x: x.squeeze(1) + 0, randn(3, 1, 4))
register("squeeze_all_f32", lambda x: x.squeeze() + 0, randn(1, 3, 1, 4))
register("expand_f32", lambda x: x.expand(3, 4, 5) + 0, randn(4, 1))
register("expand_as_f32", lambda x, y: x.expand_as(y) * y, randn(1, 5), randn(3, 5))
register("broadcast_to_i64", lambda x: torch.broadcast_to(x, (2, 3, 4)) + 0, randint(0, 9, 3, 1))
register("permute_rank4_f32", lambda x: x.permute(0, 2, 3, 1) * 1.0, randn(2, 3, 4, 5))
register("movedim_f32", lambda x: torch.movedim(x, 0, -1) + 0, randn(2, 3, 4))
register("view_as_reshape_chain_f32", lambda x: x.view(2, 12).t().reshape(4, 6) + 1,
         randn(2, 3, 4))
register("contiguous_after_transpose_f32", lambda x: x.transpose(0, 1).contiguous().view(-1),
         randn(3, 4))

# flip / roll / repeat / tile / pad / tril / triu
register("flip_f32", lambda x: torch.flip(x, [1]), randn(3, 4))
register("flip_two_dims_i32", lambda x: torch.flip(x, [0, 2]),
         randint(0, 9, 2, 3, 4, dtype=torch.int32))
register("roll_f32", lambda x: torch.roll(x, 2, 1), randn(3, 5))
register("repeat_f32", lambda x: x.repeat(2, 3), randn(2, 3))
register("repeat_new_dim_f32", lambda x: x.repeat(2, 1, 1), randn(2, 3))
# aten.repeat (one op, tiled by kiln-decompose-aten): ints, bools, a 0-d
# self, a count of 0 (an empty result) and a half type.
register("repeat_i64_two_new_dims", lambda x: x.repeat(3, 1, 2, 2), randint(-9, 9, 4, 5))
register("repeat_bool", lambda x: x.repeat(2, 3), randbool(3, 2))
register("repeat_scalar_f32", lambda x: x.repeat(4), randn())
register("repeat_zero_count_f32", lambda x: (x.repeat(0, 2), x.repeat(1, 2) + 1), randn(2, 3))
register("repeat_bf16", lambda x: x.repeat(1, 2, 3), randn(2, 3, 4, dtype=torch.bfloat16))
register("tile_i64", lambda x: torch.tile(x, (2,)), randint(0, 9, 3, 4))
register("repeat_interleave_f32", lambda x: torch.repeat_interleave(x, 2, dim=1), randn(2, 3))
register("pad_constant_f32", lambda x: F.pad(x, (1, 2)), randn(2, 3))
register("pad_constant_value_f32", lambda x: F.pad(x, (1, 1, 2, 0), value=-1.5), randn(2, 3, 4))
# Negative amounts crop (issue 15: refused before), and padding an empty
# tensor is all padding.
register("pad_constant_crop_f32", lambda x: F.pad(x, (-1, 2, 1, -2), value=0.5), randn(2, 4, 5))
register("pad_constant_crop_whole_dim_i64", lambda x: F.pad(x, (-3, -2)), randint(0, 9, 2, 5))
register("pad_constant_bool_value_two", lambda m: F.pad(m, (1, 2), value=2.0), randbool(2, 3))
register("pad_constant_empty_input_f32", lambda x: F.pad(x, (1, 1, 0, 0, 2, 1), value=3.0),
         randn(0, 3, 3))
register("pad_reflect_f32", lambda x: F.pad(x, (2, 1), mode="reflect"), randn(1, 2, 5))
register("pad_replicate_f32", lambda x: F.pad(x, (1, 2, 1, 1), mode="replicate"),
         randn(1, 2, 3, 4))
register("tril_f32", torch.tril, randn(4, 5))
register("triu_diag1_f32", lambda x: torch.triu(x, 1), randn(3, 4, 4))
register("diagonal_f32", lambda x: torch.diagonal(x) + 0, randn(4, 4))
register("alias_copy_f32", lambda x: torch.ops.aten.alias(x) + 0, randn(2, 3))
register("diag_and_diagonal_copy_f32",
         lambda x, v: (torch.diag(x, 1), torch.diag(v, -1), torch.diagonal_copy(x, -1) * 2),
         randn(4, 5), randn(3))
# prims.collapse: dims start..end (inclusive) merged into one.
register("prims_collapse_f32",
         lambda x: (torch.ops.prims.collapse(x, 1, 3) * 2, torch.ops.prims.collapse(x, 0, 0) + 1,
                    torch.ops.prims.collapse(x, 0, 3) - 1),
         randn(2, 3, 4, 5))

# unfold: sliding windows along a dim as a new last dim (overlapping, with
# gaps, the whole extent, a 0-d input).
register("unfold_overlapping_f32", lambda x: x.unfold(1, 3, 1), randn(2, 6, 3))
register("unfold_gaps_d0_i64", lambda x: x.unfold(0, 2, 3), randint(-9, 9, 8, 2))
register("unfold_last_whole_extent_f64", lambda x: x.unfold(-1, 5, 2),
         randn(3, 5, dtype=torch.float64))
register("unfold_then_sum_f32", lambda x: x.unfold(2, 4, 2).sum(-1), randn(1, 2, 9))
register("unfold_0d_f32", lambda x: x.unfold(0, 1, 1) * 2, randn())
# One aten.as_strided, read through its own indexing: a million-element
# frame view (an 8 MiB position table before), bools and a half type.
register("unfold_frames_1m_f32", lambda x: x.unfold(1, 64, 16), randn(256, 1024))
register("unfold_bool", lambda x: x.unfold(0, 3, 2), randbool(7, 2))
register("unfold_f16_then_mul", lambda x: x.unfold(-1, 4, 3) * 2, randn(2, 3, 10, dtype=torch.float16))
# diagonal_scatter: self with one diagonal replaced.
for offset in (0, 2, -1):
    register(f"diagonal_scatter_offset{offset}_f32".replace("-", "m"),
             lambda x, s, o=offset: torch.diagonal_scatter(x, s, o),
             randn(4, 5), randn(min(4, 5 - offset) if offset >= 0 else min(4 + offset, 5)))
register("diagonal_scatter_dims_3d_i32",
         lambda x, s: torch.diagonal_scatter(x, s, 1, 2, 0),
         randint(-9, 9, 3, 2, 4, dtype=torch.int32), randint(100, 200, 2, 2, dtype=torch.int32))


def _write_diagonal(x, s):
    y = x.clone()
    y.diagonal().copy_(s)   # functionalized to diagonal_scatter
    return y


register("diagonal_write_through_view_f32", _write_diagonal, randn(3, 3), randn(3))
# tril_indices / triu_indices: constant coordinate lists.
register("tril_indices_i64", lambda x: x + torch.tril_indices(4, 3).sum(0), randint(0, 5, 9))
register("triu_indices_offset_i64", lambda x: torch.triu_indices(3, 5, 1) * x, randint(0, 5, 2, 1))
register("tril_indices_negative_offset_i32",
         lambda x: torch.tril_indices(5, 4, -2, dtype=torch.int32) + x,
         randint(0, 5, 1, dtype=torch.int32))

# The copy variants of views, which the client decomposes with torch's own
# decompositions (a view, then a clone).
register("view_copy_f32", lambda x: torch.view_copy(x, (5, 4)), randn(4, 5))
register("permute_copy_f64", lambda x: torch.permute_copy(x, (2, 0, 1)),
         randn(2, 3, 4, dtype=torch.float64))
register("narrow_copy_i32", lambda x: torch.narrow_copy(x, 1, 1, 3),
         randint(-9, 9, 3, 5, dtype=torch.int32))
register("as_strided_copy_f32", lambda x: torch.as_strided_copy(x, (3, 3), (1, 4), 1), randn(4, 5))
register("as_strided_scatter_f32", lambda x, s: torch.as_strided_scatter(x, s, (3, 3), (1, 4), 1),
         randn(4, 5), randn(3, 3))
register("as_strided_scatter_every_other_i64",
         lambda x, s: torch.as_strided_scatter(x, s, (2, 3), (6, 2), 1), randint(-9, 9, 3, 4),
         randint(-9, 9, 2, 3))
register("unbind_copy_f16", lambda x: torch.unbind_copy(x, 1), randn(3, 4, dtype=torch.float16))

# Tensor.view(dtype) between types of one width: the bits read as the
# other type (float <-> int, f16 <-> bf16), and between the 8-bit types
# (uint8 <-> int8, bool -> uint8). Was UNIMPLEMENTED.
register("view_dtype_f32_as_i32", lambda x: x.view(torch.int32),
         const(torch.tensor([[1.0, -0.0, float("inf"), float("nan")], [1e-40, -2.5, 3.0e38, 0.0]])))
register("view_dtype_i64_as_f64", lambda x: (x.view(torch.float64) * 2).view(torch.int64),
         randint(0, 1 << 62, 3, 4))
register("view_dtype_f16_bf16_i16", lambda x: (x.view(torch.bfloat16), x.view(torch.int16)),
         randn(3, 5, dtype=torch.float16))
register("view_dtype_u8_i8", lambda x: (x.view(torch.int8), x.view(torch.int8).view(torch.uint8) + 1),
         randint(0, 256, 4, 6, dtype=torch.uint8))
register("view_dtype_bool_u8", lambda x: x.view(torch.uint8) * 3, randint(0, 2, 5, dtype=torch.bool))

# resize_ and resize_as_ (aten.resize): the leading elements, in row-major
# order, viewed with the new shape. Growing leaves eager's new elements
# uninitialised, so these keep or lower the count (growth is checked in
# tests/e2e/test_e2e_views.py). torch.export itself fails on an input
# resized to a higher rank (IndexError in its guards), so none does. Was
# UNIMPLEMENTED.
for dt in (torch.float32, torch.int64, torch.uint8, torch.bool, torch.float16):
    register(f"resize_as_other_shape_{DTYPE_NAMES[dt]}", lambda x, o: x.resize_as_(o),
             any_dtype(4, 3, dtype=dt), randn(2, 6))
register("resize_as_111_to_0d_f64", lambda x, o: x.resize_as_(o),
         randn(1, 1, 1, dtype=torch.float64), randn())
register("resize_as_rank3_to_2_i32", lambda x, o: x.resize_as_(o) * 2,
         randint(-9, 9, 5, 5, 5, dtype=torch.int32), randn(25, 5))
register("resize_shrink_clone_f32", lambda x: x.clone().resize_(2, 3) * 2, randn(4, 4))
