"""Comparisons, logical and bitwise ops, where and masked_fill."""

import torch

from tests.registry.registry import DTYPE_NAMES, randbool, randint, randn, register

CMP = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
       "gt": torch.gt, "ge": torch.ge}
# Small integer-valued floats so that eq/ne see equal pairs.
for op, fn in CMP.items():
    register(f"{op}_f32", fn, randint(-3, 3, 3, 4, dtype=torch.float32),
             randint(-3, 3, 3, 4, dtype=torch.float32))
    register(f"{op}_i64", fn, randint(-3, 3, 3, 4), randint(-3, 3, 3, 4))
    register(f"{op}_scalar_f32", lambda a, fn=fn: fn(a, 0.5), randn(3, 4))
for dt in (torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16,
           torch.int32, torch.uint8):
    n = DTYPE_NAMES[dt]
    register(f"lt_{n}", torch.lt, randint(0, 4, 3, 4, dtype=dt), randint(0, 4, 3, 4, dtype=dt))
    register(f"eq_{n}", torch.eq, randint(0, 4, 3, 4, dtype=dt), randint(0, 4, 3, 4, dtype=dt))
register("eq_bool", torch.eq, randbool(3, 4), randbool(3, 4))
register("gt_bcast_f32", torch.gt, randn(3, 1), randn(4))
register("ge_promote_i32_f32", torch.ge, randint(-2, 2, 3, 4, dtype=torch.int32), randn(3, 4))
register("lt_promote_u8_i8", torch.lt, randint(0, 200, 3, 4, dtype=torch.uint8),
         randint(-100, 100, 3, 4, dtype=torch.int8))
register("eq_scalar_i64", lambda a: a == 2, randint(0, 4, 3, 4))
register("ne_scalar_bool", lambda a: a != True, randbool(3, 4))  # noqa: E712
register("isnan_f32", lambda a: torch.isnan(a / a), randint(-1, 2, 3, 4, dtype=torch.float32))
register("isinf_f32", lambda a: torch.isinf(1.0 / a), randint(-1, 2, 3, 4, dtype=torch.float32))

LOGICAL = {"logical_and": torch.logical_and, "logical_or": torch.logical_or,
           "logical_xor": torch.logical_xor}
for op, fn in LOGICAL.items():
    register(f"{op}_bool", fn, randbool(3, 4), randbool(3, 4))
    register(f"{op}_f32", fn, randint(0, 2, 3, 4, dtype=torch.float32), randn(3, 4))
    register(f"{op}_i32", fn, randint(0, 3, 3, 4, dtype=torch.int32),
             randint(0, 3, 3, 4, dtype=torch.int32))
register("logical_not_bool", torch.logical_not, randbool(3, 4))
register("logical_not_f32", torch.logical_not, randint(0, 2, 3, 4, dtype=torch.float32))
register("logical_not_i64", torch.logical_not, randint(0, 3, 3, 4))
register("logical_and_bcast_bool", torch.logical_and, randbool(3, 1), randbool(1, 4))

BITWISE = {"bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or,
           "bitwise_xor": torch.bitwise_xor}
for op, fn in BITWISE.items():
    register(f"{op}_bool", fn, randbool(3, 4), randbool(3, 4))
    register(f"{op}_i32", fn, randint(-100, 100, 3, 4, dtype=torch.int32),
             randint(-100, 100, 3, 4, dtype=torch.int32))
    register(f"{op}_u8", fn, randint(0, 255, 3, 4, dtype=torch.uint8),
             randint(0, 255, 3, 4, dtype=torch.uint8))
register("bitwise_and_scalar_i64", lambda a: a & 6, randint(0, 64, 3, 4))
register("and_operator_bool", lambda a, b: a & b, randbool(3, 4), randbool(3, 4))
register("or_operator_cmp", lambda a, b: (a > 0) | (b > 0), randn(3, 4), randn(3, 4))

# where and masked_fill.
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32,
           torch.int64, torch.int8, torch.uint8, torch.bool):
    n = DTYPE_NAMES[dt]
    register(f"where_{n}", torch.where, randbool(3, 4), randint(0, 5, 3, 4, dtype=dt),
             randint(0, 5, 3, 4, dtype=dt))
register("where_bcast_f32", torch.where, randbool(3, 1), randn(1, 4), randn(3, 4))
register("where_scalar_other_f32", lambda c, a: torch.where(c, a, 0.0), randbool(3, 4),
         randn(3, 4))
register("where_scalar_both_f32", lambda c: torch.where(c, 1.0, -1.0), randbool(3, 4))
register("where_cond_from_cmp_f32", lambda a: torch.where(a > 0, a, a * 0.1), randn(4, 5))
register("where_self_cond_i64", lambda a: torch.where(a.bool(), a, 7), randint(0, 3, 3, 4))
for dt in (torch.float32, torch.float16, torch.int64, torch.bool):
    n = DTYPE_NAMES[dt]
    fill = True if dt == torch.bool else -3
    register(f"masked_fill_{n}", lambda x, m, fill=fill: x.masked_fill(m, fill),
             randint(0, 5, 3, 4, dtype=dt), randbool(3, 4))
register("masked_fill_bcast_softmax_f32", lambda x, m: x.masked_fill(m, -1e9).softmax(-1),
         randn(2, 3, 4), randbool(1, 4))
register("masked_fill_tensor_value_f32", lambda x, m, v: x.masked_fill(m, v), randn(3, 4),
         randbool(3, 4), randn())
register("masked_fill_causal_f32",
         lambda x: x.masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), -1e4),
         randn(2, 4, 4))
