"""Tensors with a zero-sized dimension (issue 15): empty inputs and outputs,
slices PyTorch clamps to nothing, and the ops whose non-empty result is
defined over an empty argument: reductions give their identity (sum 0,
prod 1, mean/var NaN, any False, all True), products with an empty
contraction give zeros (plus beta * self for addmm), cat skips empty
pieces, and a scatter with nothing to write returns self."""

import torch
import torch.nn.functional as F

from tests.registry.registry import randbool, randint, randn, register

# Empty in, empty out.
register("empty_pointwise_f32", lambda x: torch.sigmoid(x) * 2 + 1, randn(3, 0, 4))
register("empty_input_u8", lambda x: x + 1, randint(0, 200, 0, 5, dtype=torch.uint8))
register("empty_compare_bool", lambda x, y: x < y, randn(0, 3), randn(1, 3))
register("empty_beside_full_f32", lambda x, y: (x.exp(), y.exp()), randn(2, 0), randn(2, 3))
register("empty_mm_rows_f32", lambda a, b: a @ b, randn(0, 4), randn(4, 3))
register("empty_softmax_i64_index", lambda x, i: (x.softmax(-1), x[i]),
         randn(0, 5), randint(0, 1, 0))

# Slices PyTorch clamps: past the end, and bounds the wrong way round.
register("slice_past_end_f32", lambda x: x[7:] * 2, randn(5, 3))
register("slice_reversed_bounds_f32", lambda x: (x[:, 3:1] + 1, x[1:3]), randn(4, 5))
register("split_with_empty_piece_f32", lambda x: torch.split(x, [3, 0, 2]), randn(5, 2))

# Reductions over an empty dim: the result has elements, each the identity.
register("sum_over_empty_dim_f32", lambda x: x.sum(1), randn(4, 0))
register("sum_over_empty_dim_i32_to_i64", lambda x: x.sum(0),
         randint(-5, 5, 0, 3, dtype=torch.int32))
register("prod_over_empty_dim_f64", lambda x: x.prod(1), randn(3, 0, dtype=torch.float64))
register("mean_over_empty_dim_f32", lambda x: x.mean(0), randn(0, 6))
register("var_std_over_empty_dim_f32", lambda x: (x.var(1), x.std(1, correction=0)),
         randn(2, 0))
register("any_all_over_empty_dim_bool", lambda x: (x.any(1), x.all(1)), randbool(3, 0))
register("norm_over_empty_dim_f32", lambda x: torch.linalg.vector_norm(x, dim=1),
         randn(4, 0))
register("sum_of_empty_slice_plus_mean_f32", lambda x: x[:, :0].sum(1) + x.mean(1),
         randn(3, 4))

# Products whose contraction is empty.
register("mm_empty_contraction_f32", lambda a, b: a @ b, randn(5, 0), randn(0, 3))
register("mm_empty_contraction_i64", lambda a, b: a @ b,
         randint(-3, 3, 5, 0), randint(-3, 3, 0, 4))
register("bmm_empty_contraction_f32", torch.bmm, randn(2, 3, 0), randn(2, 0, 4))
register("addmm_empty_contraction_f32",
         lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
         randn(3), randn(4, 0), randn(0, 3))
register("addmm_empty_contraction_beta0_ignores_nan_f32",
         lambda c, a, b: torch.addmm(c / 0.0, a, b, beta=0.0),
         randn(4, 3), randn(4, 0), randn(0, 3))
register("linear_empty_features_f32", lambda x, w, b: F.linear(x, w, b),
         randn(6, 0), randn(2, 0), randn(2))

# cat leaves out empty pieces, the legacy 1-D [0] one included.
register("cat_with_empty_piece_f32", lambda x, e: torch.cat([x, e, x], 0),
         randn(2, 3), randn(0, 3))
register("cat_with_legacy_empty_f32", lambda x, e: torch.cat([e, x], 1),
         randn(2, 3), randn(0))

# Nothing to write: the result is self.
register("scatter_empty_index_f32", lambda x, i, s: x.scatter(0, i, s),
         randn(3, 4), randint(0, 3, 0, 4), randn(0, 4))
register("index_put_empty_index_f32",
         lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
         randn(4, 3), randint(0, 4, 0), randn(0, 3))
# cdist over rows of no elements: every distance 0, for every p.
register("cdist_over_empty_rows_f32", lambda a, b: (torch.cdist(a, b), torch.cdist(a, b, p=0)),
         randn(3, 0), randn(4, 0))
register("cdist_over_empty_rows_mm_f64", lambda a, b: torch.cdist(a, b), randn(2, 30, 0, dtype=torch.float64),
         randn(2, 4, 0, dtype=torch.float64))
# Writing a source through an empty index writes nothing: self, unchanged.
register("empty_index_put_accumulate_f32",
         lambda x, s: x.put(torch.zeros(0, dtype=torch.int64), s, accumulate=True),
         randn(3, 4), randn(0))
register("empty_index_add_copy_reduce_i64",
         lambda x, s: (x.index_add(1, torch.zeros(0, dtype=torch.int64), s),
                       x.index_copy(1, torch.zeros(0, dtype=torch.int64), s),
                       x.index_reduce(1, torch.zeros(0, dtype=torch.int64), s, "prod",
                                      include_self=False)),
         randint(-9, 9, 3, 4), randint(-9, 9, 3, 0))

# householder_product with no reflectors (tau (..., 0)): the identity's
# first n columns, real or complex.
register("householder_product_no_reflectors_f64",
         lambda a, tau: torch.linalg.householder_product(a, tau),
         randn(2, 4, 3, dtype=torch.float64), randn(2, 0, dtype=torch.float64))
register("householder_product_no_reflectors_c64",
         lambda a, tau: torch.linalg.householder_product(a, tau),
         randn(4, 2, dtype=torch.complex64), randn(0, dtype=torch.complex64))
