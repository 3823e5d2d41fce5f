"""torch.special's orthogonal polynomials p_n(x), which torch.export keeps
whole: Chebyshev's T, U, V, W and their shifted forms, Hermite's H and He,
Laguerre's L and Legendre's P. Degrees are float tensors read as int64 (a
fraction truncates, NaN and infinities count as negative and give 0), the
ends of the interval have closed values, Chebyshev's families switch to
their trigonometric form past a few degrees, and the recurrence overflows
to NaN where eager's does; Hermite's give NaN above degree 128 (f32) or
512 (f64), as eager's."""

import itertools

import torch

from tests.registry.registry import const, rand, randint, register

F64 = torch.float64
S = torch.special
inf, nan = float("inf"), float("nan")

#: (name, function, the x range its samples come from).
FAMILIES = (
    ("chebyshev_t", S.chebyshev_polynomial_t, (-1.2, 1.2)),
    ("chebyshev_u", S.chebyshev_polynomial_u, (-1.2, 1.2)),
    ("chebyshev_v", S.chebyshev_polynomial_v, (-1.2, 1.2)),
    ("chebyshev_w", S.chebyshev_polynomial_w, (-1.2, 1.2)),
    ("shifted_chebyshev_t", S.shifted_chebyshev_polynomial_t, (-0.1, 1.1)),
    ("shifted_chebyshev_u", S.shifted_chebyshev_polynomial_u, (-0.1, 1.1)),
    ("shifted_chebyshev_v", S.shifted_chebyshev_polynomial_v, (-0.1, 1.1)),
    ("shifted_chebyshev_w", S.shifted_chebyshev_polynomial_w, (-0.1, 1.1)),
    ("hermite_h", S.hermite_polynomial_h, (-4.0, 4.0)),
    ("hermite_he", S.hermite_polynomial_he, (-4.0, 4.0)),
    ("laguerre_l", S.laguerre_polynomial_l, (-2.0, 12.0)),
    ("legendre_p", S.legendre_polynomial_p, (-1.1, 1.1)),
)

#: Every pair of these x and n: the interval's ends (and the shifted
#: forms' 0 and 1), both sides of each trigonometric switch (degrees 4 to
#: 9), a fractional degree, negative, NaN and infinite degrees, and NaN,
#: infinite and far-out x.
EDGE_X = (-1.0, 1.0, 0.0, -0.0, 0.5, -0.3, 0.999, 1.5, -2.5, 3.0, nan, inf, -inf, 1e-20, 0.25)
EDGE_N = (-1.0, 0.0, 1.0, 2.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 30.7, 100.0, nan, inf, -inf)
EDGE_PAIRS = list(itertools.product(EDGE_X, EDGE_N))

for name, fn, (low, high) in FAMILIES:
    # Degrees 0 to 12 across each row, in f32 and f64.
    register(f"{name}_f32", fn, rand(4, 7, low=low, high=high),
             const(torch.arange(-1, 13, 2, dtype=torch.float32)))
    register(f"{name}_f64", fn, rand(5, 13, dtype=F64, low=low, high=high),
             const(torch.arange(0, 13, dtype=F64).reshape(1, 13)))
    register(f"{name}_edges_f64", fn,
             const(torch.tensor([x for x, _ in EDGE_PAIRS], dtype=F64)),
             const(torch.tensor([n for _, n in EDGE_PAIRS], dtype=F64)))

# The overloads with a number for x or for n.
register("chebyshev_t_number_n_f32", lambda x: S.chebyshev_polynomial_t(x, 5),
         rand(3, 5, low=-1.0, high=1.0))
register("legendre_p_number_x_f64", lambda n: S.legendre_polynomial_p(0.3, n),
         const(torch.arange(0, 20, dtype=F64)))
register("hermite_he_number_n_f64", lambda x: S.hermite_polynomial_he(x, 7.0),
         rand(3, 5, dtype=F64, low=-3.0, high=3.0))
# Integer and bool operands compute in float32, as eager promotes them.
register("chebyshev_u_i64", S.chebyshev_polynomial_u, randint(-3, 4, 3, 5),
         randint(0, 8, 3, 5))
register("laguerre_l_bool_n", lambda x, n: S.laguerre_polynomial_l(x, n),
         rand(2, 3, low=0.0, high=4.0), const(torch.tensor([[True, False, True]])))
# Hermite's bound: NaN above degree 128 in f32 and 512 in f64.
register("hermite_limits_f32", lambda x: (S.hermite_polynomial_h(x, 128.0),
                                          S.hermite_polynomial_h(x, 129.0),
                                          S.hermite_polynomial_he(x, 129.0)),
         const(torch.tensor([0.0, 0.5, 1.0, -2.0])))
register("hermite_limits_f64", lambda x: (S.hermite_polynomial_he(x, 512.0),
                                          S.hermite_polynomial_he(x, 513.0),
                                          S.hermite_polynomial_h(x, 300.0)),
         const(torch.tensor([0.0, 0.5, 1.0, -2.0], dtype=F64)))
# The recurrence overflows, then turns NaN and stops, where eager's does;
# Legendre's stays finite over 5,000 steps.
register("recurrence_overflow_f32", lambda x: (S.chebyshev_polynomial_t(x, 2000.0),
                                               S.laguerre_polynomial_l(x, 400.0),
                                               S.legendre_polynomial_p(x, 5000.0)),
         const(torch.tensor([3.0, -1.5, 0.7, 40.0])))
register("recurrence_overflow_f64", lambda x: (S.chebyshev_polynomial_w(x, 3000.0),
                                               S.legendre_polynomial_p(x, 5000.0)),
         const(torch.tensor([3.0, -1.5, 0.7, 1.0001], dtype=F64)))
# Chebyshev's trigonometric forms at high degrees in f32: eager's cos and
# acos are libm's (to an ulp), and Kiln's were 4e-6 and worse before f32
# trigonometry moved to f64 (5e-5 relative at n = 600).
register("chebyshev_high_degree_f32", lambda x: (S.chebyshev_polynomial_t(x, 600.0),
                                                 S.chebyshev_polynomial_u(x, 30.7),
                                                 S.shifted_chebyshev_polynomial_v(x, 2000.0),
                                                 S.shifted_chebyshev_polynomial_w(x, 600.0)),
         const(torch.tensor([0.25, 0.5, 0.75, -0.3, 0.999])), rtol=1e-5, atol=1e-6)
