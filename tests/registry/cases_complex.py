"""Complex tensors (complex64, complex128): inputs and outputs, view_as_real
and view_as_complex, conversions, torch.complex and torch.polar, angle,
add/sub/mul/div (with complex, real and
number operands), neg, conj, abs and norms, sums and means, views, slices
and cat, and the FFTs (fft, ifft, rfft, irfft, fft2, with every
normalisation). Kiln carries them as (real, imaginary) pairs."""

import torch
import torch.nn.functional as F  # noqa: F401

from tests.registry.registry import const, randint, randn, register

C64, C128 = torch.complex64, torch.complex128

register("complex_identity_c64", lambda z: z.clone(), randn(3, 4, dtype=C64))
register("view_as_real_c64", torch.view_as_real, randn(3, 4, dtype=C64))
register("view_as_complex_f32", torch.view_as_complex, randn(3, 4, 2))
register("real_imag_parts_c128", lambda z: z.real * 2 + z.imag, randn(3, 4, dtype=C128))
register("complex_from_real_to_c64", lambda x: x.to(C64) * (x + 1).to(C64), randn(2, 5))
register("complex_to_c128_c64", lambda z: z.to(C128), randn(2, 3, dtype=C64))

# Arithmetic.
register("complex_add_sub_alpha_c64", lambda a, b: a + b * 2 - torch.sub(a, b, alpha=0.5),
         randn(3, 4, dtype=C64), randn(3, 4, dtype=C64))
register("complex_mul_broadcast_c64", lambda a, b: a * b,
         randn(3, 4, dtype=C64), randn(4, dtype=C64))
register("complex_mul_real_tensor_c64", lambda a, r: a * r, randn(3, 4, dtype=C64), randn(3, 4))
register("complex_mul_number_c128", lambda a: a * 3.5 + 1, randn(3, 4, dtype=C128))
register("complex_div_c64", lambda a, b: a / b, randn(3, 4, dtype=C64), randn(3, 4, dtype=C64))
register("complex_div_c128", lambda a, b: a / b, randn(5, dtype=C128), randn(5, dtype=C128))
register("complex_div_real_c64", lambda a, r: a / (r.abs() + 0.5), randn(3, 4, dtype=C64),
         randn(3, 4))
register("complex_neg_conj_c64", lambda a: torch.view_as_real(-a.conj() * a),
         randn(3, 4, dtype=C64))
register("complex_abs_c64", torch.abs, randn(3, 4, dtype=C64))
register("complex_abs_c128", torch.abs, randn(6, dtype=C128))
register("complex_vector_norm_c64", lambda a: torch.linalg.vector_norm(a, dim=1),
         randn(3, 5, dtype=C64))
register("complex_sum_mean_c64", lambda a: (a.sum(1), a.mean(0), a.sum()),
         randn(3, 5, dtype=C64))

# Structure.
register("complex_views_c64", lambda a: a.reshape(2, 6).t().unsqueeze(0).permute(0, 2, 1),
         randn(3, 4, dtype=C64))
register("complex_slice_select_c64", lambda a: (a[:, 1:3], a[1], a[:, -1]),
         randn(3, 4, dtype=C64))
register("complex_cat_c64", lambda a, b: torch.cat([a, b], 1), randn(2, 3, dtype=C64),
         randn(2, 2, dtype=C64))
register("complex_expand_c64", lambda a, b: a.expand(3, 4) * b, randn(1, 4, dtype=C64),
         randn(3, 4, dtype=C64))


# Construction from real parts and the argument: torch.complex and
# torch.polar (broadcast, as LLaMA-style models build their rotary
# frequencies in forward), angle of complex and of real numbers.
register("complex_from_parts_broadcast_f32", lambda re, im: torch.complex(re, im) * 2,
         randn(3, 4), randn(4))
register("complex_from_parts_f64", lambda re, im: torch.view_as_real(torch.complex(re, im)),
         randn(2, 3, dtype=torch.float64), randn(2, 3, dtype=torch.float64))
register("polar_rotary_frequencies_f32",
         lambda pos, inv: torch.polar(torch.ones(6, 4), torch.outer(pos, inv)),
         const(torch.arange(6.0)), const(1.0 / 10000 ** (torch.arange(0, 8, 2) / 8)))
register("polar_broadcast_f64", lambda r, t: torch.polar(r.abs(), t),
         randn(3, 1, dtype=torch.float64), randn(3, 5, dtype=torch.float64, scale=3.0))
register("complex_angle_c64", torch.angle,
         const(torch.tensor([1 + 1j, -1 + 0j, -1 - 0j, 0j, -0.0 - 0j, 1j, -2j, 3 - 4j,
                             complex(float("nan"), 1.0)], dtype=C64)))
register("complex_angle_c128", torch.angle, randn(4, 5, dtype=C128))
register("angle_f32_signs", torch.angle,
         const(torch.tensor([1.5, -2.0, 0.0, -0.0, float("inf"), -float("inf"), float("nan")])))
register("angle_f16", torch.angle, randn(3, 4, dtype=torch.float16))
register("angle_u8", torch.angle, randint(0, 256, 3, 4, dtype=torch.uint8))
register("angle_i64", torch.angle, randint(-5, 5, 3, 4))

class Rotary(torch.nn.Module):
    """Rotary position embedding as LLaMA writes it: pairs of features
    viewed as complex numbers and rotated by complex frequencies."""

    def __init__(self) -> None:
        super().__init__()
        angles = torch.outer(torch.arange(6.0), 1.0 / 10000 ** (torch.arange(0, 8, 2) / 8))
        self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x):
        z = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(z * self.freqs).flatten(2)


register("complex_rotary_embedding_f32", Rotary, randn(2, 6, 8))

# FFTs: complex and real inputs, one and two dims, every normalisation, odd
# and even lengths.
for norm in ("backward", "ortho", "forward"):
    register(f"fft_{norm}_c64", lambda z, nm=norm: torch.fft.fft(z, norm=nm),
             randn(3, 8, dtype=C64))
    register(f"rfft_{norm}_f32", lambda x, nm=norm: torch.fft.rfft(x, norm=nm), randn(2, 10))
    register(f"irfft_{norm}_c64", lambda z, nm=norm: torch.fft.irfft(z, n=10, norm=nm),
             randn(2, 6, dtype=C64))
register("ifft_c128", lambda z: torch.fft.ifft(z, dim=0), randn(7, 3, dtype=C128))
register("fft_odd_length_c64", lambda z: torch.fft.fft(z), randn(2, 9, dtype=C64))
register("fft2_real_input_f32", lambda x: torch.fft.fft2(x), randn(2, 4, 6))
register("rfft2_f64", lambda x: torch.fft.rfft2(x), randn(3, 5, 6, dtype=torch.float64))
register("irfft_odd_f32", lambda z: torch.fft.irfft(z, n=7), randn(3, 4, dtype=C64))
register("rfft_abs_spectrum_f32", lambda x: torch.fft.rfft(x).abs(), randn(4, 16))
register("fft_convolution_f32",
         lambda x, k: torch.fft.irfft(torch.fft.rfft(x, n=16) * torch.fft.rfft(k, n=16), n=16),
         randn(3, 12), randn(3, 5))

# Long transforms: four-step factorisations (a power of two, odd factors,
# several levels), Bluestein's chirp for prime lengths, the real inverse
# from a rebuilt Hermitian spectrum. Before them a transform past 2,048
# points was UNIMPLEMENTED (its DFT table too large). Outputs grow as
# sqrt(N), so the absolute tolerance does too.
register("fft_four_step_4096_c64", lambda z: torch.fft.fft(z), randn(2, 4096, dtype=C64),
         rtol=1e-4, atol=1e-3)
register("ifft_four_step_6000_ortho_c64", lambda z: torch.fft.ifft(z, norm="ortho"),
         randn(2, 6000, dtype=C64), rtol=1e-4, atol=1e-4)
register("rfft_four_step_8192_f32", lambda x: torch.fft.rfft(x), randn(3, 8192),
         rtol=1e-4, atol=2e-3)
register("irfft_four_step_10000_f32", lambda z: torch.fft.irfft(z, n=10000),
         randn(2, 5001, dtype=C64), rtol=1e-4, atol=1e-5)
register("irfft_odd_factors_1001_c128", lambda z: torch.fft.irfft(z, n=1001),
         randn(2, 501, dtype=C128))
register("fft_bluestein_4099_c64", lambda z: torch.fft.fft(z), randn(2, 4099, dtype=C64),
         rtol=1e-4, atol=1e-3)
register("fft_bluestein_factor_8198_c64", lambda z: torch.fft.fft(z, norm="forward"),
         randn(1, 8198, dtype=C64), rtol=1e-4, atol=1e-6)
register("irfft_bluestein_4099_f64", lambda z: torch.fft.irfft(z, n=4099),
         randn(2, 2050, dtype=C128))
register("rfft_bluestein_257_f32", lambda x: torch.fft.rfft(x), randn(5, 257),
         rtol=1e-4, atol=1e-4)
register("fft2_factored_192x160_c64", lambda z: torch.fft.fft2(z), randn(2, 192, 160, dtype=C64),
         rtol=1e-4, atol=2e-3)

# Edge cases: complex to bool (either part nonzero), |z| without overflow
# or underflow in the squares, 0-d complex tensors.
register("complex_to_bool_c64", lambda z: z.bool(),
         const(torch.tensor([0j, 1j, 2 + 0j, 0 * 1j, -0.0 + 0j, 3 - 4j], dtype=C64)))
register("complex_abs_extremes_c64", torch.abs,
         const(torch.tensor([1e20 + 1e20j, 1e-30 + 1e-30j, 3e38 + 0j, 0j, -4 + 3j,
                             float("inf") + 1j, 1e-45 + 0j, 2 - 1e25j], dtype=C64)))
register("complex_abs_extremes_c128", torch.abs,
         const(torch.tensor([1e200 + 1e200j, 1e-300 + 1e-300j, 0j, 3 + 4j,
                             complex(float("inf"), 1.0)], dtype=C128)))
register("complex_0d_sum_transpose_c64", lambda z: (z.sum(0), z.t() * 2, z.mean()),
         randn(dtype=C64))
