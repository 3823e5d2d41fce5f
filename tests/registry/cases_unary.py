"""Elementwise unary ops across float and integer dtypes."""

import torch
import torch.nn.functional as F

from tests.registry.registry import DTYPE_NAMES, const, positive, rand, randint, randn, register

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)

# op name -> (function, input spec maker for a float dtype)
FLOAT_UNARY = {
    "exp": (torch.exp, lambda dt: randn(3, 5, dtype=dt)),
    "log": (torch.log, lambda dt: positive(3, 5, dtype=dt)),
    "sqrt": (torch.sqrt, lambda dt: positive(3, 5, dtype=dt)),
    "rsqrt": (torch.rsqrt, lambda dt: positive(3, 5, dtype=dt)),
    "sin": (torch.sin, lambda dt: randn(3, 5, dtype=dt, scale=3.0)),
    "cos": (torch.cos, lambda dt: randn(3, 5, dtype=dt, scale=3.0)),
    "tanh": (torch.tanh, lambda dt: randn(3, 5, dtype=dt, scale=2.0)),
    "sigmoid": (torch.sigmoid, lambda dt: randn(3, 5, dtype=dt, scale=3.0)),
    "erf": (torch.erf, lambda dt: randn(3, 5, dtype=dt)),
    "floor": (torch.floor, lambda dt: randn(3, 5, dtype=dt, scale=4.0)),
    "ceil": (torch.ceil, lambda dt: randn(3, 5, dtype=dt, scale=4.0)),
    "round": (torch.round, lambda dt: randn(3, 5, dtype=dt, scale=4.0)),
    "trunc": (torch.trunc, lambda dt: randn(3, 5, dtype=dt, scale=4.0)),
    "abs": (torch.abs, lambda dt: randn(3, 5, dtype=dt)),
    "neg": (torch.neg, lambda dt: randn(3, 5, dtype=dt)),
    "relu": (torch.relu, lambda dt: randn(3, 5, dtype=dt)),
    "reciprocal": (torch.reciprocal, lambda dt: positive(3, 5, dtype=dt)),
}
for op, (fn, spec) in FLOAT_UNARY.items():
    for dt in FLOATS:
        register(f"{op}_{DTYPE_NAMES[dt]}", fn, spec(dt))

# A few more float-only ops in f32 (and 4-d shapes).
register("log1p_f32", torch.log1p, rand(4, 6, low=-0.5, high=3.0))
register("expm1_f32", torch.expm1, randn(4, 6))
register("sign_f32", torch.sign, randn(4, 6))
register("log2_f32", torch.log2, positive(4, 6))
register("exp2_f32", torch.exp2, randn(4, 6))
register("atan_f32", torch.atan, randn(4, 6, scale=3.0))
# f32 trigonometry to an ulp of eager's (libm's, correctly rounded or
# nearly): sin and cos at large arguments, where a one-part reduction by
# pi/2 in f32 (MLIR's approximation) was off by 5e-5 at 1000 and 7e-3 at
# 1e5, and up to 3.4e38; atan, asin and acos, which were 30 ulps off.
# Eager and Kiln may each be half an ulp from the true value: rtol 2.5e-7.
TRIG_RTOL = dict(rtol=2.5e-7, atol=1e-37)
register("sin_cos_large_f32", lambda x: (torch.sin(x), torch.cos(x)),
         randn(6, 50, scale=3e4), **TRIG_RTOL)
register("sin_cos_huge_f32", lambda x: (torch.sin(x), torch.cos(x)),
         const(torch.tensor([1e7, -3.4e38, 3.4e38, 1e20, 8.5e37, -123456.7, 1e-40, -0.0, 0.0,
                             3.1415927, 1.5707964, 6.2831855, 710.0, float("inf"),
                             float("nan")])), **TRIG_RTOL)
register("atan_asin_acos_f32", lambda x, y: (torch.atan(x * 10), torch.asin(y), torch.acos(y),
                                             torch.atan2(y, x)),
         randn(8, 40), rand(8, 40, low=-1.0, high=1.0), **TRIG_RTOL)
register("inverse_trig_edges_f32", lambda x: (torch.asin(x), torch.acos(x), torch.atan(x)),
         const(torch.tensor([1.0, -1.0, 0.0, -0.0, 1.0000001, -1.5, 0.99999994, -0.99999994,
                             1e-40, float("inf"), float("nan")])), **TRIG_RTOL)
register("asin_f32", torch.asin, rand(4, 6, low=-0.99, high=0.99))
register("silu_f32", F.silu, randn(4, 6, scale=3.0))
register("mish_f32", F.mish, randn(4, 6, scale=3.0))
register("softplus_f32", F.softplus, randn(4, 6, scale=3.0))
register("hardswish_f32", F.hardswish, randn(4, 6, scale=4.0))
register("hardsigmoid_f32", F.hardsigmoid, randn(4, 6, scale=4.0))
register("hardtanh_f32", F.hardtanh, randn(4, 6, scale=2.0))
register("relu6_f32", F.relu6, randn(4, 6, scale=5.0))
register("leaky_relu_f32", lambda x: F.leaky_relu(x, 0.1), randn(4, 6))
register("elu_f32", F.elu, randn(4, 6))
register("exp_f32_4d", torch.exp, randn(2, 3, 4, 5))
register("sqrt_f32_1d", torch.sqrt, positive(17))
register("tanh_f32_3d", torch.tanh, randn(2, 7, 9))
register("sigmoid_f32_0d", torch.sigmoid, randn())
register("erf_f32_large", torch.erf, randn(64, 33, scale=2.0))
register("round_half_even_f32", torch.round,
         const(torch.tensor([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 3.5, 0.49]]),
               "f32 ties [-2.5 .. 3.5]"))  # ties round to even
register("round_decimals_f32", lambda x: torch.round(x, decimals=2), randn(4, 6))
register("floor_f32_big", torch.floor, randn(8, 130, scale=100.0))
register("clone_f32", torch.clone, randn(3, 4))

# Integer unary ops (exact).
for dt in INTS:
    name = DTYPE_NAMES[dt]
    lo = 0 if dt == torch.uint8 else -50
    register(f"abs_{name}", torch.abs, randint(lo, 50, 3, 5, dtype=dt))
    register(f"neg_{name}", torch.neg, randint(lo, 50, 3, 5, dtype=dt))
register("sign_i32", torch.sign, randint(-5, 5, 3, 5, dtype=torch.int32))
register("bitwise_not_i32", torch.bitwise_not, randint(-100, 100, 3, 5, dtype=torch.int32))
register("bitwise_not_u8", torch.bitwise_not, randint(0, 255, 3, 5, dtype=torch.uint8))
register("bitwise_not_bool", torch.bitwise_not, randint(0, 2, 3, 5, dtype=torch.bool))

# Float ops applied to integer inputs promote to the default float dtype.
register("sqrt_i64_to_f32", torch.sqrt, randint(0, 100, 3, 5))
register("exp_i32_to_f32", torch.exp, randint(-3, 3, 3, 5, dtype=torch.int32))
register("sin_bool_to_f32", torch.sin, randint(0, 2, 3, 5, dtype=torch.bool))
register("sigmoid_u8_to_f32", torch.sigmoid, randint(0, 10, 3, 5, dtype=torch.uint8))
# bf16 subnormals survive arithmetic and conversions (a CPU's bf16
# conversion instruction, AVX512-BF16's, would flush them to zero); atol 0
# so that a flushed result fails.
register("bf16_subnormals", lambda x: (x * 1.5, -x, torch.tanh(x), x + x, x.float() * 0.5),
         const(torch.tensor([9.18e-41, -1.0e-39, 1.1e-38, 3.0, 0.0], dtype=torch.bfloat16)),
         rtol=1e-2, atol=0.0)
