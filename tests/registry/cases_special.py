"""torch.special's functions that torch.export keeps whole (lgamma,
digamma, polygamma, zeta, the incomplete gamma functions igamma and
igammac, erfc, erfcx, erfinv, ndtri, the Bessel functions I, K (and their
scaled forms), J, Y and the spherical j0, Airy's Ai), gcd, lcm and frexp,
and programs that torch decomposes into them (log_ndtr, multigammaln), over
their domains: poles, reflections, the series' seams (the Bessel
functions' at |x| = 20, erfcx's at 26) and the tails of the inverses."""

import torch

from tests.registry.registry import DTYPE_NAMES, const, rand, randint, randn, register

F64 = torch.float64
S = torch.special
inf, nan = float("inf"), float("nan")

# lgamma: libm's; negative non-integers, the poles of an integer input.
register("lgamma_f32", torch.lgamma, rand(4, 6, low=-6.0, high=9.0))
register("lgamma_f64", torch.lgamma, rand(4, 6, dtype=F64, low=-30.0, high=200.0))
register("lgamma_bf16", torch.lgamma, rand(3, 5, dtype=torch.bfloat16, low=0.1, high=12.0))
register("lgamma_i64", torch.lgamma, randint(-3, 12, 3, 5))

# digamma and polygamma: the reflection below 0, the shift to 10, the
# poles (NaN at the negative integers, -inf at +0 and +inf at -0).
register("digamma_f32", torch.digamma, rand(4, 6, low=-8.0, high=12.0))
register("digamma_f64", torch.digamma, rand(4, 6, dtype=F64, low=-20.0, high=1e4))
register("digamma_f16", torch.digamma, rand(3, 5, dtype=torch.float16, low=0.2, high=20.0))
register("digamma_poles_f64", torch.digamma,
         const(torch.tensor([0.0, -0.0, -3.0, inf, -inf, nan, 1e-300, -2.5], dtype=F64)))
for n, dtype in ((0, F64), (1, F64), (1, torch.float32), (2, F64), (3, torch.float32), (4, F64)):
    register(f"polygamma_{n}_{DTYPE_NAMES[dtype]}", lambda x, n=n: torch.polygamma(n, x),
             rand(4, 6, dtype=dtype, low=-9.0, high=12.0))
register("polygamma_2_edges_f64", lambda x: torch.polygamma(2, x),
         const(torch.tensor([0.0, -2.0, -inf, 1e-100, 1e6, -0.5, 25.5], dtype=F64)))

# Hurwitz's zeta: tensor and number operands, negative q with an integer x
# (longer direct sums), and its domain's edges.
register("zeta_f64", torch.special.zeta, rand(4, 5, dtype=F64, low=1.05, high=8.0),
         rand(4, 5, dtype=F64, low=0.05, high=30.0))
register("zeta_f32_broadcast", torch.special.zeta, rand(3, 1, low=1.5, high=5.0),
         rand(4, low=0.5, high=6.0))
register("zeta_negative_q_f64", lambda q: torch.special.zeta(torch.full_like(q, 3.0), q),
         rand(3, 5, dtype=F64, low=-40.0, high=-0.01))
register("zeta_number_x_f64", lambda q: torch.special.zeta(2.0, q),
         rand(3, 5, dtype=F64, low=0.1, high=5.0))
register("zeta_number_q_f64", lambda x: torch.special.zeta(x, 1.5),
         rand(3, 5, dtype=F64, low=1.1, high=9.0))
register("zeta_edges_f64", torch.special.zeta,
         const(torch.tensor([1.0, 0.5, 2.0, 3.0, 2.5, 2.0, inf, nan, 2.0, 2.0, 2.0, 4.0],
                            dtype=F64)),
         const(torch.tensor([2.0, 2.0, 0.0, -2.0, -2.5, inf, 2.0, 2.0, -inf, nan, -1e300,
                             -300.5], dtype=F64)))

# The regularized incomplete gamma functions P(a, x) and Q(a, x): each of
# Cephes' kernels (P's power series, Q's continued fraction past x = 1.1,
# Q's small-x series with log Gamma(1 + a) near a = 0 and 1), x near a where
# eager switches to Temme's expansion (a up to 1e5), broadcasting, the
# half types, and the domain's edges in eager's order.
register("igamma_f32", torch.igamma, rand(4, 6, low=0.05, high=12.0), rand(4, 6, high=15.0))
register("igammac_f32", torch.igammac, rand(4, 6, low=0.05, high=12.0), rand(4, 6, high=15.0))
register("igamma_f64", torch.igamma, rand(5, 6, dtype=F64, low=0.01, high=300.0),
         rand(5, 6, dtype=F64, high=400.0))
register("igammac_f64", torch.igammac, rand(5, 6, dtype=F64, low=0.01, high=300.0),
         rand(5, 6, dtype=F64, high=400.0))
for fn in ("igamma", "igammac"):
    register(f"{fn}_small_x_f64", getattr(torch, fn), rand(4, 6, dtype=F64, low=1e-4, high=2.5),
             rand(4, 6, dtype=F64, low=1e-3, high=1.1))
    register(f"{fn}_near_a_f64", lambda a, t, fn=fn: getattr(torch, fn)(a, a * (1.0 + t)),
             rand(4, 5, dtype=F64, low=20.0, high=1e5), rand(4, 5, dtype=F64, low=-0.02, high=0.02))
register("igamma_broadcast_f32", torch.igamma, rand(3, 1, low=0.5, high=6.0),
         rand(4, low=0.1, high=8.0))
register("igamma_f16", torch.igamma, rand(3, 5, dtype=torch.float16, low=0.2, high=8.0),
         rand(3, 5, dtype=torch.float16, high=10.0))
register("igammac_bf16", torch.igammac, rand(3, 5, dtype=torch.bfloat16, low=0.2, high=8.0),
         rand(3, 5, dtype=torch.bfloat16, high=10.0))
_IGAMMA_EDGES = (
    const(torch.tensor([0.0, 0.0, -1.0, 2.0, inf, inf, 2.0, nan, 2.0, 0.0, nan, 3.0, 0.0, nan],
                       dtype=F64)),
    const(torch.tensor([1.0, 0.0, 2.0, -1.0, 3.0, inf, inf, 1.0, nan, nan, 0.0, 0.0, inf, inf],
                       dtype=F64)))
# Prefactors x^a e^-x / Gamma(a) that underflow to 0: the kernel is not run
# and P (or Q) is exactly 0 or 1.
_IGAMMA_UNDERFLOW = (const(torch.tensor([194.5, 500.0, 0.5, 3.0, 1e4], dtype=F64)),
                     const(torch.tensor([0.077, 1e-3, 800.0, 1000.0, 50.0], dtype=F64)))
register("igamma_underflow_f64", torch.igamma, *_IGAMMA_UNDERFLOW)
register("igammac_underflow_f64", torch.igammac, *_IGAMMA_UNDERFLOW)
register("igamma_edges_f64", torch.igamma, *_IGAMMA_EDGES)
register("igammac_edges_f64", torch.igammac, *_IGAMMA_EDGES)

# The error functions: libm's erfc, erfcx on both sides of its series'
# seam (26), erfinv to its tails, the normal quantile and log-CDF.
register("erfc_f32", torch.erfc, randn(4, 6, scale=4.0))
register("erfc_f64", torch.erfc, randn(4, 6, dtype=F64, scale=8.0))
register("erfcx_f64", torch.special.erfcx, rand(4, 8, dtype=F64, low=-20.0, high=60.0))
register("erfcx_f32", torch.special.erfcx, rand(4, 6, low=-9.0, high=40.0))
register("erfinv_f32", torch.erfinv, rand(4, 6, low=-1.0, high=1.0))
register("erfinv_f64", torch.erfinv, rand(4, 6, dtype=F64, low=-1.0, high=1.0))
register("erfinv_bf16", torch.erfinv, rand(3, 5, dtype=torch.bfloat16, low=-0.99, high=0.99))
# The zero's sign, seen through 1/x: erfinv is odd (-0 gives -0); i1 and
# i1e give +0 at -0, as eager's (which negate only below 0).
register("zero_signs_f64", lambda x: (torch.erfinv(x).reciprocal(), torch.special.i1(x).reciprocal(),
                                      torch.special.i1e(x).reciprocal()),
         const(torch.tensor([0.0, -0.0], dtype=F64)))
register("erfinv_edges_f64", torch.erfinv,
         const(torch.tensor([1.0, -1.0, 1.5, -0.0, nan, 1 - 1e-15, -(1 - 1e-10), 1e-300, 0.5],
                            dtype=F64)))
register("ndtri_f64", torch.special.ndtri, rand(4, 6, dtype=F64))
register("ndtri_edges_f64", torch.special.ndtri,
         const(torch.tensor([0.0, 1.0, -0.1, 1.1, 0.5, 1e-300, 1e-20, 1 - 1e-16, nan], dtype=F64)))
register("ndtri_f32", torch.special.ndtri, rand(4, 6, low=0.001, high=0.999))
register("log_ndtr_f64", torch.special.log_ndtr, rand(4, 6, dtype=F64, low=-60.0, high=10.0))

# The modified Bessel functions: both series (the seam at |x| = 20), odd
# i1, overflow of the unscaled ones, the infinities.
for fn, name in ((torch.i0, "i0"), (torch.special.i0e, "i0e"), (torch.special.i1, "i1"),
                 (torch.special.i1e, "i1e")):
    register(f"{name}_f32", fn, randn(4, 6, scale=15.0))
    register(f"{name}_f64", fn, randn(4, 6, dtype=F64, scale=30.0))
    register(f"{name}_edges_f64", fn,
             const(torch.tensor([0.0, -0.0, 19.999, 20.001, -20.001, 700.0, 800.0, -800.0,
                                 inf, -inf, nan, 1e-300], dtype=F64)))
register("i0_bf16", torch.i0, randn(3, 5, dtype=torch.bfloat16, scale=5.0))
# The modified Bessel functions of the second kind and their exp(x)-scaled
# forms: the power series to 1.5, the quadrature to 30, the asymptotic
# series past it; inf at 0, NaN below it, underflow past 745 unscaled.
for fn, name in ((S.modified_bessel_k0, "k0"), (S.modified_bessel_k1, "k1"),
                 (S.scaled_modified_bessel_k0, "k0e"), (S.scaled_modified_bessel_k1, "k1e")):
    register(f"{name}_f32", fn, rand(4, 6, low=0.01, high=40.0))
    register(f"{name}_f64", fn, rand(4, 6, dtype=F64, low=1e-3, high=60.0))
    register(f"{name}_edges_f64", fn,
             const(torch.tensor([0.0, -0.0, -1.0, 1e-300, 1e-8, 1.4999, 1.5001, 29.999, 30.001,
                                 700.0, 800.0, 1e6, inf, nan], dtype=F64)))
# J and Y (libm's): even J0, odd J1, Y's -inf at 0 and NaN below it. At
# +-inf eager gives NaN and Kiln the limit 0, so the cases stay finite.
# Eager's f64 J and Y are off by up to 8e-7 between x = 5 and 8 (Kiln's
# match mpmath: tests/e2e/test_e2e_special_accuracy.py), hence the f64
# tolerance.
for fn, name in ((S.bessel_j0, "j0"), (S.bessel_j1, "j1"), (S.bessel_y0, "y0"),
                 (S.bessel_y1, "y1")):
    register(f"bessel_{name}_f32", fn, rand(4, 6, low=-25.0, high=25.0))
    register(f"bessel_{name}_f64", fn, rand(4, 6, dtype=F64, low=-40.0, high=40.0),
             rtol=2e-6, atol=2e-6)
    register(f"bessel_{name}_edges_f64", fn,
             const(torch.tensor([0.0, -0.0, -1.0, 1e-300, 2.404825557695773, 3.831705970207512,
                                 4.9, 5.1, 8.0, 25.0, 1e4, nan], dtype=F64)),
             rtol=2e-6, atol=2e-6)
register("spherical_bessel_j0_f64", S.spherical_bessel_j0,
         const(torch.tensor([0.0, -0.0, 0.4999, 0.5, -0.5001, 1e-10, 3.14159, 100.0, inf, -inf,
                             nan, 1e300], dtype=F64)))
register("spherical_bessel_j0_f32", S.spherical_bessel_j0, rand(4, 6, low=-20.0, high=20.0))
# Airy's Ai: its Maclaurin series on [-8, 2], K_1/3 past 2 (underflow past
# 105; eager stops at 103.9), the oscillating asymptotic series below -8.
# Eager's f64 Ai is off by up to 3e-6 just below -2.09 (Kiln's matches
# mpmath), hence no sample there, and eager gives NaN at +-inf where Kiln
# gives the limit 0, so the edges stay finite.
register("airy_ai_f64", S.airy_ai, rand(4, 8, dtype=F64, low=-1.9, high=30.0),
         rtol=1e-8, atol=1e-8)
register("airy_ai_negative_f64", S.airy_ai, rand(4, 8, dtype=F64, low=-40.0, high=-2.5),
         rtol=1e-8, atol=1e-8)
register("airy_ai_edges_f64", S.airy_ai,
         const(torch.tensor([0.0, -0.0, 1.999, 2.001, -7.999, -8.001, -3.0, 29.9, 50.0, 103.0,
                             110.0, -1e4, nan], dtype=F64)), rtol=1e-8, atol=1e-8)
register("airy_ai_f32", S.airy_ai, rand(4, 6, low=-15.0, high=10.0))
register("modified_bessel_i0_i1_f64",
         lambda x: (torch.special.modified_bessel_i0(x), torch.special.modified_bessel_i1(x)),
         randn(4, 6, dtype=F64, scale=25.0))

# gcd and lcm (Euclid's loop; |INT_MIN| wraps as in eager; lcm of narrow
# types multiplies in int, as C++ does) and frexp's parts.
register("gcd_lcm_i64", lambda a, b: (torch.gcd(a, b), torch.lcm(a, b)),
         const(torch.tensor([0, 0, -2**63, 7, -6, 12, 2**62, 1071])),
         const(torch.tensor([0, 5, 6, -21, -4, 18, 3, 462])))
register("gcd_lcm_i32_broadcast", lambda a, b: (torch.gcd(a, b), torch.lcm(a, b)),
         randint(-1000, 1000, 4, 6, dtype=torch.int32), randint(-50, 50, 6, dtype=torch.int32))
register("gcd_lcm_i8_u8", lambda a, b, c, d: (torch.gcd(a, b), torch.lcm(a, b), torch.gcd(c, d),
                                              torch.lcm(c, d)),
         const(torch.tensor([-128, 100, -7, 120, 0], dtype=torch.int8)),
         const(torch.tensor([-128, 30, 21, 90, 0], dtype=torch.int8)),
         const(torch.tensor([200, 255, 12, 0, 250], dtype=torch.uint8)),
         const(torch.tensor([3, 254, 18, 7, 251], dtype=torch.uint8)))
register("lcm_i16_wraps", torch.lcm, const(torch.tensor([30000, 200, -300], dtype=torch.int16)),
         const(torch.tensor([7, 201, 203], dtype=torch.int16)))
register("frexp_f64", torch.frexp,
         const(torch.tensor([0.0, -0.0, inf, -inf, nan, 1e-310, 3.0, -0.75, 1e300, 5e-324, 1.0],
                            dtype=F64)))
register("frexp_f32", torch.frexp, randn(4, 6, scale=100.0))
register("frexp_f16_subnormal", torch.frexp,
         const(torch.tensor([6e-8, 1e-5, -65504.0, 0.5, 3.0], dtype=torch.float16)))
register("frexp_bf16", lambda x: torch.frexp(x), randn(3, 5, dtype=torch.bfloat16, scale=1e10))

# Programs torch decomposes into these: the multivariate log-gamma.
register("multigammaln_f64", lambda x: torch.special.multigammaln(x, 3),
         rand(3, 4, dtype=F64, low=1.01, high=30.0))
