"""Complex tensors through the ops that act on each part alone (pad,
repeat, flip, gather and scatter, where, masked fills, split, cumsum, fills
with complex numbers), comparisons and truth (eq, ne, isnan, logical ops,
any, nonzero), var and std, matrix products (mm, bmm, addmm with complex
beta and alpha), prod, and the elementary functions (exp, log, sqrt, the
trigonometric and hyperbolic functions and their inverses, sigmoid,
reciprocal, pow), inverses and solves, the factorisations (det, slogdet,
lu_factor, lu, lu_unpack, cholesky), triangular solves and what builds on
them (cholesky_solve/inverse, lu_solve), QR (linalg.qr, geqrf,
householder_product, ormqr), and eigenvalues and singular values
(eigvalsh, eigh with its vectors, svdvals, matrix_rank, norms, cond)."""

import torch

from tests.registry.registry import SignFree, Unordered, const, randint, randbool, randn, register

C64, C128 = torch.complex64, torch.complex128

# Moves and linear ops, part by part.
register("complex_pad_value_c64", lambda z: torch.constant_pad_nd(z, (1, 2, 0, 1), 1.5 - 2j),
         randn(2, 3, dtype=C64))
register("complex_pad_empty_c128", lambda z: torch.constant_pad_nd(z, (1, 1), 3 + 4j),
         randn(2, 0, dtype=C128))
# Circular padding (torch builds it on an empty tensor and copies into it)
# and an empty tensor written whole.
register("complex_pad_circular_c64", lambda z: torch.nn.functional.pad(z, (1, 2), mode="circular"),
         randn(2, 3, 5, dtype=C64))
register("complex_empty_filled_c128",
         lambda z: torch.cat([torch.empty(2, 3, dtype=C128).copy_(z * 1j), z]),
         randn(2, 3, dtype=C128))
register("complex_repeat_flip_roll_c64",
         lambda z: (z.repeat(2, 1, 3), z.flip(0, 2), z.roll(1, 1)), randn(2, 3, 2, dtype=C64))
register("complex_gather_index_select_c64",
         lambda z, i: (torch.gather(z, 1, i), z.index_select(0, i[0])),
         randn(3, 4, dtype=C64), randint(0, 3, 3, 2))
register("complex_scatter_add_c128",
         lambda z, i, s: (z.scatter(1, i, s), z.scatter_add(1, i, s),
                          z.scatter_reduce(1, i, s, "mean", include_self=False)),
         randn(3, 5, dtype=C128), randint(0, 5, 3, 2), randn(3, 2, dtype=C128))
register("complex_where_masked_fill_c64",
         lambda m, a, r: (torch.where(m, a, r), a.masked_fill(m, 2j), torch.where(m, a, 1.5)),
         randbool(3, 4), randn(3, 4, dtype=C64), randn(3, 4))
register("complex_split_cumsum_diagonal_c64",
         lambda z: (*z.split([1, 3], 1), z.cumsum(1), z.diagonal(), z.tril()),
         randn(4, 4, dtype=C64))
register("complex_index_put_c64", lambda z, v: z.index_put((torch.tensor([0, 2]),), v),
         randn(3, 4, dtype=C64), randn(2, 4, dtype=C64))
register("complex_fills_c64",
         lambda z: (torch.full_like(z, 2 - 3j), torch.ones_like(z), torch.zeros_like(z),
                    torch.full((2,), 1j, dtype=C64), torch.full_like(z, 2.5, dtype=torch.float32)),
         randn(2, 3, dtype=C64))
register("complex_scalar_arithmetic_c64",
         lambda z: (z * (1 + 2j), z + 3j, z / (2 - 1j), torch.add(z, z, alpha=1j)),
         randn(3, 4, dtype=C64))

# Comparisons and truth.
register("complex_compare_c64",
         lambda a, b: (a == b, a != b, a == a, torch.isnan(a / 0), torch.isinf(a / 0),
                       torch.isfinite(a)),
         const(torch.tensor([1 + 1j, 2j, 0j, 3 + 0j], dtype=C64)),
         const(torch.tensor([1 + 1j, 2 + 2j, 0j, 3 + 1j], dtype=C64)))
register("complex_truth_c64",
         lambda a, b: (torch.logical_and(a, b), torch.logical_xor(a, b), torch.logical_not(a),
                       a.any(), b.all(), torch.any(a.reshape(2, 3), 1)),
         const(torch.tensor([0j, 1j, 2 + 0j, 0j, 1 + 1j, 0j], dtype=C64)),
         const(torch.tensor([1j, 0j, 3 + 0j, 0j, 0j, 2j], dtype=C64)))
register("complex_nonzero_c128", torch.nonzero,
         const(torch.tensor([[0j, 1j, 0j], [2 + 0j, 0j, 1 - 1j]], dtype=C128)))
register("complex_addbmm_real_and_complex_scalars_c128",
         lambda c, a, b: (torch.addbmm(c, a, b, beta=0.6, alpha=0.2),
                          torch.addbmm(c, a, b, beta=1 - 2j, alpha=0.5j)),
         randn(3, 4, dtype=C128), randn(2, 3, 5, dtype=C128), randn(2, 5, 4, dtype=C128))
register("complex_put_accumulate_c64",
         lambda z, s: (z.put(torch.tensor([0, 5, 5, -1]), s, accumulate=True),
                       z.put(torch.tensor([2, 7]), s[:2])),
         randn(3, 4, dtype=C64), randn(4, dtype=C64))
register("complex_var_std_c64",
         lambda z: (torch.var(z, 1), torch.std(z, 0, correction=0), torch.var(z)),
         randn(3, 5, dtype=C64, scale=4.0))
# var_mean: the variance real, the mean complex.
register("complex_var_mean_c128",
         lambda z: (torch.var_mean(z, 1, correction=0), torch.var_mean(z, unbiased=True)),
         randn(4, 6, dtype=C128, scale=3.0))

# Products.
register("complex_mm_bmm_c64", lambda a, b, c, d: (a @ b, torch.bmm(c, d)),
         randn(3, 4, dtype=C64), randn(4, 5, dtype=C64),
         randn(2, 3, 4, dtype=C64), randn(2, 4, 2, dtype=C64))
register("complex_addmm_complex_scalars_c128",
         lambda s, a, b: torch.addmm(s, a, b, beta=0.5 - 1j, alpha=2j),
         randn(5, dtype=C128), randn(3, 4, dtype=C128), randn(4, 5, dtype=C128))
register("complex_prod_c64", lambda z: (z.prod(1), z.prod(), z.prod(0, keepdim=True)),
         randn(3, 7, dtype=C64, scale=0.8))
register("complex_prod_empty_c128", lambda z: z.prod(0), randn(0, 3, dtype=C128))

# Elementary functions (eager's reference is libm's complex functions).
for name, fn in (("exp", torch.exp), ("log", torch.log), ("log2", torch.log2),
                 ("log10", torch.log10), ("log1p", torch.log1p), ("expm1", torch.expm1),
                 ("sqrt", torch.sqrt), ("rsqrt", torch.rsqrt),
                 ("reciprocal", torch.reciprocal), ("sigmoid", torch.sigmoid),
                 ("sin", torch.sin), ("cos", torch.cos), ("tan", torch.tan),
                 ("sinh", torch.sinh), ("cosh", torch.cosh), ("tanh", torch.tanh),
                 ("asin", torch.asin), ("acos", torch.acos), ("atan", torch.atan),
                 ("asinh", torch.asinh), ("acosh", torch.acosh), ("atanh", torch.atanh)):
    register(f"complex_{name}_c64", fn, randn(4, 5, dtype=C64, scale=2.0))
    register(f"complex_{name}_c128", fn, randn(4, 5, dtype=C128, scale=2.0))
register("complex_tanh_far_c128", torch.tanh,
         const(torch.tensor([30 + 1j, -45 - 2j, 400 + 0.5j, 0.25 - 300j], dtype=C128)))
register("complex_sqrt_axes_c64", torch.sqrt,
         const(torch.tensor([0j, -4 + 0j, 4 + 0j, 3j, -3j, -1 + 1e-3j, 1e30 + 1e30j],
                            dtype=C64)))
register("complex_pow_c64", lambda x, y: (torch.pow(x, y), x ** 2, x ** 0.5, torch.pow(2.0, y)),
         randn(3, 4, dtype=C64), randn(3, 4, dtype=C64))
register("complex_pow_zero_base_c128", torch.pow,
         const(torch.zeros(5, dtype=C128)),
         const(torch.tensor([1j, 2 + 0j, 0j, -1 + 0j, 1 + 1j], dtype=C128)))

# Branch cuts, poles and small arguments (a helper's review found each wrong
# in the first version): a zero part's sign picks the side of a cut.
register("complex_asinh_asin_on_cuts_c128", lambda z: (torch.asinh(z), torch.asin(z / 1j)),
         const(torch.tensor([complex(0.0, -2.0), complex(-0.0, 2.0), complex(0.0, -1e8),
                             complex(-0.0, -3.0), 0.5 - 0.25j], dtype=C128)))
register("complex_sqrt_negative_zero_c64", torch.sqrt,
         const(torch.tensor([complex(-4.0, -0.0), complex(-4.0, 0.0), complex(-1.0, -0.0)],
                            dtype=C64)))
register("complex_tanh_tan_near_pole_c128", lambda z: (torch.tanh(z), torch.tan(z * 1j)),
         const(torch.tensor([complex(1e-6, 1.5707963267948966), complex(1e-10, 1.5707963),
                             0.3 + 1.5j], dtype=C128)))
register("complex_atanh_small_log1p_near_minus_one_c128",
         lambda z: (torch.atanh(z * 1e-10), torch.log1p(z - 1)),
         const(torch.tensor([1 + 1j, 0.5 - 2j, 1 + 1e-9j, 1e-3 + 0j], dtype=C128)))
register("complex_pow_scalar_zero_one_c64", lambda z: (z ** 0, z ** 1, z[:2] ** 2),
         const(torch.tensor([0j, 1 + 2j, complex(float("inf"), 1.0)], dtype=C64)))
register("complex_ones_like_real_dtype_c64",
         lambda z: (torch.ones_like(z, dtype=torch.float32), z == 1j, z != 2),
         const(torch.tensor([1j, 2 + 0j, 1 + 1j], dtype=C64)))

# A zero part keeps the other part's result exact, as C's functions do: an
# overflowing cosh, sinh or e^a times sin 0 is 0, not NaN (exp(800 + 0i) is
# (inf, 0)); e^a's overflow near a = 710 spares e^a sin b where it is finite.
# Compared part by part (view_as_real): a complex difference with an
# infinite part is NaN, which no tolerance admits.
register("complex_zero_part_overflow_c128",
         lambda z: tuple(torch.view_as_real(f(z)) for f in
                         (torch.exp, torch.sinh, torch.cosh, torch.sin, torch.cos)),
         const(torch.tensor([800 + 0j, -800 + 0j, complex(800.0, -0.0), complex(0.0, 800.0),
                             complex(0.0, -800.0), 710 + 0.3j, 710 - 0.7j, 1 + 2j, -0.5 + 0j],
                            dtype=C128)))
# The zero's sign, seen through 1/x (+-inf): assert_close takes +0 == -0.
register("complex_zero_part_signs_c128",
         lambda z: tuple(torch.view_as_real(f(z)).reciprocal() for f in
                         (torch.exp, torch.sinh, torch.cosh, torch.sin, torch.cos)),
         const(torch.tensor([complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0),
                             complex(-0.0, -0.0), complex(-800.0, 0.0), complex(-800.0, -0.0),
                             complex(0.0, -800.0), complex(-0.0, 800.0), complex(2.0, -0.0),
                             complex(-3.0, 0.0)], dtype=C128)))
# Past |a| = 709 (|b| for sin and cos) cosh and sinh overflow where their
# product with a small cosine or sine does not: C scales (sinh(800 + 1e-300i)
# is (inf, 1.36e47)), and so does Kiln (e^(|a| - 709) e^709 / 2, the small
# factor times the constants first).
register("complex_hyperbolic_overflow_c128",
         lambda z: tuple(torch.view_as_real(f(z)) for f in
                         (torch.sinh, torch.cosh, torch.sin, torch.cos)),
         const(torch.tensor([711 + 0.3j, -711 - 0.3j, complex(800.0, 1e-300),
                             complex(-1000.0, 1e-200), complex(1400.0, -1e-250),
                             complex(1e-300, 800.0), complex(-1e-200, -1000.0),
                             complex(0.3, 711.0), 709.5 + 2j, 1 + 2j,
                             # past 1418, e^(|a| - 709) overflows too: C
                             # scales twice (sinh(1420 + 1e-310i) is
                             # (inf, 2.50e306))
                             complex(1420.0, 1e-310), complex(-1420.5, 3e-310),
                             complex(1e-310, 1420.0)], dtype=C128)))
# asinh and asin near 0: log(z + sqrt(z^2 + 1)) is the log of 1 + tiny and
# keeps only the digits of z past 1; Kiln takes the series there. Divided by
# z, a relative error shows past the registry's absolute tolerance.
_TINY = [complex(1e-8, 1e-8), complex(-3e-7, 2e-9), complex(1e-12, -5e-13),
         complex(0.0, 2e-5), complex(5e-5, 0.0), complex(-7e-6, -9.5e-5)]
register("complex_asinh_asin_tiny_c128",
         lambda z: (torch.view_as_real(torch.asinh(z) / z),
                    torch.view_as_real(torch.asin(z) / z)),
         const(torch.tensor(_TINY, dtype=C128)))
register("complex_asinh_tiny_c64", lambda z: torch.view_as_real(torch.asinh(z) / z),
         const(torch.tensor(_TINY, dtype=C64)))
# The zero parts keep their signs (through 1/x).
register("complex_asinh_tiny_zero_signs_c128",
         lambda z: (torch.view_as_real(torch.asinh(z)).reciprocal(),
                    torch.view_as_real(torch.asin(z)).reciprocal()),
         const(torch.tensor([complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0),
                             complex(-0.0, -0.0), complex(1e-9, -0.0), complex(-1e-9, 0.0),
                             complex(-0.0, 1e-9), complex(0.0, -1e-9)], dtype=C128)))
register("complex_exp_zero_imaginary_c64", torch.exp,
         const(torch.tensor([800 + 0j, -800 + 0j, 1 + 0j, 2 - 1j], dtype=C64)))
# Eager computes these exponents by products and roots (z z, z z z, sqrt,
# 1/sqrt, 1/z, 1/(z z)), not exp(y log z): (inf + 1i)^2 is (inf, inf).
register("complex_pow_small_exponents_c128",
         lambda z: (z ** 2, z ** 3, z ** 0.5, z ** -0.5, z ** -1, z ** -2),
         const(torch.tensor([1 + 2j, complex(float("inf"), 1.0), -3 - 0.5j, 0.25j,
                             complex(-4.0, -0.0)], dtype=C128)))

# Inverses and solves of complex matrices, through the real embedding
# [[X, -Y], [Y, X]] (well-conditioned: a multiple of I added); what torch
# builds on them (tensorinv, tensorsolve, negative matrix powers).
_I4 = torch.eye(4, dtype=C64) * 3
register("complex_inv_batched_c64", lambda a: torch.linalg.inv(a + _I4), randn(2, 3, 4, 4, dtype=C64),
         rtol=1e-4, atol=1e-5)
register("complex_inv_c128", lambda a: torch.linalg.inv(a + 4 * torch.eye(5, dtype=C128)),
         randn(5, 5, dtype=C128))
register("complex_solve_matrix_broadcast_c64", lambda a, b: torch.linalg.solve(a + _I4, b),
         randn(4, 4, dtype=C64), randn(3, 4, 2, dtype=C64), rtol=1e-4, atol=1e-5)
register("complex_solve_vector_c128",
         lambda a, b: torch.linalg.solve(a + 4 * torch.eye(4, dtype=C128), b),
         randn(2, 4, 4, dtype=C128), randn(2, 4, dtype=C128))
register("complex_matrix_power_negative_c64",
         lambda a: torch.linalg.matrix_power(a + _I4, -2), randn(4, 4, dtype=C64),
         rtol=1e-4, atol=1e-5)
register("complex_tensorsolve_c128",
         lambda a, b: torch.linalg.tensorsolve(a + 4 * torch.eye(6, dtype=C128).reshape(2, 3, 6),
                                               b),
         randn(2, 3, 6, dtype=C128), randn(2, 3, dtype=C128))

# Matrix exponentials of complex matrices, as the exponential of the real
# embedding: batches, norms that take several squarings, a skew-Hermitian
# matrix (its exponential unitary: U U^H = I checked too), a diagonal one
# (exp of each entry) and no matrices at all.
register("complex_matrix_exp_c128", torch.linalg.matrix_exp, randn(5, 5, dtype=C128))
register("complex_matrix_exp_batched_c64", torch.linalg.matrix_exp, randn(2, 3, 4, 4, dtype=C64),
         rtol=1e-4, atol=1e-5)
register("complex_matrix_exp_squarings_c128", torch.linalg.matrix_exp,
         randn(2, 6, 6, dtype=C128, scale=3.0))
register("complex_matrix_exp_squarings_c64", torch.linalg.matrix_exp,
         randn(6, 6, dtype=C64, scale=2.0), rtol=1e-4, atol=1e-4)


def _unitary_exp(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    u = torch.linalg.matrix_exp(a - a.mH)
    return u, u @ u.mH


register("complex_matrix_exp_skew_hermitian_c128", _unitary_exp, randn(7, 7, dtype=C128))
register("complex_matrix_exp_diagonal_c64", lambda d: torch.linalg.matrix_exp(torch.diag_embed(d)),
         const(torch.tensor([[0j, 1j, -2 + 3.14159j, 0.5 - 0.25j]], dtype=C64)),
         rtol=1e-4, atol=1e-5)
register("complex_matrix_exp_empty_c64",
         lambda a, b: (torch.linalg.matrix_exp(a), torch.linalg.matrix_exp(b)),
         randn(0, 3, 3, dtype=C64), randn(2, 0, 0, dtype=C64))

# Factorisations of complex matrices: zgetf2 (det, slogdet, logdet,
# lu_factor, lu) and zpotf2 (cholesky). The pivot is the entry of largest
# |re| + |im| (LAPACK's izamax), not of largest modulus: in
# _PIVOT_BY_ABS_SUM's first column 2 + 2i (sum 4, modulus 2.83) beats 3.
_PIVOT_BY_ABS_SUM = torch.tensor([[3 + 0j, 1, 0], [2 + 2j, 0, 1], [0, 1j, 1]], dtype=C128)
# Rank 1 (the second row twice the first): U's last pivot is exactly 0.
_SINGULAR = torch.tensor([[1 + 1j, 2], [2 + 2j, 4]], dtype=C128)
register("complex_det_slogdet_c128",
         lambda a: (torch.linalg.det(a), *torch.linalg.slogdet(a), torch.logdet(a)),
         randn(2, 4, 4, dtype=C128))
register("complex_det_c64", lambda a: (torch.linalg.det(a), torch.linalg.slogdet(a).sign),
         randn(3, 3, 3, dtype=C64), rtol=1e-4, atol=1e-5)
register("complex_det_lu_results_c128",
         lambda a: (torch.ops.aten._linalg_det(a), torch.ops.aten._linalg_slogdet(a)),
         randn(5, 5, dtype=C128))
register("complex_det_pivot_by_abs_sum_singular_c128",
         lambda a, s: (torch.linalg.lu_factor(a), torch.linalg.det(a), torch.linalg.det(s),
                       *torch.linalg.slogdet(s), torch.linalg.lu_factor_ex(s)),
         const(_PIVOT_BY_ABS_SUM), const(_SINGULAR))
register("complex_lu_factor_c64", lambda a: torch.linalg.lu_factor_ex(a),
         randn(2, 4, 4, dtype=C64), rtol=1e-4, atol=1e-5)
register("complex_lu_rectangular_c128",
         lambda t, w: (*torch.linalg.lu(t), *torch.linalg.lu(w), torch.linalg.lu_factor(w)),
         randn(5, 3, dtype=C128), randn(2, 3, 5, dtype=C128))
# Hermitian positive definite: B B^H + n I; the diagonal's imaginary part
# (nonzero here) and the triangle other than the one named (noise here)
# are not read.
register("complex_cholesky_c128",
         lambda b, noise: (torch.linalg.cholesky(torch.tril(b @ b.mH) + torch.triu(noise, 1)
                                                 + 4 * torch.eye(4) + 0.5j * torch.eye(4)),
                           torch.linalg.cholesky(torch.triu(b @ b.mH) + torch.tril(noise, -1)
                                                 + 4 * torch.eye(4), upper=True)),
         randn(3, 4, 4, dtype=C128), randn(3, 4, 4, dtype=C128))
register("complex_cholesky_c64",
         lambda b: torch.linalg.cholesky_ex(b @ b.mH + 5 * torch.eye(5)),
         randn(5, 5, dtype=C64), rtol=1e-4, atol=1e-5)
# Not positive definite at the third column: info 3, as potrf's.
register("complex_cholesky_info_c128",
         lambda b: torch.linalg.cholesky_ex(b @ b.mH + torch.diag(torch.tensor([4.0, 4.0, -50.0, 4.0]))).info,
         randn(4, 4, dtype=C128))
# The LU, pivots and info results beside a complex inverse or solve (from
# lu_factor(A), as eager's), a singular matrix's info, and X A = B.
register("complex_inv_ex_info_c128",
         lambda a, s: (torch.linalg.inv_ex(a + 3 * torch.eye(3)), torch.linalg.inv_ex(s).info),
         randn(2, 3, 3, dtype=C128), const(_SINGULAR))
register("complex_solve_ex_results_c128",
         lambda a, b: torch.ops.aten._linalg_solve_ex(a + 3 * torch.eye(4), b),
         randn(2, 4, 4, dtype=C128), randn(2, 4, 3, dtype=C128))
register("complex_solve_left_false_c64",
         lambda a, b: torch.linalg.solve(a + _I4, b, left=False),
         randn(2, 4, 4, dtype=C64), randn(2, 3, 4, dtype=C64), rtol=1e-4, atol=1e-5)
# Matrices of order 0: det and slogdet's sign 1 + 0i, log |det| 0, info 0
# and empty factors, as eager gives them (the empty-tensor rules, applied
# to the complex shape without its pairs' dim).
register("complex_order_zero_factorisations_c64",
         lambda a: (torch.linalg.det(a), *torch.linalg.slogdet(a), torch.linalg.cholesky_ex(a),
                    torch.linalg.inv_ex(a)),
         randn(2, 0, 0, dtype=C64))

# Triangular solves of complex matrices (ztrtrs' substitutions, Smith's
# quotients) and what builds on them. Only the named triangle is read: the
# matrices are full, with 3 on the diagonal to keep them well conditioned.
_D4 = 3 * torch.eye(4, dtype=C128)
register("complex_solve_triangular_c128",
         lambda a, b, w: (torch.linalg.solve_triangular(a + _D4, b, upper=True),
                          torch.linalg.solve_triangular(a + _D4, b, upper=False,
                                                        unitriangular=True),
                          torch.linalg.solve_triangular(a + _D4, w, upper=True, left=False)),
         randn(2, 4, 4, dtype=C128), randn(3, 1, 4, 2, dtype=C128), randn(2, 5, 4, dtype=C128))
register("complex_triangular_solve_legacy_c64",
         lambda b, a: (torch.triangular_solve(b, a + _D4.to(C64)),
                       torch.triangular_solve(b, a + _D4.to(C64), upper=False, transpose=True)),
         randn(2, 4, 3, dtype=C64), randn(2, 4, 4, dtype=C64), rtol=1e-4, atol=1e-5)
register("complex_cholesky_solve_inverse_c128",
         lambda g, b: (torch.cholesky_solve(b, torch.linalg.cholesky(g @ g.mH + _D4)),
                       torch.cholesky_solve(b, torch.linalg.cholesky(g @ g.mH + _D4, upper=True),
                                            upper=True),
                       torch.cholesky_inverse(torch.linalg.cholesky(g @ g.mH + _D4)),
                       torch.cholesky_inverse(torch.linalg.cholesky(g @ g.mH + _D4, upper=True),
                                              upper=True)),
         randn(2, 4, 4, dtype=C128), randn(2, 4, 3, dtype=C128))
# Every (left, adjoint) pair: A X = B, A^H X = B, X A = B, X A^H = B; and
# one LU against a batch of right-hand sides (the LU's batch broadcast).
register("complex_lu_solve_unpack_c128",
         lambda a, b, w: (*[torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=adj)
                            for adj in (False, True)],
                          *[torch.linalg.lu_solve(*torch.linalg.lu_factor(a), w, left=False,
                                                  adjoint=adj) for adj in (False, True)],
                          torch.lu_unpack(*torch.linalg.lu_factor(a)),
                          torch.linalg.lu_solve(*torch.linalg.lu_factor(a[:1]), b, adjoint=True)),
         randn(2, 4, 4, dtype=C128), randn(2, 4, 3, dtype=C128), randn(2, 3, 4, dtype=C128))

# Eigenvalues of complex Hermitian matrices and singular values of complex
# matrices, from the real embedding (each value twice): eigvalsh from the
# lower or upper triangle (the other holding noise, the diagonal an
# imaginary part, neither read), svdvals of tall and wide matrices, and
# what torch builds on them (matrix_rank, the nuclear and 2-norms, cond).
register("complex_eigvalsh_c128",
         lambda g, noise: (torch.linalg.eigvalsh(torch.tril(g @ g.mH) + torch.triu(noise, 1)
                                                 + 0.25j * torch.eye(4)),
                           torch.linalg.eigvalsh(torch.triu(g @ g.mH) + torch.tril(noise, -1),
                                                 UPLO="U"),
                           torch.linalg.matrix_rank(g @ g.mH, hermitian=True)),
         randn(2, 4, 4, dtype=C128), randn(2, 4, 4, dtype=C128))
# Eigenvectors of complex Hermitian matrices: the embedding's made complex
# and orthonormal (aten.hermitian_eigenvectors). A vector's phase is
# unspecified (SignFree compares up to a unit factor). Where values repeat
# (a block made of the identity's, the identity itself) or cluster, the
# cases compare what defines the vectors instead: the values,
# A V - V diag(w), V^H V and V diag(w) V^H.


def _hermitian(g: torch.Tensor) -> torch.Tensor:
    return g + g.mH


def _eigh_identities(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    w, v = torch.linalg.eigh(a)
    wc = w.to(v.dtype)
    return (w, a @ v - v * wc.unsqueeze(-2), v.mH @ v,
            (v * wc.unsqueeze(-2)) @ v.mH)


register("complex_eigh_c128", lambda g: torch.linalg.eigh(_hermitian(g)),
         randn(2, 5, 5, dtype=C128), sign_free=(SignFree(1),))
register("complex_eigh_upper_c64", lambda g: torch.linalg.eigh(_hermitian(g), UPLO="U"),
         randn(3, 4, 4, dtype=C64), rtol=1e-4, atol=1e-4, sign_free=(SignFree(1),))
register("complex_eigh_vectors_only_c128", lambda g: torch.linalg.eigh(_hermitian(g))[1] * 2,
         randn(6, 6, dtype=C128), sign_free=(SignFree(0),))
register("complex_eigh_repeated_identities_c128",
         lambda g: (_eigh_identities(torch.block_diag(3 * torch.eye(3, dtype=C128), _hermitian(g)))
                    + _eigh_identities(torch.eye(4, dtype=C128))),
         randn(3, 3, dtype=C128), atol=1e-9)
register("complex_eigh_order_40_identities_c64", lambda g: _eigh_identities(_hermitian(g)),
         randn(40, 40, dtype=C64), rtol=1e-4, atol=2e-4)


def _repeated_spectrum(g: torch.Tensor, d: torch.Tensor, fold: int) -> torch.Tensor:
    """Q diag(2 (fold times), d) Q^H, Q unitary (QR of g): an eigenvalue
    of multiplicity `fold` in a random basis."""
    q = torch.linalg.qr(g).Q
    w = torch.cat([torch.full((*d.shape[:-1], fold), 2.0, dtype=d.dtype), d], -1)
    return (q * w.to(q.dtype).unsqueeze(-2)) @ q.mH


register("complex_eigh_six_fold_identities_c128",
         lambda g, d: _eigh_identities(_repeated_spectrum(g, d, 6)),
         randn(2, 8, 8, dtype=C128), randn(2, 2, dtype=torch.float64), atol=1e-9)
register("complex_eigh_four_fold_identities_c64",
         lambda g, d: _eigh_identities(_repeated_spectrum(g, d, 4)),
         randn(3, 7, 7, dtype=C64), randn(3, 3, dtype=torch.float32), rtol=1e-4, atol=1e-4)
# Only the named triangle is read, and the diagonal's imaginary part not at
# all (g is not Hermitian).
register("complex_eigh_triangles_c128",
         lambda g: (*torch.linalg.eigh(g, UPLO="L"), *torch.linalg.eigh(g, UPLO="U")),
         randn(2, 5, 5, dtype=C128), sign_free=(SignFree(1), SignFree(3)))
register("complex_svdvals_norms_c64",
         lambda t, w: (torch.linalg.svdvals(t), torch.linalg.svdvals(w),
                       torch.linalg.matrix_norm(t, "nuc"), torch.linalg.matrix_norm(w, 2),
                       torch.linalg.cond(t[..., :3, :])),
         randn(2, 5, 3, dtype=C64), randn(3, 6, dtype=C64), rtol=1e-4, atol=1e-5)
# Singular vectors of complex matrices: the embedding's pairs (p, q) made
# complex, u and v taken together by pivoted Gram-Schmidt where the value
# is over the tolerance, apart below it (aten.complex_singular_vectors).
# Each pair's phase is unspecified: against eager up to a phase per column
# of U and row of Vh (SignFree), and by what defines them: U diag(S) Vh = A,
# U^H U = I, Vh Vh^H = I (and U U^H = I for complete ones).


def _svd_identities(a: torch.Tensor, full_matrices: bool = False) -> tuple[torch.Tensor, ...]:
    u, s, vh = torch.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    product = (u[..., :, :k] * s.to(u.dtype).unsqueeze(-2)) @ vh[..., :k, :]
    return s, product, u.mH @ u, vh @ vh.mH


register("complex_svd_tall_c128", lambda a: torch.linalg.svd(a, full_matrices=False),
         randn(2, 6, 4, dtype=C128), sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("complex_svd_wide_c64", lambda a: torch.linalg.svd(a, full_matrices=False),
         randn(3, 4, 7, dtype=C64), rtol=1e-4, atol=1e-4,
         sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("complex_svd_square_c128", torch.linalg.svd, randn(5, 5, dtype=C128),
         sign_free=(SignFree(0), SignFree(2, dim=-1)))
def _complete_identities(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """_svd_identities of a complete SVD, and U U^H and Vh^H Vh (the
    complete factors are square: orthonormal rows too)."""
    u, s, vh = torch.linalg.svd(a, full_matrices=True)
    k = s.shape[-1]
    product = (u[..., :, :k] * s.to(u.dtype).unsqueeze(-2)) @ vh[..., :k, :]
    return s, product, u.mH @ u, vh @ vh.mH, u @ u.mH, vh.mH @ vh


register("complex_svd_full_tall_identities_c128", _complete_identities,
         randn(2, 6, 3, dtype=C128), atol=1e-10)
register("complex_svd_full_wide_identities_c64", _complete_identities,
         randn(3, 5, dtype=C64), rtol=1e-4, atol=1e-5)
# Complete SVDs of rank-deficient tall and wide matrices (U's pass apart
# takes both the small values' columns and those past n; the wide one goes
# through A^H), a batch of a zero and a full-rank matrix (a tolerance per
# matrix), and rank 3 of 6 in c64.
register("complex_svd_full_rank_deficient_identities_c128",
         lambda a, b, c, d: _complete_identities(a @ b) + _complete_identities(c @ d),
         randn(7, 2, dtype=C128), randn(2, 4, dtype=C128), randn(3, 1, dtype=C128),
         randn(1, 6, dtype=C128), atol=1e-10)
register("complex_svd_zero_and_full_rank_batch_identities_c128",
         lambda a: _svd_identities(torch.stack([torch.zeros_like(a), a])),
         randn(5, 4, dtype=C128), atol=1e-10)
register("complex_svd_rank_deficient_identities_c64", lambda a, b: _svd_identities(a @ b),
         randn(6, 3, dtype=C64), randn(3, 6, dtype=C64), rtol=1e-4, atol=2e-5)
# Column-graded A = B diag(1, 1, 1e-20): its smallest value is tiny (under
# the tolerance) yet exact, so u and v must come from one pair (the same
# phase) for
# V diag(1 / S) U^H, which pinv with rtol=0 computes, to match eager's
# (both are exact relative to pinv's largest entry, ~1e20).


def _graded_pinv(g: torch.Tensor) -> torch.Tensor:
    p = torch.linalg.pinv(g * torch.tensor([1.0, 1.0, 1e-20], dtype=torch.float64), rtol=0.0)
    return p / p.abs().amax((-2, -1), keepdim=True)


# A batch of 8: pass 2 and 3 each pick one of the pair's two copies (their
# norms 1 +- eps), so without the preference a batch this size has u and v
# from one pair in all of them by chance only 1 in 2^8 times.
register("complex_pinv_graded_c128", _graded_pinv, randn(8, 3, 3, dtype=C128), atol=1e-10)
# Rank 2 of 5: three values at rounding level, their u and v taken apart.
register("complex_svd_rank_deficient_identities_c128",
         lambda a, b: _svd_identities(a @ b),
         randn(5, 2, dtype=C128), randn(2, 5, dtype=C128), atol=1e-10)
register("complex_svd_zero_identities_c64",
         lambda a: _svd_identities(torch.zeros_like(a)) + _svd_identities(torch.zeros_like(a), True),
         randn(4, 3, dtype=C64), atol=1e-6)
# A 3-fold value in random unitary bases on both sides (u and v must be
# taken with the same coefficients), and a cluster 1e-9 apart.
register("complex_svd_repeated_identities_c128",
         lambda g, h: _svd_identities(torch.linalg.qr(g).Q @ torch.diag(torch.tensor(
             [2.0, 2.0, 2.0, 1.0, 1.0 + 1e-9, 0.5], dtype=C128)) @ torch.linalg.qr(h).Q.mH),
         randn(6, 6, dtype=C128), randn(6, 6, dtype=C128), atol=1e-10)
register("complex_svd_vectors_only_c64", lambda a: torch.linalg.svd(a)[2] * 2,
         randn(4, 4, dtype=C64), rtol=1e-4, atol=1e-4, sign_free=(SignFree(0, dim=-1),))
register("complex_svd_order_30_identities_c64", _svd_identities,
         randn(30, 24, dtype=C64), rtol=1e-4, atol=2e-4)
# torch builds pinv of a non-Hermitian complex matrix on its SVD.
register("complex_pinv_c128",
         lambda t, w, d: (torch.linalg.pinv(t), torch.linalg.pinv(w), torch.linalg.pinv(d @ d.mH)),
         randn(2, 5, 3, dtype=C128), randn(3, 6, dtype=C128), randn(4, 2, dtype=C128), atol=1e-10)
# a (5, 4) b (4, 5) has rank 4 of 5.
register("complex_matrix_rank_c128",
         lambda a, b: (torch.linalg.matrix_rank(a), torch.linalg.matrix_rank(a @ b)),
         randn(3, 5, 4, dtype=C128), randn(4, 5, dtype=C128))

# QR of complex matrices (zgeqr2, zung2r, zunm2r): LAPACK's reflectors, so
# R's real diagonal and Q's columns match eager's, signs included. Every
# mode, tall and wide, batched; geqrf's reflectors and scales, Q from them,
# and ormqr's four forms (Q C, Q^H C, C Q, C Q^H).
register("complex_qr_modes_c64",
         lambda t, w: (torch.linalg.qr(t), torch.linalg.qr(t, mode="complete"),
                       torch.linalg.qr(w), torch.linalg.qr(w, mode="r")[1]),
         randn(2, 5, 3, dtype=C64), randn(3, 4, dtype=C64), rtol=1e-4, atol=1e-5)
register("complex_qr_complete_wide_c128", lambda w: torch.linalg.qr(w, mode="complete"),
         randn(2, 3, 3, 5, dtype=C128))
register("complex_geqrf_householder_c128",
         lambda a: (torch.geqrf(a), torch.linalg.householder_product(*torch.geqrf(a)),
                    torch.linalg.householder_product(torch.geqrf(a)[0], torch.geqrf(a)[1][..., :2])),
         randn(2, 5, 3, dtype=C128))
register("complex_ormqr_c64",
         lambda a, c, w: tuple(torch.ormqr(*torch.geqrf(a), c if left else w, left=left,
                                           transpose=transpose)
                               for left in (True, False) for transpose in (False, True)),
         randn(2, 5, 3, dtype=C64), randn(2, 5, 2, dtype=C64), randn(2, 4, 5, dtype=C64),
         rtol=1e-4, atol=1e-5)
# Columns whose reflector is special: below the diagonal all 0 with a
# complex diagonal entry (tau still nonzero, beta -sign(re) |a_jj|), with a
# real one (no reflection, tau 0), a zero column, and a zero diagonal entry
# over a nonzero tail.
register("complex_qr_special_columns_c128",
         lambda u, g: (torch.linalg.qr(torch.triu(u)), torch.geqrf(torch.triu(u).real + 0j),
                       torch.linalg.qr(torch.cat([torch.zeros_like(g[:, :1]), g], 1)),
                       torch.geqrf(g * (1 - torch.eye(4, 3)))),
         randn(4, 4, dtype=C128), randn(4, 3, dtype=C128))


# Eigenvalues and eigenvectors of general complex matrices (aten.eigvals,
# aten.eig on pairs), as zgeev: zgebal's exchanges and scaling, zgehd2's
# complex reflectors, zlahqr's single-shift QR sweeps (values where they
# deflate: LAPACK's order), ztrevc3's back substitution, zgebak, each
# vector of norm 1 with its entry of largest modulus real. Values compare
# as sets where rounding may order them otherwise (c64, large orders);
# each vector's phase is unspecified (SignFree). Where the order may
# differ, the cases compare what defines the vectors: A V - V diag(w),
# each column's norm, and the sorted values.
_C_UNORDERED = (Unordered(0),)
_C_EIG_VECTORS = (SignFree(1),)


def _complex_eig_identities(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    w, v = torch.linalg.eig(a)
    return (w.real.sort(-1).values, w.imag.sort(-1).values, a @ v - v * w.unsqueeze(-2),
            torch.linalg.vector_norm(v, dim=-2))


register("complex_eigvals_c128", torch.linalg.eigvals, randn(6, 6, dtype=C128),
         unordered=_C_UNORDERED)
register("complex_eigvals_batched_c64", torch.linalg.eigvals, randn(2, 3, 7, 7, dtype=C64),
         rtol=1e-4, atol=1e-4, unordered=_C_UNORDERED)
register("complex_eigvals_order_60_c128", torch.linalg.eigvals, randn(60, 60, dtype=C128),
         unordered=_C_UNORDERED)
register("complex_eig_c128", torch.linalg.eig, randn(6, 6, dtype=C128), sign_free=_C_EIG_VECTORS)
register("complex_eig_batched_c128", torch.linalg.eig, randn(2, 3, 5, 5, dtype=C128),
         sign_free=_C_EIG_VECTORS)
register("complex_eig_order_40_c128", torch.linalg.eig, randn(40, 40, dtype=C128),
         sign_free=_C_EIG_VECTORS)
register("complex_eig_vectors_only_c128", lambda a: torch.linalg.eig(a)[1] * 2,
         randn(7, 7, dtype=C128), sign_free=(SignFree(0),))
register("complex_eig_identities_c64", _complex_eig_identities, randn(2, 9, 9, dtype=C64),
         atol=1e-4)
register("complex_eig_identities_order_30_c64", _complex_eig_identities,
         randn(30, 30, dtype=C64), atol=2e-4)
# Isolated eigenvalues (zgebal's exchanges, which zgebak undoes), scaling,
# a Hermitian matrix (real values), a real matrix in complex arithmetic
# (conjugate pairs), a unitary one (values on the unit circle), the
# identity (a repeated value whose vectors are its columns) and a
# nilpotent shift (every value 0; the back substitution scales instead of
# overflowing).
register("complex_eig_triangular_c128",
         lambda a: (*torch.linalg.eig(torch.tril(a)), *torch.linalg.eig(torch.triu(a))),
         randn(6, 6, dtype=C128), sign_free=(SignFree(1), SignFree(3)))
register("complex_eig_isolated_blocks_c128", lambda a, b: torch.linalg.eig(torch.block_diag(
    torch.triu(a), b, torch.tril(a))), randn(3, 3, dtype=C128), randn(4, 4, dtype=C128),
    sign_free=_C_EIG_VECTORS)
register("complex_eig_badly_scaled_c128",
         lambda a, s: torch.linalg.eig(a * s.exp() / s.exp().mT),
         randn(8, 8, dtype=C128), randn(8, 1, dtype=torch.float64, scale=5.0),
         sign_free=_C_EIG_VECTORS, atol=1e-8)
register("complex_eig_hermitian_c128", lambda g: torch.linalg.eig(g + g.mH),
         randn(6, 6, dtype=C128), sign_free=_C_EIG_VECTORS)
register("complex_eig_of_real_c128", lambda a: torch.linalg.eig(a.to(C128)),
         randn(7, 7, dtype=torch.float64), sign_free=_C_EIG_VECTORS)
register("complex_eig_unitary_c128", lambda g: torch.linalg.eig(torch.linalg.qr(g).Q),
         randn(5, 5, dtype=C128), sign_free=_C_EIG_VECTORS)
register("complex_eig_identity_c128", torch.linalg.eig, const(torch.eye(4, dtype=C128)),
         sign_free=_C_EIG_VECTORS)
register("complex_eig_nilpotent_c128", torch.linalg.eig,
         const(torch.diag(torch.ones(3, dtype=C128), 1)), sign_free=_C_EIG_VECTORS)
register("complex_eigvals_spectral_radius_c64", lambda a: torch.linalg.eigvals(a).abs().amax(-1),
         randn(3, 12, 12, dtype=C64), rtol=1e-4, atol=1e-4)
register("complex_eig_empty_batch_c64", torch.linalg.eig, randn(0, 3, 3, dtype=C64),
         sign_free=_C_EIG_VECTORS)

# resize_as_ of a complex tensor: its pairs' leading elements (aten.resize by
# parts). Was UNIMPLEMENTED.
register("complex_resize_as_c64", lambda z, o: z.resize_as_(o), randn(4, 3, dtype=torch.complex64),
         randn(2, 6))
register("complex_resize_as_shrink_c128", lambda z, o: z.resize_as_(o) * 2,
         randn(3, 3, dtype=torch.complex128), randn(7))

# masked_select of a complex tensor: its pairs picked together, the row
# count computed by the run (was UNIMPLEMENTED; the output buffer first held
# half the pairs).
register("complex_masked_select_c64", lambda z, m: torch.masked_select(z, m),
         randn(4, 5, dtype=torch.complex64), randbool(4, 5))
register("complex_masked_select_broadcast_c128", lambda z, m: torch.masked_select(z, m),
         randn(3, 1, 4, dtype=torch.complex128), randbool(2, 4))
register("complex_masked_select_0d_c64", lambda z, m: torch.masked_select(z, m),
         randn(dtype=torch.complex64), randbool(6))
register("complex_masked_select_by_abs_c64", lambda z: torch.masked_select(z, z.abs() > 1),
         randn(7, 3, dtype=torch.complex64))
# x[mask] of a complex tensor: rows of its pairs, as masked_select. (An op
# on the selection after it is UNIMPLEMENTED: complex tensors of a symbolic
# size reach no other complex form.)
register("complex_index_bool_rows_c64", lambda z, m: z[m], randn(6, 3, dtype=torch.complex64),
         randbool(6))
register("complex_index_bool_full_c128", lambda z: z[z.real > 0], randn(4, 5, dtype=torch.complex128))
