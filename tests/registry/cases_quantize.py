"""Affine quantization: PT2E's quantized_decomposed quantize/dequantize ops
(per tensor, scalar and tensor parameters, and per channel), ATen's
fake_quantize ops (per tensor, tensor qparams with the enable flag, per
channel with integer and float zero points, with their masks), and
quantized convolution and linear layers as PT2E leaves them in a graph
(dequantize, float op, quantize). Inputs on exact halves check that
rounding is half to even; wide inputs check the clamp."""

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401 (defines torch.ops.quantized_decomposed)
import torch.nn.functional as F

from tests.registry.registry import const, rand, randint, randn, register

qd = torch.ops.quantized_decomposed
aten = torch.ops.aten

# Quantized ranges per dtype.
_RANGES = {torch.int8: (-128, 127), torch.uint8: (0, 255), torch.int16: (-32768, 32767),
           torch.int32: (-2**31, 2**31 - 1)}
_NAMES = {torch.int8: "i8", torch.uint8: "u8", torch.int16: "i16", torch.int32: "i32"}

# x / 0.5 lands on exact halves: 0.25 -> 0.5 -> 0, 0.75 -> 1.5 -> 2, ...
_HALVES = const(torch.tensor([[-1.25, -0.75, -0.25, 0.25], [0.75, 1.25, 1.75, 2.25],
                              [100.0, -100.0, 0.0, -0.0]]), "exact halves at scale 0.5")

for dt, (lo, hi) in _RANGES.items():
    n = _NAMES[dt]
    zp = 0 if dt == torch.int32 else (3 if lo < 0 else 128)
    register(f"quantize_per_tensor_{n}",
             lambda x, lo=lo, hi=hi, dt=dt, zp=zp: qd.quantize_per_tensor(x, 0.02, zp, lo, hi, dt),
             randn(4, 6, scale=3.0))
    register(f"dequantize_per_tensor_{n}",
             lambda q, lo=lo, hi=hi, dt=dt, zp=zp: qd.dequantize_per_tensor(
                 q, 0.0173, zp, lo, hi, dt),
             randint(max(lo, -1000), min(hi, 1000) + 1, 4, 6, dtype=dt))
register("quantize_per_tensor_halves_to_even_i8",
         lambda x: qd.quantize_per_tensor(x, 0.5, 0, -128, 127, torch.int8), _HALVES)
register("quantize_per_tensor_clamped_narrow_range_i8",
         lambda x: qd.quantize_per_tensor(x, 0.05, -2, -127, 127, torch.int8),
         randn(5, 5, scale=10.0))
register("quantize_per_tensor_bf16_input_u8",
         lambda x: qd.quantize_per_tensor(x, 0.03, 100, 0, 255, torch.uint8),
         randn(3, 8, dtype=torch.bfloat16))
register("quantize_per_tensor_tensor_params_i8",
         lambda x, s, z: qd.quantize_per_tensor.tensor(x, s, z, -128, 127, torch.int8),
         randn(4, 5), const(torch.tensor(0.037, dtype=torch.float64)),
         const(torch.tensor(-5)))
register("dequantize_per_tensor_tensor_params_u8",
         lambda q, s, z: qd.dequantize_per_tensor.tensor(q, s, z, 0, 255, torch.uint8),
         randint(0, 256, 4, 5, dtype=torch.uint8), const(torch.tensor(0.011)),
         const(torch.tensor(128)))
register("dequantize_per_tensor_out_bf16_i8",
         lambda q: qd.dequantize_per_tensor(q, 0.0123, -7, -128, 127, torch.int8,
                                            out_dtype=torch.bfloat16),
         randint(-128, 128, 4, 6, dtype=torch.int8))
register("dequantize_per_tensor_out_f16_i16",
         lambda q: qd.dequantize_per_tensor(q, 0.00031, 11, -32768, 32767, torch.int16,
                                            out_dtype=torch.float16),
         randint(-32768, 32768, 4, 6, dtype=torch.int16))
register("quantize_dequantize_round_trip_f32",
         lambda x: qd.dequantize_per_tensor(
             qd.quantize_per_tensor(x, 0.01, 4, -128, 127, torch.int8),
             0.01, 4, -128, 127, torch.int8),
         randn(6, 7))

# Per channel: f32 scales compute in f32, f64 scales (a dimensioned tensor)
# promote the quantize to f64.
for axis in (0, 1, -1):
    tag = "last" if axis < 0 else str(axis)
    register(f"quantize_per_channel_axis{tag}_i8",
             lambda x, s, z, a=axis: qd.quantize_per_channel(x, s, z, a, -128, 127, torch.int8),
             randn(4, 5, 3, scale=2.0), rand({0: 4, 1: 5, -1: 3}[axis], low=0.01, high=0.05),
             randint(-4, 5, {0: 4, 1: 5, -1: 3}[axis]))
register("quantize_per_channel_f64_scales_u8",
         lambda x, s, z: qd.quantize_per_channel(x, s, z, 0, 0, 255, torch.uint8),
         randn(3, 6, scale=2.0), rand(3, low=0.01, high=0.05, dtype=torch.float64),
         randint(100, 150, 3))
register("quantize_per_channel_halves_to_even_i8",
         lambda x, s, z: qd.quantize_per_channel(x, s, z, 0, -128, 127, torch.int8),
         _HALVES, const(torch.tensor([0.5, 0.5, 0.25])), const(torch.tensor([0, 1, -1])))
register("dequantize_per_channel_i8",
         lambda q, s, z: qd.dequantize_per_channel(q, s, z, 1, -128, 127, torch.int8),
         randint(-128, 128, 2, 4, 3, dtype=torch.int8), rand(4, low=0.001, high=0.1),
         randint(-3, 4, 4))
register("dequantize_per_channel_no_zero_points_i8",
         lambda q, s: qd.dequantize_per_channel(q, s, None, 0, -127, 127, torch.int8),
         randint(-127, 128, 3, 5, dtype=torch.int8), rand(3, low=0.001, high=0.1))
register("dequantize_per_channel_f64_scales_out_f32_u8",
         lambda q, s, z: qd.dequantize_per_channel(q, s, z, 0, 0, 255, torch.uint8,
                                                   out_dtype=torch.float32),
         randint(0, 256, 3, 4, dtype=torch.uint8),
         rand(3, low=0.001, high=0.1, dtype=torch.float64), randint(120, 136, 3))

# fake_quantize, per tensor: torch.fake_quantize_per_tensor_affine exports
# as its _cachemask op; the mask is its second output.
register("fake_quantize_per_tensor_f32",
         lambda x: torch.fake_quantize_per_tensor_affine(x, 0.03, 5, -128, 127),
         randn(4, 6, scale=3.0))
register("fake_quantize_per_tensor_cachemask_f32",
         lambda x: aten.fake_quantize_per_tensor_affine_cachemask(x, 0.07, 131, 0, 255),
         randn(4, 6, scale=8.0))
register("fake_quantize_per_tensor_halves_to_even_f32",
         lambda x: torch.fake_quantize_per_tensor_affine(x, 0.5, 0, -128, 127), _HALVES)
register("fake_quantize_per_tensor_nan_inf_f32",
         lambda x: aten.fake_quantize_per_tensor_affine_cachemask(x, 0.1, 2, -128, 127),
         const(torch.tensor([float("nan"), float("inf"), float("-inf"), 1e30, 0.35])),
         )
register("fake_quantize_per_tensor_f64",
         lambda x: torch.fake_quantize_per_tensor_affine(x, 0.013, -3, -128, 127),
         randn(4, 6, dtype=torch.float64))
register("fake_quantize_per_tensor_f16",
         lambda x: torch.fake_quantize_per_tensor_affine(x, 0.03, 0, -128, 127),
         randn(4, 6, dtype=torch.float16))
# Tensor qparams (what the FakeQuantize module calls): scale and zero point
# as tensors, and the enable flag that passes the input through.
for enabled in (0, 1):
    register(f"fake_quantize_tensor_qparams_enabled{enabled}_f32",
             lambda x, s, z, e: aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
                 x, s, z, e, 0, 255),
             randn(3, 7, scale=2.0), const(torch.tensor([0.021])),
             const(torch.tensor([120], dtype=torch.int32)),
             const(torch.tensor([enabled], dtype=torch.long)))
register("fake_quantize_tensor_qparams_overload_f32",
         lambda x, s, z: torch.fake_quantize_per_tensor_affine(x, s, z, -128, 127),
         randn(3, 7, scale=2.0), const(torch.tensor(0.019)),
         const(torch.tensor(4, dtype=torch.int32)))

# fake_quantize, per channel.
for axis in (0, 1):
    register(f"fake_quantize_per_channel_axis{axis}_f32",
             lambda x, s, z, a=axis: torch.fake_quantize_per_channel_affine(
                 x, s, z, a, -128, 127),
             randn(3, 4, 5, scale=2.0), rand({0: 3, 1: 4}[axis], low=0.01, high=0.05),
             randint(-5, 6, {0: 3, 1: 4}[axis], dtype=torch.int32))
register("fake_quantize_per_channel_cachemask_f32",
         lambda x, s, z: aten.fake_quantize_per_channel_affine_cachemask(x, s, z, 1, 0, 255),
         randn(2, 3, 4, scale=4.0), rand(3, low=0.01, high=0.05),
         randint(100, 150, 3, dtype=torch.int32))
register("fake_quantize_per_channel_float_zero_point_f32",
         lambda x, s, z: torch.fake_quantize_per_channel_affine(x, s, z, 0, -128, 127),
         randn(3, 6, scale=2.0), rand(3, low=0.01, high=0.05), rand(3, low=-3.0, high=3.0))


class QuantizedConv(torch.nn.Module):
    """A conv2d as PT2E's reference representation leaves it: int8 weight
    and activation dequantized, a float conv, the output quantized."""

    def __init__(self, dtype: torch.dtype = torch.int8) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(7)
        lo, hi = _RANGES[dtype]
        self.dtype, self.lo, self.hi = dtype, lo, hi
        self.register_buffer("weight", torch.randint(max(lo, -127), min(hi, 127) + 1,
                                                     (6, 3, 3, 3), generator=g).to(dtype))
        self.register_buffer("weight_scales", torch.rand(6, generator=g) * 0.01 + 0.002)
        self.register_buffer("weight_zps", torch.zeros(6, dtype=torch.long))
        self.bias = torch.nn.Parameter(torch.randn(6, generator=g) * 0.1)

    def forward(self, x):
        lo, hi, dt = self.lo, self.hi, self.dtype
        xq = qd.quantize_per_tensor(x, 0.02, 0, lo, hi, dt)
        xf = qd.dequantize_per_tensor(xq, 0.02, 0, lo, hi, dt)
        w = qd.dequantize_per_channel(self.weight, self.weight_scales, self.weight_zps, 0,
                                      lo, hi, dt)
        y = F.relu(F.conv2d(xf, w, self.bias, padding=1))
        yq = qd.quantize_per_tensor(y, 0.05, 0, lo, hi, dt)
        return qd.dequantize_per_tensor(yq, 0.05, 0, lo, hi, dt)


class QuantizedLinear(torch.nn.Module):
    """A linear layer in PT2E's reference representation, uint8 activations."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(11)
        self.register_buffer("weight", torch.randint(-127, 128, (8, 16), generator=g)
                             .to(torch.int8))
        self.register_buffer("weight_scales", torch.rand(8, generator=g) * 0.01 + 0.002)
        self.register_buffer("weight_zps", torch.zeros(8, dtype=torch.long))

    def forward(self, x):
        xq = qd.quantize_per_tensor(x, 0.03, 128, 0, 255, torch.uint8)
        xf = qd.dequantize_per_tensor(xq, 0.03, 128, 0, 255, torch.uint8)
        w = qd.dequantize_per_channel(self.weight, self.weight_scales, self.weight_zps, 0,
                                      -127, 127, torch.int8)
        y = F.linear(xf, w)
        yq = qd.quantize_per_tensor(y, 0.04, 128, 0, 255, torch.uint8)
        return qd.dequantize_per_tensor(yq, 0.04, 128, 0, 255, torch.uint8)


# The float products may round differently in the last bit (another
# summation order), which can move a value across a rounding tie of the
# output quantizer: one quantum of the output scale.
register("quantized_conv2d_i8", QuantizedConv, randn(1, 3, 8, 8), atol=0.0501, rtol=0.0)
register("quantized_conv2d_i16", QuantizedConv, randn(1, 3, 8, 8), atol=0.0501, rtol=0.0,
         dtype=torch.int16)
register("quantized_linear_u8", QuantizedLinear, randn(4, 16), atol=0.0401, rtol=0.0)
