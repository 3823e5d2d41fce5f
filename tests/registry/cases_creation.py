"""Tensor creation (arange, full, zeros, ones, eye, empty, *_like) and dtype
conversions between every pair of interest."""

import torch

from tests.registry.registry import DTYPE_NAMES, rand, randbool, randint, randn, register

# Creation ops are combined with an input so that the graph has one (and the
# created constant is checked through the arithmetic).
register("arange_end_f32", lambda x: x + torch.arange(5), randn(3, 5))
register("arange_start_step_f32", lambda x: x + torch.arange(1, 11, 2), randn(5))
register("arange_float_step_f32", lambda x: x * torch.arange(0.0, 1.0, 0.125), randn(2, 8))
register("arange_neg_step_i64", lambda x: x + torch.arange(10, 0, -3), randint(0, 5, 4))
register("arange_dtype_i32", lambda x: x + torch.arange(6, dtype=torch.int32),
         randint(0, 5, 2, 6, dtype=torch.int32))
register("arange_dtype_f64", lambda x: x + torch.arange(-2, 2, 0.5, dtype=torch.float64),
         randn(8, dtype=torch.float64))
register("arange_only_i64", lambda x: torch.arange(7) * x.sum().long(), randint(0, 3, 2))
# An integer arange takes start and step cut to integers, the length from
# the numbers as given (issue 15: these were wrong answers).
register("arange_i32_fractional_step_cut_to_zero",
         lambda x: x + torch.arange(0, 64, 0.5, dtype=torch.int32),
         randint(0, 5, 128, dtype=torch.int32))
register("arange_i64_fractional_start", lambda x: x + torch.arange(-0.9, 2.1, 2.0, dtype=torch.int64),
         randint(0, 5, 2))
register("arange_i32_fractional_start_negative_step",
         lambda x: x + torch.arange(2.1, -2.9, -1.0, dtype=torch.int32),
         randint(0, 5, 5, dtype=torch.int32))
register("arange_u8_fractional_step", lambda x: x + torch.arange(1.7, 8, 2.6, dtype=torch.uint8),
         randint(0, 5, 3, dtype=torch.uint8))
# Bools are numbers (a Python bool is an int to torch).
register("arange_bool_bounds_i32", lambda x: x + torch.arange(False, True, True, dtype=torch.int32),
         randint(0, 5, 1, dtype=torch.int32))
register("arange_f16", lambda x: x * torch.arange(4, dtype=torch.float16),
         randn(3, 4, dtype=torch.float16))
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32,
           torch.int64, torch.int8, torch.uint8, torch.bool):
    n = DTYPE_NAMES[dt]
    value = True if dt == torch.bool else 3
    register(f"full_{n}", lambda x, dt=dt, v=value: torch.full((3, 4), v, dtype=dt) == x,
             randint(0, 5, 3, 4, dtype=dt) if dt != torch.bool else randbool(3, 4))
    register(f"zeros_like_plus_{n}", lambda x: torch.zeros_like(x) + x,
             randint(0, 5, 3, 4, dtype=dt) if dt != torch.bool else randbool(3, 4))
register("full_value_f32", lambda x: x + torch.full((2, 3), -1.25), randn(2, 3))
register("full_like_f32", lambda x: torch.full_like(x, 7.5) - x, randn(2, 3))
register("full_like_dtype_i64", lambda x: torch.full_like(x, 2, dtype=torch.int64) * 3,
         randn(2, 3))
register("zeros_f32", lambda x: torch.zeros(3, 4) + x, randn(3, 4))
register("zeros_i64_cat", lambda x: torch.cat([x, torch.zeros(2, 2, dtype=torch.int64)], 1),
         randint(0, 9, 2, 3))
register("ones_f32", lambda x: torch.ones(4) * x, randn(3, 4))
register("ones_like_f16", lambda x: torch.ones_like(x) - x, randn(3, 4, dtype=torch.float16))
register("ones_bool_and", lambda m: torch.ones(3, 4, dtype=torch.bool) & m, randbool(3, 4))
register("new_ones_f32", lambda x: x.new_ones(2, 4) + x.sum(), randn(3, 4))
register("new_zeros_i32", lambda x: x.new_zeros(3) + x[0], randint(0, 9, 2, 3, dtype=torch.int32))
register("new_full_f32", lambda x: x.new_full((3, 4), 0.5) * x, randn(3, 4))
register("eye_f32", lambda x: torch.eye(4) @ x, randn(4, 3))
register("eye_rect_f32", lambda x: torch.eye(3, 5) * x, randn(3, 5))
register("eye_i64", lambda x: torch.eye(4, dtype=torch.int64) + x, randint(0, 9, 4, 4))
register("eye_bool", lambda m: torch.eye(3, dtype=torch.bool) | m, randbool(3, 3))
# Order 256 and up: newer torch's decomposition counts in uint16 (Kiln's
# own counts in int64).
register("eye_order_300_f32", lambda x: torch.eye(300) + x, randn(300, 300))
register("eye_rect_260_by_3_f64", lambda x: torch.eye(260, 3, dtype=torch.float64) * x,
         randn(260, 3, dtype=torch.float64))
register("empty_fill_f32", lambda x: torch.empty(3, 4).fill_(2.0) * x, randn(3, 4))
register("empty_like_copy_f32", lambda x: torch.empty_like(x).copy_(x) + 1, randn(3, 4))
register("empty_fill_i32", lambda x: torch.empty(5, dtype=torch.int32).fill_(4) - x,
         randint(0, 9, 5, dtype=torch.int32))
register("zeros_scatter_f32", lambda x: torch.zeros(4, 4).index_fill(0, torch.tensor([1]), 1.0)
         + x, randn(4, 4))
register("linspace_f32", lambda x: x + torch.linspace(0, 1, 5), randn(2, 5))
register("scalar_tensor_f32", lambda x: x * torch.tensor(3.0), randn(3))
register("lift_fresh_const_i64", lambda x: x + torch.tensor([1, 2, 3]), randint(0, 9, 2, 3))
register("lift_fresh_const_f32_2d", lambda x: x @ torch.tensor([[1.0, 0.5], [0.0, -2.0]]),
         randn(3, 2))

# Conversions: .to(dtype) between the dtypes Kiln supports. Float -> int
# truncates toward zero; values stay in range of the destination.
CONVERSIONS = [
    (torch.float32, torch.float64), (torch.float64, torch.float32),
    (torch.float32, torch.float16), (torch.float16, torch.float32),
    (torch.float32, torch.bfloat16), (torch.bfloat16, torch.float32),
    (torch.float16, torch.bfloat16), (torch.bfloat16, torch.float64),
    (torch.float32, torch.int32), (torch.float32, torch.int64), (torch.float64, torch.int16),
    (torch.float32, torch.int8), (torch.float32, torch.uint8), (torch.float16, torch.int32),
    (torch.int32, torch.float32), (torch.int64, torch.float32), (torch.int64, torch.float64),
    (torch.int8, torch.float16), (torch.uint8, torch.float32), (torch.int16, torch.bfloat16),
    (torch.int64, torch.int32), (torch.int32, torch.int64), (torch.int8, torch.int64),
    (torch.uint8, torch.int64), (torch.int32, torch.int8), (torch.int64, torch.uint8),
    (torch.int16, torch.int32), (torch.uint8, torch.int8),
    (torch.bool, torch.float32), (torch.bool, torch.int64), (torch.bool, torch.uint8),
    (torch.float32, torch.bool), (torch.int64, torch.bool), (torch.int8, torch.bool),
]
for src, dst in CONVERSIONS:
    name = f"to_{DTYPE_NAMES[src]}_to_{DTYPE_NAMES[dst]}"
    if src == torch.bool:
        spec = randbool(3, 5)
    elif src.is_floating_point:
        lo = 0.0 if dst == torch.uint8 else -100.0
        spec = rand(3, 5, dtype=src, low=lo, high=100.0)
    else:
        lo = 0 if src == torch.uint8 or dst == torch.uint8 else -100
        spec = randint(lo, 100, 3, 5, dtype=src)
    register(name, lambda x, dst=dst: x.to(dst), spec)
register("to_f32_to_bool_zeros", lambda x: x.to(torch.bool),
         randint(-1, 2, 3, 5, dtype=torch.float32))
register("type_as_f32", lambda x, y: x.type_as(y) + y, randint(0, 9, 3, dtype=torch.int32),
         randn(3))
register("float_method_i64", lambda x: x.float() / 3, randint(0, 9, 3, 4))
register("long_method_f32", lambda x: (x * 10).long(), randn(3, 4))
register("half_method_f32", lambda x: x.half() * 2, randn(3, 4))
register("double_method_f32", lambda x: x.double() + 1e-10, randn(3, 4))
register("int_wrap_i64_to_i8", lambda x: x.to(torch.int8), randint(-1000, 1000, 3, 4))
register("to_f64_to_f16_round", lambda x: x.to(torch.float16),
         randn(4, 6, dtype=torch.float64, scale=100.0))
