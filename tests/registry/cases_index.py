"""Embedding and the index families: index, index_select, gather, scatter,
index_put (with and without accumulate), index_add."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from tests.registry.registry import DTYPE_NAMES, case, const, randbool, randint, randn, register


@case("embedding_f32", randint(0, 10, 2, 5), num=10, dim=4)
@case("embedding_1d_f32", randint(0, 20, 7), num=20, dim=8)
@case("embedding_3d_idx_f32", randint(0, 6, 2, 3, 2), num=6, dim=3)
@case("embedding_i32_idx_f32", randint(0, 10, 4, dtype=torch.int32), num=10, dim=5)
class Embedding(nn.Module):
    def __init__(self, num: int, dim: int):
        super().__init__()
        self.emb = nn.Embedding(num, dim)

    def forward(self, idx):
        return self.emb(idx)


@case("embedding_padding_idx_f32", randint(0, 8, 3, 4))
class EmbeddingPadding(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(8, 4, padding_idx=0)

    def forward(self, idx):
        return self.emb(idx)


register("embedding_functional_weight_input_f64", lambda idx, w: F.embedding(idx, w),
         randint(0, 5, 3, 2), randn(5, 3, dtype=torch.float64))
# Every flag of aten.embedding (issue 15: this variant crashed kilnd). Only
# padding_idx (its row's gradient) and sparse/scale_grad_by_freq (the
# gradient's form) touch backward; the forward is a row lookup either way.
register("embedding_all_flags_f32",
         lambda w, idx: torch.ops.aten.embedding(w, idx, 2, True, True),
         randn(6, 4), randint(0, 6, 3, 5))
register("embedding_negative_padding_idx_f32",
         lambda idx, w: F.embedding(idx, w, padding_idx=-1, scale_grad_by_freq=True,
                                    sparse=True), randint(0, 7, 4, 3), randn(7, 5))
register("embedding_max_norm_style_flags_f64",
         lambda w, idx: torch.ops.aten.embedding(w, idx, -1, False, True),
         randn(5, 3, dtype=torch.float64), randint(0, 5, 8))

# index_select
register("index_select_d0_f32", lambda x, i: torch.index_select(x, 0, i), randn(5, 4),
         randint(0, 5, 3))
register("index_select_d1_f32", lambda x, i: torch.index_select(x, 1, i), randn(3, 6),
         randint(0, 6, 8))
register("index_select_dlast_i32", lambda x, i: x.index_select(-1, i),
         randint(0, 99, 2, 3, 4, dtype=torch.int32), randint(0, 4, 2))
register("index_select_i32_index_f16", lambda x, i: x.index_select(0, i),
         randn(4, 3, dtype=torch.float16), randint(0, 4, 5, dtype=torch.int32))

# advanced indexing (aten.index.Tensor)
register("index_tensor_d0_f32", lambda x, i: x[i], randn(5, 4), randint(0, 5, 3))
register("index_tensor_2d_idx_f32", lambda x, i: x[i], randn(5, 4), randint(0, 5, 2, 3))
register("index_tensor_d1_f32", lambda x, i: x[:, i], randn(3, 6), randint(0, 6, 4))
register("index_tensor_two_f32", lambda x, i, j: x[i, j], randn(5, 6), randint(0, 5, 4),
         randint(0, 6, 4))
register("index_tensor_bcast_f32", lambda x, i, j: x[i, j], randn(5, 6), randint(0, 5, 3, 1),
         randint(0, 6, 1, 4))
register("index_tensor_neg_f32", lambda x, i: x[i], randn(5, 4), randint(-5, 0, 3))
register("index_tensor_i64", lambda x, i: x[i], randint(0, 99, 5, 4), randint(0, 5, 3))
register("index_const_idx_f32", lambda x: x[torch.tensor([2, 0, 1])], randn(4, 3))
register("index_mask_via_where_f32", lambda x, m: torch.where(m, x, 0).sum(0), randn(4, 3),
         randbool(4, 3))
# advanced indexing with None (whole dims): adjacent index tensors replace
# their dims in place, non-adjacent ones put the broadcast dims first
register("index_none_apart_f32", lambda x, i, j: x[i, :, j], randn(3, 4, 5),
         randint(0, 3, 2), randint(-5, 5, 2))
register("index_none_apart_bcast_f32", lambda x, i, j: x[i, :, :, j], randn(4, 3, 2, 5),
         randint(0, 4, 2, 1), randint(0, 5, 3))
register("index_none_adjacent_pair_f32", lambda x, i, j: x[:, i, j], randn(3, 4, 5),
         randint(0, 4, 2, 1), randint(0, 5, 3))
register("index_ellipsis_last_f32", lambda x, i: x[..., i], randn(2, 3, 6), randint(-6, 6, 4))
register("index_none_mid_2d_idx_i64", lambda x, i: x[:, i], randint(0, 99, 3, 5, 2),
         randint(0, 5, 2, 2, dtype=torch.int32))
register("index_none_lead_trailing_f16", lambda x, i: x[:, :, i, :],
         randn(2, 3, 4, 2, dtype=torch.float16), randint(0, 4, 3))

# gather
register("gather_d0_f32", lambda x, i: torch.gather(x, 0, i), randn(4, 5), randint(0, 4, 3, 5))
# A 0-d self is the 1-element 1-d one (issue 15, OpInfo gather and
# index_select: refused as INVALID_ARGUMENT).
register("gather_0d_self_vector_index_f32", lambda x, i: torch.gather(x, 0, i), randn(),
         const(torch.tensor([0, 0, 0])))
register("gather_0d_self_0d_index_i64", lambda x, i: torch.gather(x, 0, i), randint(-9, 9),
         const(torch.tensor(0)))
register("index_select_0d_self_f16", lambda x, i: torch.index_select(x, 0, i),
         randn(dtype=torch.float16), const(torch.tensor([0])))
register("gather_d1_f32", lambda x, i: torch.gather(x, 1, i), randn(4, 5), randint(0, 5, 4, 2))
register("gather_dlast_3d_f32", lambda x, i: x.gather(-1, i), randn(2, 3, 6),
         randint(0, 6, 2, 3, 4))
register("gather_i32", lambda x, i: x.gather(1, i), randint(0, 99, 3, 4, dtype=torch.int32),
         randint(0, 4, 3, 4))
register("gather_smaller_f32", lambda x, i: x.gather(1, i), randn(4, 6), randint(0, 6, 2, 3))
register("take_along_dim_f32", lambda x: torch.take_along_dim(x, x.argsort(1), 1),
         randn(3, 5))

# scatter family
register("scatter_src_d0_f32", lambda x, i, s: x.scatter(0, i, s), randn(4, 5),
         const(torch.tensor([[0, 1, 2, 3, 0], [3, 2, 1, 0, 1]])), randn(2, 5))
register("scatter_src_d1_f32", lambda x, i, s: torch.scatter(x, 1, i, s), randn(3, 6),
         const(torch.tensor([[5, 0], [1, 2], [4, 3]])), randn(3, 2))
register("scatter_value_f32", lambda x, i: x.scatter(1, i, 2.5), randn(3, 6),
         const(torch.tensor([[5, 0], [1, 2], [4, 3]])))
register("scatter_add_f32", lambda x, i, s: x.scatter_add(1, i, s), randn(3, 6),
         randint(0, 6, 3, 4), randn(3, 4))
register("scatter_add_d0_i64", lambda x, i, s: x.scatter_add(0, i, s), randint(0, 9, 4, 3),
         randint(0, 4, 6, 3), randint(0, 9, 6, 3))
register("scatter_reduce_sum_f32", lambda x, i, s: x.scatter_reduce(1, i, s, "sum"),
         randn(3, 5), randint(0, 5, 3, 4), randn(3, 4))
register("scatter_reduce_amax_f32",
         lambda x, i, s: x.scatter_reduce(1, i, s, "amax", include_self=False),
         randn(3, 5), randint(0, 5, 3, 4), randn(3, 4))
# Dims longer than 16 scatter by a loop over the index (shorter ones by a
# dense comparison): the values meeting at one position combine in index
# order either way.
register("scatter_add_long_dim_f32", lambda x, i, s: x.scatter_add(1, i, s), randn(3, 40),
         randint(0, 40, 3, 90), randn(3, 90))
register("scatter_src_long_dim_f32", lambda x, i, s: x.scatter(1, i, s), randn(2, 40),
         const(torch.stack([torch.arange(39, -1, -1), torch.arange(40)])), randn(2, 40))
register("scatter_reduce_amin_long_dim_no_self_f64",
         lambda x, i, s: x.scatter_reduce(1, i, s, "amin", include_self=False),
         randn(2, 30, 3, dtype=torch.float64), randint(0, 30, 2, 45, 3),
         randn(2, 45, 3, dtype=torch.float64))
register("scatter_reduce_mean_long_dim_d0_f32",
         lambda x, i, s: x.scatter_reduce(0, i, s, "mean"), randn(50, 2), randint(0, 50, 80, 2),
         randn(80, 2))
register("scatter_add_long_dim_i64", lambda x, i, s: x.scatter_add(0, i, s),
         randint(0, 9, 20), randint(0, 20, 64), randint(0, 9, 64))
# an index smaller than self outside the scattered dim writes self's corner
register("scatter_src_smaller_index_f32", lambda x, i, s: x.scatter(1, i, s), randn(4, 6),
         const(torch.tensor([[5, 0], [1, 2], [4, 3]])), randn(3, 4))
register("scatter_add_smaller_index_i32", lambda x, i, s: x.scatter_add(0, i, s),
         randint(0, 9, 4, 5, 3, dtype=torch.int32), randint(0, 4, 6, 2, 2),
         randint(0, 9, 6, 3, 2, dtype=torch.int32))
register("scatter_reduce_amin_smaller_index_no_self_f32",
         lambda x, i, s: x.scatter_reduce(1, i, s, "amin", include_self=False),
         randn(5, 7), randint(0, 7, 3, 4), randn(4, 4))
register("scatter_reduce_prod_smaller_index_u8",
         lambda x, i, s: x.scatter_reduce(0, i, s, "prod"),
         randint(0, 5, 4, 6, dtype=torch.uint8), randint(0, 4, 3, 2),
         randint(0, 5, 3, 2, dtype=torch.uint8))
register("scatter_value_0d_f32", lambda x, i: x.scatter(0, i, 2.5), randn(),
         const(torch.tensor(0)))
register("scatter_reduce_sum_0d_bool",
         lambda x, i, s: x.scatter_reduce(0, i, s, "sum", include_self=False),
         randint(0, 2, dtype=torch.bool), const(torch.tensor(0)),
         randint(0, 2, dtype=torch.bool))
register("scatter_reduce_mean_f32", lambda x, i, s: x.scatter_reduce(1, i, s, "mean"),
         randn(3, 5), randint(0, 5, 3, 6), randn(3, 6))
register("scatter_reduce_mean_no_self_f16",
         lambda x, i, s: x.scatter_reduce(0, i, s, "mean", include_self=False),
         randn(4, 3, dtype=torch.float16), randint(0, 4, 5, 3), randn(5, 3, dtype=torch.float16))
register("scatter_reduce_mean_floor_i32",
         lambda x, i, s: x.scatter_reduce(1, i, s, "mean", include_self=False),
         randint(-20, 20, 3, 4, dtype=torch.int32), randint(0, 4, 3, 7),
         randint(-20, 20, 3, 7, dtype=torch.int32))
register("scatter_reduce_mean_u8", lambda x, i, s: x.scatter_reduce(0, i, s, "mean"),
         randint(0, 255, 4, 5, dtype=torch.uint8), randint(0, 4, 6, 5),
         randint(0, 255, 6, 5, dtype=torch.uint8))
# bool scatter reductions combine as eager's: sum/amax are or, prod/amin are
# and (issue 15, OpInfo: sum was an xor, amax/amin signed i1 max/min, and
# amin without self started from false; wrong answers).
_BOOL_HITS = const(torch.tensor([[0, 0, 1, 3, 3, 3], [2, 2, 2, 4, 0, 0]]), "repeats")
register("scatter_add_bool", lambda x, i, s: x.scatter_add(1, i, s),
         randint(0, 2, 2, 5, dtype=torch.bool), _BOOL_HITS, randint(0, 2, 2, 6, dtype=torch.bool))
for _how in ("sum", "prod", "amax", "amin"):
    for _self in (True, False):
        register(f"scatter_reduce_{_how}_{'self' if _self else 'no_self'}_bool",
                 lambda x, i, s, h=_how, w=_self: x.scatter_reduce(1, i, s, h, include_self=w),
                 randint(0, 2, 2, 5, dtype=torch.bool), _BOOL_HITS,
                 randint(0, 2, 2, 6, dtype=torch.bool))
# mean counts in self's type as eager does: a uint8 count of 256 wraps to 0
# (read as 1).
register("scatter_reduce_mean_wrapped_count_u8",
         lambda x, i, s: x.scatter_reduce(0, i, s, "mean"),
         randint(0, 3, 2, dtype=torch.uint8), const(torch.zeros(255, dtype=torch.int64)),
         randint(0, 3, 255, dtype=torch.uint8))
# scatter(..., reduce='add'|'multiply'): the legacy overloads combine with self.
register("scatter_reduce_add_overload_f32", lambda x, i, s: x.scatter(1, i, s, reduce="add"),
         randn(3, 5), randint(0, 5, 3, 4), randn(3, 4))
register("scatter_value_multiply_overload_i32",
         lambda x, i: x.scatter(0, i, 3, reduce="multiply"),
         randint(-4, 4, 4, 3, dtype=torch.int32), randint(0, 4, 5, 3))
register("scatter_reduce_multiply_overload_bool",
         lambda x, i, s: x.scatter(1, i, s, reduce="multiply"),
         randint(0, 2, 2, 5, dtype=torch.bool), _BOOL_HITS, randint(0, 2, 2, 6, dtype=torch.bool))
register("one_hot_i64", lambda i: F.one_hot(i, 6), randint(0, 6, 2, 4))

# index_put (x[idx] = v) with and without accumulate, index_add
register("index_put_f32", lambda x, i, v: torch.index_put(x, (i,), v),
         randn(5, 3), const(torch.tensor([4, 0, 2])), randn(3, 3))
register("index_put_bcast_value_f32", lambda x, i, v: x.index_put((i,), v),
         randn(5, 3), const(torch.tensor([1, 3])), randn(3))
register("index_put_two_idx_f32", lambda x, i, j, v: x.index_put((i, j), v),
         randn(4, 5), const(torch.tensor([0, 3, 1])), const(torch.tensor([4, 0, 2])), randn(3))
register("index_put_accumulate_f32", lambda x, i, v: x.index_put((i,), v, accumulate=True),
         randn(5, 3), randint(0, 5, 6), randn(6, 3))
register("index_put_accumulate_i32", lambda x, i, v: x.index_put((i,), v, accumulate=True),
         randint(0, 9, 5, dtype=torch.int32), randint(0, 5, 8),
         randint(0, 9, 8, dtype=torch.int32))
register("setitem_tensor_index_f32", lambda x, i: x.clone().index_put_((i,), torch.tensor(0.0)),
         randn(5, 3), const(torch.tensor([1, 4])))
register("index_add_f32", lambda x, i, s: x.index_add(0, i, s), randn(5, 3), randint(0, 5, 4),
         randn(4, 3))
register("index_add_alpha_f64", lambda x, i, s: x.index_add(1, i, s, alpha=0.5),
         randn(3, 5, dtype=torch.float64), randint(0, 5, 2), randn(3, 2, dtype=torch.float64))
register("index_put_none_f32", lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v),
         randn(3, 5), const(torch.tensor([4, 0, 2])), randn(3, 3))
register("index_put_none_bcast_value_f64",
         lambda x, i, v: torch.ops.aten.index_put(x, [None, None, i], v),
         randn(2, 3, 4, dtype=torch.float64), const(torch.tensor([3, -4])),
         randn(2, dtype=torch.float64))
register("index_put_none_apart_accumulate_f32",
         lambda x, i, j, v: torch.ops.aten.index_put(x, [i, None, j], v, True),
         randn(3, 4, 5), randint(0, 3, 6), randint(0, 5, 6), randn(6, 4))
register("index_put_none_adjacent_i32",
         lambda x, i, j, v: torch.ops.aten.index_put(x, [None, i, j], v),
         randint(0, 9, 2, 3, 4, dtype=torch.int32), const(torch.tensor([[0], [2]])),
         const(torch.tensor([1, 3])), randint(0, 9, 2, 2, 2, dtype=torch.int32))


def _setitem_columns(x, i):
    y = x.clone()
    y[:, i] = 0.0  # index_put with [None, i] after decomposition
    return y


register("setitem_none_scalar_f32", _setitem_columns, randn(4, 5), const(torch.tensor([1, 4])))
register("masked_scatter_like_where_f32", lambda x, m, y: torch.where(m, y, x), randn(3, 4),
         randbool(3, 4), randn(3, 4))
for dt in (torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.bool):
    n = DTYPE_NAMES[dt]
    src = randbool(6, 3) if dt == torch.bool else (
        randn(6, 3, dtype=dt) if dt.is_floating_point else randint(0, 100, 6, 3, dtype=dt))
    register(f"index_select_{n}", lambda x, i: x.index_select(0, i), src, randint(0, 6, 4))
    register(f"gather_{n}", lambda x, i: x.gather(1, i), src, randint(0, 3, 6, 2))

# as_strided over the row-major elements of its input (issue 15): sliding
# windows that overlap, a transposing stride, a storage offset, a 0 stride,
# and an intermediate value.
register("as_strided_sliding_windows_f32", lambda x: x.as_strided((5, 4), (2, 1)), randn(12))
register("as_strided_transposed_offset_f32", lambda x: x.as_strided((3, 2), (1, 3), 2),
         randn(3, 4))
register("as_strided_zero_stride_i64", lambda x: x.as_strided((3, 4), (0, 1)),
         randint(-9, 9, 4, 4))
register("as_strided_of_intermediate_f32", lambda x: (x * 2).as_strided((2, 2, 2), (4, 1, 2)),
         randn(2, 4))
register("as_strided_broadcast_offset_scalar_i32",
         lambda x: (x.as_strided((1, 3, 4), (5, 0, 1), 2), x.as_strided((), (), 7)),
         randint(-9, 9, 3, 4, dtype=torch.int32))
# masked_scatter (issue 15): the k-th set position takes source's k-th element.
register("masked_scatter_f32", lambda x, m, s: x.masked_scatter(m, s),
         randn(4, 5), randbool(4, 5), randn(30))
register("masked_scatter_broadcast_mask_f32", lambda x, m, s: x.masked_scatter(m, s),
         randn(3, 4), randbool(4), randn(3, 4))
# A large mask: the running count of set positions is a linear scan (as a
# quadratic one, 262,144 positions took 7e10 steps).
register("masked_scatter_large_f32", lambda x, m, s: x.masked_scatter(m, s),
         randn(256, 1024), randint(0, 2, 256, 1024, dtype=torch.bool), randn(256, 1024))
register("masked_scatter_i32", lambda x, m, s: x.masked_scatter(m, s),
         randint(-5, 5, 2, 6, dtype=torch.int32), randbool(2, 6),
         randint(10, 20, 12, dtype=torch.int32))

# index_put with one boolean mask: x[mask] = v (one value, one row, or a
# row per set position), with and without accumulate.
_MASK = const(torch.tensor([[True, False, True], [False, False, True],
                            [True, True, False], [False, False, False]]))
register("index_put_bool_mask_scalar_f32",
         lambda x, m: torch.index_put(x, (m,), torch.tensor(7.5)), randn(4, 3), _MASK)
register("index_put_bool_mask_per_position_f32",
         lambda x, m, v: torch.index_put(x, (m,), v), randn(4, 3), _MASK, randn(5))
register("index_put_bool_mask_accumulate_i64",
         lambda x, m, v: torch.index_put(x, (m,), v, accumulate=True),
         randint(-9, 9, 4, 3), _MASK, randint(-9, 9, 5))
register("index_put_bool_row_mask_rows_f32",
         lambda x, m, v: torch.index_put(x, (m,), v),
         randn(4, 3), const(torch.tensor([True, False, True, True])), randn(3, 3))
register("index_put_bool_row_mask_one_row_f64",
         lambda x, m, v: torch.index_put(x, (m,), v),
         randn(4, 3, dtype=torch.float64), const(torch.tensor([False, True, True, False])),
         randn(3, dtype=torch.float64))


def _masked_assign(x):
    y = x.clone()
    y[x > 0.5] = -1.0
    return y


register("masked_assign_setitem_f32", _masked_assign, randn(3, 4))

# embedding_bag: sum (weighted per sample), mean and max over bags cut by
# offsets (an empty bag gives zeros), padding_idx left out, the last offset
# included, and every result of the op (offset2bag, bag sizes, max indices)
# as eager's CPU kernel gives them.
_BAG_INDICES = const(torch.tensor([1, 2, 4, 5, 4, 3, 0, 7]))
_BAG_OFFSETS = const(torch.tensor([0, 2, 2, 5]))
for mode in ("sum", "mean", "max"):
    register(f"embedding_bag_{mode}_f32",
             lambda w, i, o, m=mode: F.embedding_bag(i, w, o, mode=m),
             randn(10, 3), _BAG_INDICES, _BAG_OFFSETS)
    register(f"embedding_bag_{mode}_all_results_f32",
             lambda w, i, o, m=mode: torch.ops.aten._embedding_bag(
                 w, i, o, False, {"sum": 0, "mean": 1, "max": 2}[m], False, None, False, -1),
             randn(10, 3), _BAG_INDICES, _BAG_OFFSETS)
    register(f"embedding_bag_{mode}_padding_all_results_f32",
             lambda w, i, o, m=mode: torch.ops.aten._embedding_bag_forward_only(
                 w, i, o, False, {"sum": 0, "mean": 1, "max": 2}[m], False, None, False, 4),
             randn(10, 3), _BAG_INDICES, _BAG_OFFSETS)
# Sum without padding_idx off the fast path of torch's meta function (f64
# and bf16 weights, f64 per-sample weights) declares offset2bag filled,
# which its fast path (f32, f16) declares empty. (For bf16 eager's kernel
# then returns it empty all the same; Kiln gives the declared shape, so
# that case reads the sums only.)
register("embedding_bag_sum_all_results_f64",
         lambda w, i, o: torch.ops.aten._embedding_bag_forward_only(
             w, i, o, False, 0, False, None, False, -1),
         randn(10, 3, dtype=torch.float64), _BAG_INDICES, _BAG_OFFSETS)
register("embedding_bag_sum_bf16",
         lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"),
         randn(10, 3, dtype=torch.bfloat16), _BAG_INDICES, _BAG_OFFSETS)
register("embedding_bag_per_sample_weights_f64",
         lambda w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
         randn(10, 4, dtype=torch.float64), _BAG_INDICES, _BAG_OFFSETS,
         randn(8, dtype=torch.float64))
register("embedding_bag_per_sample_weights_f32",
         lambda w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
         randn(10, 4), _BAG_INDICES, _BAG_OFFSETS, randn(8))
register("embedding_bag_include_last_offset_f32",
         lambda w, i, o: F.embedding_bag(i, w, o, mode="mean", include_last_offset=True),
         randn(10, 4), _BAG_INDICES, const(torch.tensor([0, 3, 3, 8])))
register("embedding_bag_2d_input_max_f64",
         lambda w, i: F.embedding_bag(i, w, mode="max"),
         randn(12, 5, dtype=torch.float64), randint(0, 12, 4, 3))
register("embedding_bag_module_mean_padding_f32", nn.EmbeddingBag, randint(0, 20, 3, 6),
         num_embeddings=20, embedding_dim=8, mode="mean", padding_idx=2)
register("embedding_bag_int32_indices_f32",
         lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"),
         randn(10, 3), const(torch.tensor([1, 2, 4, 5, 9], dtype=torch.int32)),
         const(torch.tensor([0, 1, 3], dtype=torch.int32)))
register("embedding_bag_include_last_offset_max_f32",
         lambda w, i, o: F.embedding_bag(i, w, o, mode="max", include_last_offset=True),
         randn(10, 4), _BAG_INDICES, const(torch.tensor([0, 3, 3, 8])))
for mode in (0, 1, 2):
    register(f"embedding_bag_int32_all_results_mode{mode}_f32",
             lambda w, i, o, m=mode: torch.ops.aten._embedding_bag_forward_only(
                 w, i, o, False, m, False, None, False, -1),
             randn(10, 3), const(torch.tensor([1, 2, 4, 5, 4, 3, 0, 7], dtype=torch.int32)),
             const(torch.tensor([0, 3, 3, 6], dtype=torch.int32)))
# A non-finite weight row another bag (or padding) reads stays out of the
# bags that do not read it, as in eager.
register("embedding_bag_nonfinite_row_elsewhere_f32",
         lambda w, i, o: (F.embedding_bag(i, w, o, mode="sum"),
                          F.embedding_bag(i, w, o, mode="mean", padding_idx=4)),
         const(torch.tensor([[1.0, 2.0], [float("inf"), 0.0], [3.0, 4.0], [float("nan"), 1.0],
                             [float("inf"), float("nan")], [5.0, 6.0]])),
         const(torch.tensor([0, 2, 1, 5, 4, 3, 0])), const(torch.tensor([0, 2, 4, 5])))

# embedding_renorm (F.embedding with max_norm): the rows the indices name
# (duplicates once) scaled down to max_norm where their norm exceeds it;
# the rows no index names are kept even when over. F.embedding itself
# renormalises its weight argument in place (an input mutation).
_RENORM_INDICES = const(torch.tensor([[1, 2, 2], [7, 0, 1]]))
register("embedding_renorm_f32",
         lambda w, i: torch.ops.aten.embedding_renorm(w, i, 1.0, 2.0),
         randn(10, 4), _RENORM_INDICES)
register("embedding_renorm_norm1_f64",
         lambda w, i: torch.ops.aten.embedding_renorm(w, i, 2.5, 1.0),
         randn(10, 4, dtype=torch.float64), _RENORM_INDICES)
register("embedding_renorm_inf_norm_f32",
         lambda w, i: torch.ops.aten.embedding_renorm(w, i, 0.5, float("inf")),
         randn(10, 4), _RENORM_INDICES)
register("embedding_renorm_f16",
         lambda w, i: torch.ops.aten.embedding_renorm(w, i, 1.0, 2.0),
         randn(10, 4, dtype=torch.float16), const(torch.tensor([3, 9, 3, 0], dtype=torch.int32)))
register("embedding_max_norm_f32",
         lambda i, w: F.embedding(i, w, max_norm=1.0),
         _RENORM_INDICES, randn(10, 4))

# Data-dependent sizes (issue 15): the output's row count depends on the
# values; torch.export gives it as u0, and Kiln computes it in the run.
register("nonzero_f32", lambda x: torch.nonzero(x * (x > 0)), randn(4, 5))
register("nonzero_i64_3d", lambda x: torch.nonzero(x), randint(0, 3, 2, 3, 4))
register("nonzero_bool_as_tuple", lambda m: torch.nonzero(m, as_tuple=True), randbool(3, 5))
# nonzero_static: a static number of rows, cut or padded with fill_value
# (the client's decomposition: running counts scattered into rows); and
# torch.combinations, which torch builds on it.
register("nonzero_static_padded_f32", lambda x: torch.nonzero_static(x * (x > 0), size=30),
         randn(4, 5))
register("nonzero_static_cut_fill_i64_3d",
         lambda x: torch.nonzero_static(x, size=5, fill_value=-7), randint(0, 3, 2, 3, 4))
register("nonzero_static_u8_1d", lambda x: torch.nonzero_static(x, size=4),
         randint(0, 2, 9, dtype=torch.uint8))
register("combinations_r2_and_with_replacement_f32",
         lambda x: (torch.combinations(x), torch.combinations(x, r=3, with_replacement=True)),
         randn(5))
register("nonzero_f64_0d", lambda x: torch.nonzero(x), randn(dtype=torch.float64))
# torch.unique: the values' count is data-dependent; NaNs are each their own
# value (sorted last), -0.0 and 0.0 one.
register("unique_f32_inverse_counts",
         lambda x: torch.unique(x, return_inverse=True, return_counts=True),
         const(torch.tensor([[3.0, 1.0, float("nan")], [2.0, 3.0, 1.0],
                             [float("nan"), -0.0, 0.0], [1.0, 7.5, -2.0]])))
register("unique_i64_3d", lambda x: torch.unique(x, return_inverse=True),
         randint(0, 6, 3, 4, 5))
register("unique_i32_unsorted_counts",
         lambda x: torch.unique(x, sorted=False, return_counts=True),
         randint(-3, 3, 40, dtype=torch.int32))
register("unique_f64_all_distinct", lambda x: torch.unique(x, return_counts=True),
         randn(17, dtype=torch.float64))
register("unique_u8_one_value", lambda x: torch.unique(x * 0, return_inverse=True),
         randint(0, 9, 2, 3, dtype=torch.uint8))
register("unique_bool", lambda m: torch.unique(m, return_counts=True), randbool(4, 4))
# torch.unique_consecutive: runs of equal neighbours in row-major order
# collapse, the order kept; each NaN is a run of its own.
register("unique_consecutive_f32_inverse_counts",
         lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True),
         const(torch.tensor([[1.0, 1.0, 2.0], [2.0, float("nan"), float("nan")],
                             [-0.0, 0.0, 1.0], [1.0, 1.0, 1.0]])))
register("unique_consecutive_i64_runs", lambda x: torch.unique_consecutive(x, return_counts=True),
         randint(0, 3, 60))
register("unique_consecutive_u8_one_run",
         lambda x: torch.unique_consecutive(x * 0, return_inverse=True),
         randint(0, 9, 2, 3, dtype=torch.uint8))
register("unique_consecutive_bool", lambda m: torch.unique_consecutive(m), randbool(5, 4))
# torch.unique and unique_consecutive along a dim: whole slices compare;
# the values' size along dim is data-dependent. Sorted slices are in
# lexicographic order (eager's order is not defined with a NaN in them, so
# the sorted cases hold none); -0.0 and 0.0 are equal.
_ROWS = torch.tensor([[2, 1, 0], [0, 5, 1], [2, 1, 0], [0, 5, 0], [0, 5, 1], [2, 0, 9],
                      [0, 5, 1], [-1, 7, 7]])
register("unique_dim0_i64_inverse_counts",
         lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True),
         const(_ROWS))
register("unique_dim1_f32_signed_zeros",
         lambda x: torch.unique(x, dim=-1, return_inverse=True, return_counts=True),
         const(torch.tensor([[1.0, -0.0, 1.0, 0.0, 2.5, 1.0], [3.0, 4.0, 3.0, 4.0, 1.0, 2.0]])))
register("unique_dim1_f64_3d", lambda x: torch.unique(x, dim=1, return_inverse=True),
         const(_ROWS.T.reshape(3, 8, 1).expand(3, 8, 2).to(torch.float64)))
register("unique_dim2_i32_random_3d", lambda x: torch.unique(x, dim=2, return_counts=True),
         randint(0, 2, 2, 2, 9, dtype=torch.int32))
register("unique_dim0_bool", lambda m: torch.unique(m, dim=0, return_inverse=True),
         randbool(9, 2))
# Slices of one element in a tensor of rank 2 (a column): one sort.
register("unique_dim0_f32_column", lambda x: torch.unique(x.round(), dim=0, return_inverse=True,
                                                          return_counts=True),
         randn(9, 1))
register("unique_dim0_u8_1d", lambda x: torch.unique(x, dim=0, return_counts=True),
         randint(0, 5, 12, dtype=torch.uint8))
register("unique_dim0_f16_one_value", lambda x: torch.unique(x * 0, dim=0, return_counts=True),
         randn(4, 3, dtype=torch.float16))
register("unique_dim1_bf16", lambda x: torch.unique(x, dim=1, return_inverse=True),
         const(_ROWS.T.to(torch.bfloat16) / 4))
register("unique_dim1_values_summed_f32", lambda x: torch.unique(x, dim=1).sum(dim=0) * 2,
         const(_ROWS.T.to(torch.float32)))
# Slices of more than 16 elements are ordered by prefix doubling (ranks of
# element positions paired up, log2 rounds): 300 elements (odd counts of
# positions along the way), rows that differ only in their first, a middle
# or their last element, duplicates made in the graph.
_LONG = torch.randint(0, 3, (4, 300), generator=torch.Generator().manual_seed(15))
_LONG_ROWS = torch.stack([_LONG[0], _LONG[1], _LONG[0], _LONG[2], _LONG[3], _LONG[1],
                          torch.cat([_LONG[0][:-1], _LONG[0][-1:] + 1]),
                          torch.cat([_LONG[0][:1] - 1, _LONG[0][1:]]),
                          torch.cat([_LONG[2][:150], _LONG[2][150:151] + 5, _LONG[2][151:]]),
                          _LONG[2]])
register("unique_dim0_i64_300_wide_rows",
         lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True),
         const(_LONG_ROWS))
register("unique_dim1_f32_17_wide_signed_zeros",
         lambda x: torch.unique(torch.cat([x, -x[:, 1:3], x.flip(1)], dim=1), dim=1,
                                return_inverse=True, return_counts=True),
         const(torch.where(_LONG_ROWS[:, :17].T.reshape(17, 5, 2).float() == 0, -0.0,
                           _LONG_ROWS[:, :17].T.reshape(17, 5, 2).float() - 1)))
register("unique_dim0_i32_many_rows_33_wide",
         lambda x: torch.unique(torch.cat([x, x.flip(0)[:40]]), dim=0, return_inverse=True,
                                return_counts=True),
         randint(0, 2, 120, 33, dtype=torch.int32))
register("unique_dim2_bf16_long_slices",
         lambda x: torch.unique(torch.cat([x, x], dim=2), dim=2, return_counts=True),
         const((_LONG[:, :60].reshape(3, 20, 4) / 2).to(torch.bfloat16)))
register("unique_consecutive_dim0_f32_nan_rows",
         lambda x: torch.unique_consecutive(x, dim=0, return_inverse=True, return_counts=True),
         const(torch.tensor([[1.0, 2.0], [1.0, 2.0], [float("nan"), 0.0], [float("nan"), 0.0],
                             [-0.0, 3.0], [0.0, 3.0], [1.0, 2.0], [1.0, 2.0]])))
register("unique_consecutive_dim1_i64_3d",
         lambda x: torch.unique_consecutive(x, dim=1, return_inverse=True, return_counts=True),
         const(_ROWS.repeat_interleave(2, dim=0).T.reshape(1, 16, 3).permute(0, 2, 1)
               .expand(2, 3, 16)))
register("unique_consecutive_dim_last_bool",
         lambda m: torch.unique_consecutive(m, dim=-1, return_counts=True), randbool(2, 12))
# repeat_interleave with a tensor of repeats: the length is the repeats'
# sum, data-dependent, bounded by the program's torch._check (without one,
# or an output_size, it is UNIMPLEMENTED: tests/e2e/test_e2e_variable_sizes.py).


def _repeated_rows(x, r, dim=0, most=32):
    y = torch.repeat_interleave(x, r, dim=dim)
    torch._check(y.shape[dim] <= most)
    return y


def _positions(r, most=32):
    y = torch.repeat_interleave(r)
    torch._check(y.shape[0] <= most)
    return y


register("repeat_interleave_tensor_rows_f32", _repeated_rows, randn(5, 3),
         randint(0, 4, 5))
register("repeat_interleave_tensor_dim1_f64",
         lambda x, r: _repeated_rows(x, r, dim=1) * 2, randn(2, 4, 3, dtype=torch.float64),
         randint(0, 4, 4))
register("repeat_interleave_positions_i32", _positions,
         randint(0, 5, 6, dtype=torch.int32))
register("repeat_interleave_all_zero_i64", lambda r: _positions(r * 0), randint(0, 5, 4))
register("repeat_interleave_0d_repeats_f32", lambda x, r: _repeated_rows(x, r),
         randn(3, 2), randint(0, 4))
register("repeat_interleave_output_size_f32",
         lambda x, r: torch.repeat_interleave(x, r * 0 + 2, dim=0, output_size=8),
         randn(4, 3), randint(0, 4, 4))
# bincount: the length, max(minlength, max(x) + 1), is data-dependent and
# unbounded but by the program's torch._check (without one it is
# UNIMPLEMENTED: tests/e2e/test_e2e_data_dependent_sizes.py).


def _bincount(x, weights=None, minlength=0, most=24):
    y = torch.bincount(x, weights, minlength=minlength)
    torch._check(y.shape[0] <= most)
    return y


register("bincount_i64", _bincount, randint(0, 9, 40))
register("bincount_i32_minlength_longer", lambda x: _bincount(x, minlength=20),
         randint(0, 6, 30, dtype=torch.int32))
register("bincount_u8_minlength_shorter", lambda x: _bincount(x, minlength=2),
         randint(0, 17, 25, dtype=torch.uint8))
register("bincount_i16_one_value", lambda x: _bincount(x * 0 + 3), randint(0, 5, 7, dtype=torch.int16))
register("bincount_f32_weights", lambda x, w: _bincount(x, w), randint(0, 7, 50), randn(50))
register("bincount_f64_weights_minlength", lambda x, w: _bincount(x, w, minlength=12),
         randint(0, 5, 20, dtype=torch.int8), randn(20, dtype=torch.float64))
register("bincount_f16_weights_widened", lambda x, w: _bincount(x, w), randint(0, 4, 16),
         randn(16, dtype=torch.float16))
register("bincount_i64_weights_widened", lambda x, w: _bincount(x, w), randint(0, 4, 16),
         randint(-9, 9, 16))
register("bincount_empty_minlength", lambda x: _bincount(x[:0], minlength=5), randint(0, 4, 6))
register("bincount_then_ops_f32", lambda x, w: (_bincount(x, w) * 2 + 1).sum(),
         randint(0, 9, 30), randn(30))
register("unique_f32_0d", lambda x: torch.unique(x, return_inverse=True), randn())
register("unique_values_sum_f32", lambda x: torch.unique(x.round()).sum(), randn(6, 6))
register("masked_select_broadcast_f32", lambda x, m: torch.masked_select(x, m),
         randn(3, 4), randbool(4))
register("masked_select_u8", lambda x: torch.masked_select(x, x > 4),
         randint(0, 9, 3, 5, dtype=torch.uint8))
register("masked_select_sum_f64", lambda x: torch.masked_select(x, x > 0).sum(),
         randn(5, 6, dtype=torch.float64))
register("bool_mask_rows_then_ops_f32", lambda x, m: torch.relu(x[m]) * 2 + 1,
         randn(6, 3, 2), randbool(6))
register("bool_mask_full_rank_i32", lambda x: x[x > 5],
         randint(0, 10, 4, 4, dtype=torch.int32))

# index_reduce: source's slices combined into self's at index along dim,
# repeated indices meeting (their order matters for none of these), with and
# without self; integer means round down; uint8 means wrap as eager's.
for reduce in ("prod", "mean", "amax", "amin"):
    for include_self in (True, False):
        register(f"index_reduce_{reduce}_{'self' if include_self else 'no_self'}_f32",
                 lambda x, i, s, reduce=reduce, include_self=include_self:
                 x.index_reduce(1, i, s, reduce, include_self=include_self),
                 randn(3, 5, 2), const(torch.tensor([0, 3, 0, 4, 3, 0])), randn(3, 6, 2))
register("index_reduce_mean_i64_dim0", lambda x, i, s: x.index_reduce(0, i, s, "mean"),
         randint(-9, 9, 4, 3), const(torch.tensor([1, 1, 3, 1, 0])), randint(-9, 9, 5, 3))
register("index_reduce_amax_negative_dim_f64",
         lambda x, i, s: x.index_reduce(-1, i, s, "amax", include_self=False),
         randn(2, 3, 4, dtype=torch.float64), const(torch.tensor([2, 2, 0])),
         randn(2, 3, 3, dtype=torch.float64))
register("index_reduce_mean_u8", lambda x, i, s: x.index_reduce(0, i, s, "mean"),
         randint(200, 255, 3, 2, dtype=torch.uint8), const(torch.tensor([0, 0, 2, 0])),
         randint(200, 255, 4, 2, dtype=torch.uint8))
register("index_reduce_prod_i32_1d", lambda x, i, s: x.index_reduce(0, i, s, "prod"),
         randint(-3, 4, 6, dtype=torch.int32), const(torch.tensor([5, 0, 5])),
         randint(-3, 4, 3, dtype=torch.int32))

# A 0-d self reduces as one element along dim 0, as eager's does.
register("index_reduce_amin_0d_f32", lambda x, s: x.index_reduce(0, torch.tensor([0]), s, "amin"),
         randn(), randn())
register("index_reduce_mean_0d_no_self_i64",
         lambda x, s: x.index_reduce(-1, torch.tensor([0]), s, "mean", include_self=False),
         randint(-9, 9), randint(-9, 9))

# put: positions of self read row-major; index of any shape, negative ones
# from the end; repeated positions add under accumulate (without it, the
# cases keep positions distinct: eager leaves the winner unspecified).
register("put_f32", lambda x, i, v: x.put(i, v), randn(3, 4),
         const(torch.tensor([[0, -1], [5, 7]])), randn(4))
register("put_accumulate_f32", lambda x, i, v: x.put(i, v, accumulate=True), randn(3, 4),
         const(torch.tensor([0, -1, 5, 0, 11, -12])), randn(6))
register("put_accumulate_i64_3d", lambda x, i, v: x.put(i, v, accumulate=True),
         randint(-5, 5, 2, 3, 2), const(torch.tensor([[3, 3], [3, 10]])), randint(-5, 5, 2, 2))
register("put_0d_bool", lambda x, i, v: x.put(i, v), const(torch.tensor(False)),
         const(torch.tensor([0])), const(torch.tensor([True])))

# Segment reductions (aten.segment_reduce): consecutive runs along an axis
# from lengths or offsets; an empty segment gives the identity (NaN for
# mean) or `initial`; a NaN makes its segment's max and min NaN; mean
# divides the sum with `initial` by the length.
_SEG_DATA = const(torch.tensor([1.0, 2.0, float("nan"), 4.0, 5.0, 6.0, -3.0, 0.5]))
_SEG_LENGTHS = const(torch.tensor([2, 0, 3, 1, 2]))
for _reduce in ("sum", "mean", "max", "min", "prod"):
    register(f"segment_reduce_{_reduce}_f32",
             lambda x, l, r=_reduce: torch.segment_reduce(x, r, lengths=l),
             _SEG_DATA, _SEG_LENGTHS)
    register(f"segment_reduce_{_reduce}_initial_f32",
             lambda x, l, r=_reduce: torch.segment_reduce(x, r, lengths=l, initial=0.5),
             _SEG_DATA, _SEG_LENGTHS)
register("segment_reduce_sum_axis1_f64",
         lambda x, l: torch.segment_reduce(x, "sum", lengths=l, axis=1),
         randn(3, 7, 2, dtype=torch.float64),
         const(torch.tensor([[1, 3, 3], [2, 0, 5], [7, 0, 0]])))
register("segment_reduce_max_offsets_f32",
         lambda x, o: torch.segment_reduce(x, "max", offsets=o),
         randn(9, 4), const(torch.tensor([0, 2, 2, 6, 9])))
register("segment_reduce_mean_int32_lengths_f32",
         lambda x, l: torch.segment_reduce(x, "mean", lengths=l, axis=1),
         randn(2, 6, 3), const(torch.tensor([[1, 2, 3], [0, 6, 0]], dtype=torch.int32)))
register("segment_reduce_sum_bf16", lambda x, l: torch.segment_reduce(x, "sum", lengths=l),
         randn(12, 2, dtype=torch.bfloat16), const(torch.tensor([5, 4, 3])))
