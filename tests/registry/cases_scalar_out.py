"""Programs that return Python numbers: ``t.item()`` (``_local_scalar_dense``)
of a reduction, next to tensors or alone. The graph returns the 0-d tensor
and the client converts it, so the result has eager's Python type."""

import torch

from tests.registry.registry import randint, randn, register

register("item_sum_f32", lambda x: x.sum().item(), randn(3, 4))
register("item_mean_and_tensor_f64", lambda x: (x.mean().item(), x * 2),
         randn(5, dtype=torch.float64))
register("item_int_amax_i64", lambda x: x.amax().item(), randint(-50, 50, 4, 6))
register("item_count_nonneg_i32", lambda x: (x >= 0).sum().item(),
         randint(-5, 5, 7, dtype=torch.int32))
register("item_two_scalars_f32", lambda x: (x.min().item(), x.max().item()), randn(2, 8))
register("item_of_one_element_tensor_f32", lambda x: x[1, 2].item(), randn(3, 4))
