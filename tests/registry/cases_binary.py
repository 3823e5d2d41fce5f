"""Elementwise binary ops: arithmetic, pow, remainder, minimum/maximum, clamp,
broadcasting and PyTorch's type promotion."""

import torch

from tests.registry.registry import (DTYPE_NAMES, const, positive, rand, randbool, randint, randn,
                                     register)

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _int_spec(dt, *shape, nonzero=False, low=None):
    lo = (0 if dt == torch.uint8 else -20) if low is None else low
    return randint(lo, 20, *shape, dtype=dt, nonzero=nonzero)


ARITH = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}
for op, fn in ARITH.items():
    for dt in FLOATS:
        register(f"{op}_{DTYPE_NAMES[dt]}", fn, randn(3, 4, dtype=dt), randn(3, 4, dtype=dt))
    for dt in INTS:
        register(f"{op}_{DTYPE_NAMES[dt]}", fn, _int_spec(dt, 3, 4), _int_spec(dt, 3, 4))
register("add_alpha_f32", lambda a, b: torch.add(a, b, alpha=2.5), randn(3, 4), randn(3, 4))
# A bool alpha on bool tensors (refused before: "alpha must be a number").
# f16/bf16 trunc division rounds the quotient to the half type first, as
# eager does (2.9995 -> 3.0 -> 3); truncated in f32 some elements were 1
# off (issue 15, OpInfo div.trunc_rounding).
for dt in (torch.float16, torch.bfloat16):
    register(f"div_trunc_rounds_quotient_{DTYPE_NAMES[dt]}",
             lambda a, b: torch.div(a, b, rounding_mode="trunc"),
             randn(64, 64, dtype=dt, scale=8.0), randn(64, 64, dtype=dt))
register("add_alpha_true_bool", lambda a, b: torch.add(a, b, alpha=True), randbool(3, 4),
         randbool(3, 4))
register("add_alpha_false_bool", lambda a, b: torch.add(a, b, alpha=False), randbool(3, 4),
         randbool(3, 4))
register("sub_alpha_i32", lambda a, b: torch.sub(a, b, alpha=3),
         randint(-9, 9, 3, 4, dtype=torch.int32), randint(-9, 9, 3, 4, dtype=torch.int32))
register("add_bool", lambda a, b: a + b, randint(0, 2, 3, 4, dtype=torch.bool),
         randint(0, 2, 3, 4, dtype=torch.bool))
register("mul_bool", lambda a, b: a * b, randint(0, 2, 3, 4, dtype=torch.bool),
         randint(0, 2, 3, 4, dtype=torch.bool))

# Division: true division of floats and ints, trunc and floor rounding.
for dt in FLOATS:
    n = DTYPE_NAMES[dt]
    register(f"div_{n}", lambda a, b: a / b, randn(3, 4, dtype=dt), positive(3, 4, dtype=dt))
    register(f"div_floor_{n}", lambda a, b: torch.div(a, b, rounding_mode="floor"),
             randn(3, 4, dtype=dt, scale=5.0), positive(3, 4, dtype=dt))
register("div_trunc_f32", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
         randn(3, 4, scale=5.0), randn(3, 4))
for dt in (torch.int32, torch.int64, torch.int8):
    n = DTYPE_NAMES[dt]
    register(f"div_true_{n}", lambda a, b: a / b, _int_spec(dt, 3, 4),
             _int_spec(dt, 3, 4, nonzero=True))
    register(f"div_trunc_{n}", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
             _int_spec(dt, 3, 4), _int_spec(dt, 3, 4, nonzero=True))
    register(f"div_floor_{n}", lambda a, b: torch.div(a, b, rounding_mode="floor"),
             _int_spec(dt, 3, 4), _int_spec(dt, 3, 4, nonzero=True))
register("floor_divide_i64", torch.floor_divide, randint(-30, 30, 4, 5),
         randint(-7, 7, 4, 5, nonzero=True))

# Remainder and fmod (sign follows the divisor / the dividend).
for dt in (torch.float32, torch.float64):
    n = DTYPE_NAMES[dt]
    register(f"remainder_{n}", torch.remainder, randn(3, 4, dtype=dt, scale=5.0),
             positive(3, 4, dtype=dt))
    register(f"remainder_negdiv_{n}", lambda a, b: torch.remainder(a, -b),
             randn(3, 4, dtype=dt, scale=5.0), positive(3, 4, dtype=dt))
for dt in (torch.int32, torch.int64, torch.int16):
    register(f"remainder_{DTYPE_NAMES[dt]}", torch.remainder, _int_spec(dt, 3, 4),
             _int_spec(dt, 3, 4, nonzero=True))
register("remainder_scalar_f32", lambda a: torch.remainder(a, 1.5), randn(3, 4, scale=5.0))
register("remainder_scalar_i64", lambda a: torch.remainder(a, 3), randint(-20, 20, 3, 4))
register("fmod_f32", torch.fmod, randn(3, 4, scale=5.0), positive(3, 4))
register("fmod_i32", torch.fmod, randint(-20, 20, 3, 4, dtype=torch.int32),
         randint(1, 7, 3, 4, dtype=torch.int32))

# Powers.
for dt in FLOATS:
    n = DTYPE_NAMES[dt]
    register(f"pow_tensor_{n}", torch.pow, positive(3, 4, dtype=dt), randn(3, 4, dtype=dt))
    register(f"pow_scalar2_{n}", lambda a: torch.pow(a, 2), randn(3, 4, dtype=dt))
register("pow_scalar_half_f32", lambda a: a ** 0.5, positive(3, 4))
register("pow_scalar_neg_f32", lambda a: a ** -1.5, positive(3, 4))
register("pow_scalar3_f32", lambda a: a ** 3, randn(3, 4))
register("pow_scalar_base_f32", lambda a: torch.pow(2.0, a), randn(3, 4))
register("pow_int_exp_i64", lambda a: a ** 2, randint(-10, 10, 3, 4))
register("pow_tensor_i32", torch.pow, randint(-4, 4, 3, 4, dtype=torch.int32),
         randint(0, 4, 3, 4, dtype=torch.int32))
# Integer powers wrap around as eager's repeated squaring does, and negative
# exponents give 1, -1 or 0 (issue 15: int32 ** int32 differed).
for dt in (torch.int32, torch.int64, torch.int16, torch.int8):
    n = DTYPE_NAMES[dt]
    register(f"pow_tensor_wraps_{n}", torch.pow, randint(-12, 12, 6, 7, dtype=dt),
             randint(0, 40, 6, 7, dtype=dt))
    register(f"pow_tensor_negative_exp_{n}", torch.pow, randint(-3, 4, 5, 6, dtype=dt),
             randint(-4, 3, 5, 6, dtype=dt))
register("pow_scalar_exp_wraps_i32", lambda a: a ** 13, randint(-40, 40, 4, 5, dtype=torch.int32))
register("pow_scalar_base_int_exp_i64", lambda e: torch.pow(3, e), randint(0, 45, 4, 5))
register("pow_tensor_wraps_u8", torch.pow, randint(0, 12, 4, 5, dtype=torch.uint8),
         randint(0, 12, 4, 5, dtype=torch.uint8))
register("square_f32", torch.square, randn(3, 4))

# Clamp with scalar and tensor bounds.
for dt in FLOATS:
    n = DTYPE_NAMES[dt]
    register(f"clamp_{n}", lambda a: torch.clamp(a, -0.5, 0.75), randn(3, 4, dtype=dt))
register("clamp_min_f32", lambda a: torch.clamp(a, min=0.1), randn(3, 4))
register("clamp_max_f32", lambda a: torch.clamp(a, max=-0.1), randn(3, 4))
register("clamp_tensor_f32", lambda a, lo, hi: torch.clamp(a, lo, hi), randn(3, 4),
         rand(3, 4, low=-1.0, high=0.0), rand(4, low=0.0, high=1.0))
register("clamp_min_tensor_f32", torch.clamp_min, randn(3, 4), randn(1, 4))
for dt in (torch.int32, torch.int64, torch.uint8, torch.int8):
    register(f"clamp_{DTYPE_NAMES[dt]}", lambda a: torch.clamp(a, 3, 12), _int_spec(dt, 3, 4))
register("clamp_int_float_bound_i64", lambda a: torch.clamp(a, 0.5, 5.5), randint(-5, 10, 3, 4))

# Broadcasting shapes.
BCAST = {
    "row": ((3, 4), (4,)),
    "col": ((3, 4), (3, 1)),
    "outer": ((3, 1), (1, 4)),
    "rank3": ((2, 3, 4), (3, 1)),
    "rank4": ((2, 1, 4, 1), (3, 1, 5)),
    "scalar_tensor": ((3, 4), ()),
    "leading_ones": ((1, 1, 5), (2, 3, 5)),
}
for label, (sa, sb) in BCAST.items():
    register(f"add_bcast_{label}_f32", lambda a, b: a + b, randn(*sa), randn(*sb))
    register(f"mul_bcast_{label}_f32", lambda a, b: a * b, randn(*sa), randn(*sb))
register("sub_bcast_rank4_i32", lambda a, b: a - b, randint(-9, 9, 2, 1, 4, 1, dtype=torch.int32),
         randint(-9, 9, 3, 1, 5, dtype=torch.int32))
register("div_bcast_col_f64", lambda a, b: a / b, randn(3, 4, dtype=torch.float64),
         positive(3, 1, dtype=torch.float64))
register("maximum_bcast_outer_f32", torch.maximum, randn(3, 1), randn(1, 4))
register("add_scalar_f32", lambda a: a + 1.5, randn(3, 4))
register("mul_scalar_f16", lambda a: a * 0.3, randn(3, 4, dtype=torch.float16))
register("rsub_scalar_f32", lambda a: 2.0 - a, randn(3, 4))
register("rdiv_scalar_f32", lambda a: 1.0 / a, positive(3, 4))
register("add_scalar_i8", lambda a: a + 3, randint(-50, 50, 3, 4, dtype=torch.int8))

# Type promotion: category and width as PyTorch computes result_type.
PROMOTION = [
    ("i32_f32", randint(-9, 9, 3, 4, dtype=torch.int32), randn(3, 4)),
    ("i64_f16", randint(-9, 9, 3, 4), randn(3, 4, dtype=torch.float16)),
    ("u8_i8", randint(0, 100, 3, 4, dtype=torch.uint8), randint(-50, 50, 3, 4, dtype=torch.int8)),
    ("i8_i32", randint(-50, 50, 3, 4, dtype=torch.int8), randint(-9, 9, 3, 4, dtype=torch.int32)),
    ("i16_i64", randint(-50, 50, 3, 4, dtype=torch.int16), randint(-9, 9, 3, 4)),
    ("bool_i32", randint(0, 2, 3, 4, dtype=torch.bool), randint(-9, 9, 3, 4, dtype=torch.int32)),
    ("bool_f32", randint(0, 2, 3, 4, dtype=torch.bool), randn(3, 4)),
    ("f16_f32", randn(3, 4, dtype=torch.float16), randn(3, 4)),
    ("bf16_f16", randn(3, 4, dtype=torch.bfloat16), randn(3, 4, dtype=torch.float16)),
    ("f32_f64", randn(3, 4), randn(3, 4, dtype=torch.float64)),
    ("u8_bool", randint(0, 100, 3, 4, dtype=torch.uint8), randint(0, 2, 3, 4, dtype=torch.bool)),
    ("f16_0d_f32", randn(3, 4, dtype=torch.float16), randn()),      # 0-d does not widen f16
    ("i32_0d_f64", randint(-9, 9, 3, 4, dtype=torch.int32),
     randn(dtype=torch.float64)),                                   # int + 0-d float -> f32
    ("u8_0d_i64", randint(0, 100, 3, 4, dtype=torch.uint8),
     randint(0, 100, dtype=torch.int64)),                           # stays u8
]
for label, a, b in PROMOTION:
    register(f"add_promote_{label}", lambda x, y: x + y, a, b)
    register(f"mul_promote_{label}", lambda x, y: x * y, a, b)
register("div_promote_i32_i64", lambda a, b: a / b, randint(-9, 9, 3, 4, dtype=torch.int32),
         randint(1, 9, 3, 4))
register("mul_promote_i32_float_scalar", lambda a: a * 1.5,
         randint(-9, 9, 3, 4, dtype=torch.int32))
register("add_promote_bool_int_scalar", lambda a: a + 2, randint(0, 2, 3, 4, dtype=torch.bool))
register("add_promote_u8_int_scalar_wrap", lambda a: a + 200,
         randint(0, 100, 3, 4, dtype=torch.uint8))            # wraps modulo 256 as in eager
register("add_promote_f16_f64_scalar", lambda a: a + 1e-3, randn(3, 4, dtype=torch.float16))
register("maximum_promote_i32_f32", torch.maximum, randint(-3, 3, 3, 4, dtype=torch.int32),
         randn(3, 4))
register("where_promote_f32_i64", lambda c, a, b: torch.where(c, a, b),
         randint(0, 2, 3, 4, dtype=torch.bool), randn(3, 4), randint(-5, 5, 3, 4))

# atan2 everywhere, and at the origin C's signed answers (found by the OpInfo
# family: atan2(0, 0) was NaN, eager gives 0).
register("atan2_f32", torch.atan2, randn(4, 5), randn(4, 5))
register("atan2_origin_signed_zeros_f32", torch.atan2,
         const(torch.tensor([0.0, -0.0, 0.0, -0.0, 1.0, -1.0])),
         const(torch.tensor([0.0, 0.0, -0.0, -0.0, 0.0, -0.0])))
register("atan2_origin_u8", torch.atan2, randint(0, 3, 4, 6, dtype=torch.uint8),
         randint(0, 3, 4, 6, dtype=torch.uint8))

# Shifts: amounts outside [0, bits) give 0 (left) or the sign (right), as
# eager; u8 right shifts are logical.
_SHIFTS = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
for dt in _SHIFTS:
    n = DTYPE_NAMES[dt]
    lo, hi = (0, 255) if dt == torch.uint8 else (-120, 120)
    bits = torch.iinfo(dt).bits
    amounts = const(torch.tensor([[0, 1, 3, bits - 1, bits, bits + 1, -1 if dt != torch.uint8 else 2,
                                   70]]).clamp(max=torch.iinfo(dt).max).to(dt),
                    f"shift amounts around {bits} bits")
    register(f"lshift_{n}", lambda a, b: a << b, randint(lo, hi, 3, 8, dtype=dt), amounts)
    register(f"rshift_{n}", lambda a, b: a >> b, randint(lo, hi, 3, 8, dtype=dt), amounts)
register("lshift_scalar_i64", lambda a: a << 5, randint(-1000, 1000, 3, 4))
register("rshift_scalar_i32", lambda a: a >> 3, randint(-1000, 1000, 3, 4, dtype=torch.int32))
register("bitwise_left_shift_scalar_self_i64", lambda b: torch.bitwise_left_shift(3, b),
         randint(0, 10, 6))
register("bitwise_right_shift_broadcast_i16",
         lambda a, b: torch.bitwise_right_shift(a, b),
         randint(-30000, 30000, 4, 1, dtype=torch.int16), randint(0, 16, 1, 5, dtype=torch.int16))

# ldexp (x * 2 ** e), which the client decomposes with torch's own
# decomposition; integer exponents, negative ones included.
register("ldexp_f32", torch.ldexp, randn(3, 5), randint(-6, 6, 3, 5, dtype=torch.int64))
register("ldexp_f64_broadcast", torch.ldexp, randn(2, 3, 4, dtype=torch.float64),
         randint(-20, 20, 4, dtype=torch.int32))

# fmax/fmin (a NaN operand gives the other), copysign (-0.0 and NaN signs
# included), hypot (no overflow for 1e30, +inf beside a NaN) and signbit
# (-0.0 and -NaN set it).
_SPECIAL = const(torch.tensor([[1.5, -2.0, float("nan"), 0.0, -0.0, float("inf")],
                               [float("nan"), 3.0, -float("inf"), 1e30, -1e-30, -float("nan")]]))
_OTHER = const(torch.tensor([[float("nan"), 2.5, 1.0, -0.0, 0.0, float("nan")],
                             [float("nan"), -4.0, 2.0, 1e30, 1e-30, 1.0]]))
register("fmax_nan_f32", torch.fmax, _SPECIAL, _OTHER)
register("fmin_nan_f32", torch.fmin, _SPECIAL, _OTHER)
register("fmax_broadcast_f64", torch.fmax, randn(3, 4, dtype=torch.float64), randn(4, dtype=torch.float64))
register("fmin_i32", torch.fmin, randint(-9, 9, 3, 4, dtype=torch.int32),
         randint(-9, 9, 3, 4, dtype=torch.int32))
register("fmax_f16", torch.fmax, randn(3, 4, dtype=torch.float16), randn(3, 4, dtype=torch.float16))
register("copysign_f32", torch.copysign, _SPECIAL, _OTHER)
register("copysign_scalar_f64", lambda x: torch.copysign(x, -1.0), randn(3, 4, dtype=torch.float64))
register("copysign_i64_to_f32", torch.copysign, randint(-9, 9, 3, 4), randn(3, 4))
register("hypot_f32", torch.hypot, _SPECIAL, _OTHER)
register("hypot_f64", torch.hypot, randn(3, 4, dtype=torch.float64), randn(4, dtype=torch.float64))
register("hypot_bf16", torch.hypot, randn(3, 4, dtype=torch.bfloat16), randn(3, 4, dtype=torch.bfloat16))
register("signbit_f32", torch.signbit, _SPECIAL)
register("signbit_i32_bf16", lambda i, h: (torch.signbit(i), torch.signbit(h)),
         randint(-9, 9, 3, 4, dtype=torch.int32), randn(3, 4, dtype=torch.bfloat16))
register("fmax_fmin_bool", lambda a, b: (torch.fmax(a, b), torch.fmin(a, b)),
         randint(0, 2, 3, 4, dtype=torch.bool), randint(0, 2, 3, 4, dtype=torch.bool))

# nextafter, compared bit for bit (the result viewed as integers): one step
# of the float's own type (f16 and bf16 in their bits, not widened), from and
# toward zeros of both signs, infinities, the largest finite value, NaN,
# subnormals, and equal operands (y returned). Was UNIMPLEMENTED.
_FROM = torch.tensor([[1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 0.0, float("inf"), 2.0],
                      [float("nan"), 1.0, 3.0, -3.0, 1e-40, -1e-40, 65504.0, 5.0, -float("inf"), 0.5]])
_TOWARD = torch.tensor([[2.0, 0.0, -2.0, 0.0, 1.0, -1.0, 1.0, -0.0, 0.0, 2.0],
                        [1.0, float("nan"), -3.0, 3.0, 0.0, 0.0, float("inf"), 5.0, 0.0, -0.5]])
_BITS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
         torch.bfloat16: torch.int16}
for _dt in _BITS:
    register(f"nextafter_bits_{DTYPE_NAMES[_dt]}",
             lambda x, y, _b=_BITS[_dt]: torch.nextafter(x, y).view(_b),
             const(_FROM.to(_dt)), const(_TOWARD.to(_dt)))
register("nextafter_broadcast_f32", lambda x, y: torch.nextafter(x, y).view(torch.int32),
         randn(3, 4), randn(4))
register("nextafter_scalar_other_f64",
         lambda x: torch.nextafter(x, torch.tensor(0.0, dtype=torch.float64)).view(torch.int64),
         randn(3, 4, dtype=torch.float64))
