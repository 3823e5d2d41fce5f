"""Matrix products: mm, matmul (1-d, 2-d, batched, broadcast), bmm, linear,
addmm, baddbmm, einsum; float dtypes and integer matmul."""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from tests.registry.registry import (DTYPE_NAMES, SignFree, Unordered, case, const, randint,
                                     rand, randn, register)

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

for dt in FLOATS:
    n = DTYPE_NAMES[dt]
    register(f"mm_{n}", torch.mm, randn(5, 8, dtype=dt), randn(8, 6, dtype=dt))
    register(f"bmm_{n}", torch.bmm, randn(3, 4, 8, dtype=dt), randn(3, 8, 5, dtype=dt))
    register(f"matmul_batched_bcast_{n}", torch.matmul, randn(2, 1, 4, 8, dtype=dt),
             randn(3, 8, 5, dtype=dt))
register("mm_odd_sizes_f32", torch.mm, randn(13, 17), randn(17, 11))
register("mm_large_k_f32", torch.mm, randn(8, 512), randn(512, 8))
register("mm_vector_shapes_f32", torch.mm, randn(1, 16), randn(16, 1))
register("mm_64_f32", torch.mm, randn(64, 64), randn(64, 64))
register("matmul_1d_1d_f32", torch.matmul, randn(7), randn(7))
register("matmul_1d_2d_f32", torch.matmul, randn(7), randn(7, 3))
register("matmul_2d_1d_f32", torch.matmul, randn(4, 7), randn(7))
register("matmul_3d_2d_f32", torch.matmul, randn(2, 4, 7), randn(7, 3))
# A 3-D input that is not contiguous: torch's matmul decomposition
# broadcasts the weight over the batch (expand + bmm), which
# kiln-fold-broadcast-products turns back into one 2-D product.
register("matmul_transposed_3d_2d_f32", lambda x, w: x.transpose(0, 1) @ w,
         randn(8, 5, 16), randn(16, 12))
register("matmul_transposed_3d_2d_f16", lambda x, w: x.transpose(0, 1) @ w,
         randn(6, 3, 16, dtype=torch.float16), randn(16, 10, dtype=torch.float16))
register("matmul_2d_3d_f32", torch.matmul, randn(4, 7), randn(2, 7, 3))
register("matmul_4d_f32", torch.matmul, randn(2, 3, 4, 5), randn(2, 3, 5, 6))
register("matmul_3d_1d_f32", torch.matmul, randn(2, 4, 7), randn(7))
register("matmul_operator_f32", lambda a, b: a @ b.transpose(-1, -2), randn(2, 5, 4),
         randn(2, 3, 4))
register("mv_f32", torch.mv, randn(5, 4), randn(4))
register("dot_f32", torch.dot, randn(9), randn(9))
register("outer_f32", torch.outer, randn(4), randn(5))
register("addmm_f32", torch.addmm, randn(6), randn(4, 5), randn(5, 6))
register("addmm_beta_alpha_f32", lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
         randn(4, 6), randn(4, 5), randn(5, 6))
register("baddbmm_f32", torch.baddbmm, randn(2, 3, 4), randn(2, 3, 5), randn(2, 5, 4))
register("addbmm_beta_alpha_f32", lambda c, a, b: torch.addbmm(c, a, b, beta=0.5, alpha=2.0),
         randn(3, 4), randn(5, 3, 6), randn(5, 6, 4))
register("addbmm_broadcast_beta0_nan_f64", lambda c, a, b: torch.addbmm(c * float("nan"), a, b, beta=0),
         randn(4, dtype=torch.float64), randn(2, 3, 2, dtype=torch.float64),
         randn(2, 2, 4, dtype=torch.float64))
# f16 adds one product at a time in f32, rounding after each, as eager's
# loop of addmm_; integer tensors take beta and alpha cut to integers.
register("addbmm_f16_stepwise", lambda c, a, b: torch.addbmm(c, a, b, beta=0.6, alpha=0.2),
         randn(5, 5, dtype=torch.float16, scale=4.0), randn(5, 5, 5, dtype=torch.float16, scale=4.0),
         randn(5, 5, 5, dtype=torch.float16, scale=4.0))
register("addbmm_i16_fractional_scalars",
         lambda c, a, b: torch.addbmm(c, a, b, beta=1.6, alpha=2.2),
         randint(-50, 50, 3, 4, dtype=torch.int16), randint(-50, 50, 4, 3, 5, dtype=torch.int16),
         randint(-50, 50, 4, 5, 4, dtype=torch.int16))
# solve_ex returns the solution and LAPACK's info (0: no zero pivot); the LU
# and pivots nobody reads travel left out.
register("solve_ex_info_f32", lambda a, b: torch.linalg.solve_ex(a + 4 * torch.eye(4), b),
         randn(2, 4, 4), randn(2, 4, 3))
register("addbmm_i8_wraps", lambda c, a, b: torch.addbmm(c, a, b, alpha=3),
         randint(-100, 100, 3, 4, dtype=torch.int8), randint(-100, 100, 6, 3, 5, dtype=torch.int8),
         randint(-100, 100, 6, 5, 4, dtype=torch.int8))
register("einsum_bij_bjk_f32", lambda a, b: torch.einsum("bij,bjk->bik", a, b),
         randn(2, 3, 4), randn(2, 4, 5))
register("einsum_attention_f32", lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k),
         randn(1, 2, 3, 4), randn(1, 2, 5, 4))
register("matmul_promote_f32_f64", lambda a, b: a.double() @ b, randn(3, 4),
         randn(4, 2, dtype=torch.float64))
for dt in (torch.int32, torch.int64):
    n = DTYPE_NAMES[dt]
    register(f"mm_{n}", torch.mm, randint(-5, 5, 4, 6, dtype=dt), randint(-5, 5, 6, 3, dtype=dt))
    register(f"bmm_{n}", torch.bmm, randint(-5, 5, 2, 4, 6, dtype=dt),
             randint(-5, 5, 2, 6, 3, dtype=dt))


@case("linear_f32", randn(4, 16), d_in=16, d_out=8)
@case("linear_no_bias_f32", randn(4, 16), d_in=16, d_out=8, bias=False)
@case("linear_3d_input_f32", randn(2, 5, 16), d_in=16, d_out=12)
@case("linear_4d_input_f32", randn(2, 3, 5, 8), d_in=8, d_out=4)
@case("linear_1d_input_f32", randn(16), d_in=16, d_out=3)
@case("linear_wide_f32", randn(3, 100), d_in=100, d_out=130)
@case("linear_f64", randn(4, 16, dtype=torch.float64), d_in=16, d_out=8,
      dtype=torch.float64)
@case("linear_f16", randn(4, 16, dtype=torch.float16), d_in=16, d_out=8,
      dtype=torch.float16)
@case("linear_bf16", randn(4, 16, dtype=torch.bfloat16), d_in=16, d_out=8,
      dtype=torch.bfloat16)
class Linear(nn.Module):
    def __init__(self, d_in: int, d_out: int, bias: bool = True,
                 dtype: torch.dtype = torch.float32):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out, bias=bias, dtype=dtype)

    def forward(self, x):
        return self.fc(x)


@case("bilinear_style_two_linears_f32", randn(3, 6), randn(3, 5))
class TwoLinears(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 4)
        self.b = nn.Linear(5, 4)

    def forward(self, x, y):
        return torch.tanh(self.a(x)) * self.b(y)

# bilinear (aten._trilinear): x1^T W x2 per output feature, as one product.
register("bilinear_f32", lambda a, b, w, bias: F.bilinear(a, b, w, bias),
         randn(4, 3), randn(4, 5), randn(6, 3, 5), randn(6))
register("bilinear_no_bias_batched_f32", lambda a, b, w: F.bilinear(a, b, w),
         randn(2, 3, 4), randn(2, 3, 2), randn(5, 4, 2))
register("bilinear_f64", lambda a, b, w: F.bilinear(a, b, w),
         randn(3, 7, dtype=torch.float64), randn(3, 7, dtype=torch.float64),
         randn(2, 7, 7, dtype=torch.float64))
register("bilinear_module_f32", nn.Bilinear, randn(5, 8), randn(5, 6), in1_features=8,
         in2_features=6, out_features=4)
register("trilinear_sum_all_f32",
         lambda x, y, z: torch.ops.aten._trilinear(x, y, z, [1], [1], [1], [0], 1),
         randn(4, 3), randn(4, 3), randn(4, 3))
register("trilinear_one_sided_sum_f32",
         lambda x, y, z: torch.ops.aten._trilinear(x, y, z, [0], [2], [1], [1, 2], 1),
         randn(3, 4), randn(2, 3), randn(2, 4))

# Determinants (aten._linalg_det, _linalg_slogdet): an LU with partial
# pivoting (getrf in scalar loops); LU and pivots are lu_factor(A.mT)'s,
# as eager's. A singular matrix gives det 0, sign 0 and logabsdet -inf.
register("det_f32", torch.linalg.det, randn(4, 4))
register("det_batched_f64", torch.linalg.det, randn(2, 3, 5, 5, dtype=torch.float64))
register("det_all_results_f64", lambda a: torch.ops.aten._linalg_det(a),
         randn(6, 6, dtype=torch.float64))
register("det_needs_pivoting_f32", torch.linalg.det,
         const(torch.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]])))
# Singular with every elimination step exact in binary (the multipliers are
# 1/2 and 1/4): the pivots, and so the LU, are the same on every host. With
# inexact multipliers the residues left in a dependent column (~1e-16)
# decide the next pivot, and their rounding differs between CPUs (eager's
# LAPACK on an AVX-512 Xeon chose another row than Kiln).
register("det_singular_f64", lambda a: torch.ops.aten._linalg_det(a),
         const(torch.tensor([[4.0, 2.0, 1.0], [8.0, 4.0, 2.0], [1.0, 3.0, 5.0]],
                            dtype=torch.float64)))
register("det_1x1_f32", torch.linalg.det, randn(3, 1, 1))
register("slogdet_f64", lambda a: torch.linalg.slogdet(a), randn(2, 4, 4, dtype=torch.float64))
register("slogdet_all_results_f32", lambda a: torch.ops.aten._linalg_slogdet(a), randn(5, 5))
register("slogdet_singular_f64", lambda a: torch.linalg.slogdet(a),
         const(torch.zeros(3, 3, dtype=torch.float64)))
register("logdet_f64", torch.logdet,
         const(torch.eye(4, dtype=torch.float64) * 2 + torch.ones(4, 4, dtype=torch.float64)))

# Inverses and solves (aten.linalg_inv_ex, _linalg_solve_ex): getrf with
# partial pivoting, then getrs, in scalar loops; the LU, pivots and info
# results are eager's (lu_factor(A), getrf's info). Matrices are shifted
# by a multiple of the identity to keep them well conditioned.
EYE4, EYE5 = torch.eye(4), torch.eye(5)
register("inv_f32", lambda a: torch.linalg.inv(a + 4 * EYE5), randn(5, 5))
register("inv_batched_f64", lambda a: torch.linalg.inv(a + 3 * EYE4.double()),
         randn(2, 3, 4, 4, dtype=torch.float64))
register("inv_ex_all_results_f32", lambda a: torch.ops.aten.linalg_inv_ex(a + 4 * EYE4),
         randn(3, 4, 4))
register("inv_needs_pivoting_f32", torch.linalg.inv,
         const(torch.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]])))
# Singular with exact elimination (multipliers 1/2 and 1/8): U's third
# pivot is exactly 0, so info is 3 on every host.
SINGULAR = torch.tensor([[4.0, 2.0, 1.0], [8.0, 4.0, 2.0], [1.0, 3.0, 5.0]], dtype=torch.float64)
register("inv_ex_singular_info_f64", lambda a: torch.ops.aten.linalg_inv_ex(a)[1],
         const(SINGULAR))
register("solve_f32", lambda a, b: torch.linalg.solve(a + 4 * EYE4, b), randn(4, 4),
         randn(4, 3))
register("solve_vector_f64", lambda a, b: torch.linalg.solve(a + 5 * EYE5.double(), b),
         randn(2, 5, 5, dtype=torch.float64), randn(2, 5, dtype=torch.float64))
register("solve_one_vector_f32", lambda a, b: torch.linalg.solve(a + 4 * EYE4, b),
         randn(3, 4, 4), randn(4))
register("solve_broadcast_batch_f32", lambda a, b: torch.linalg.solve(a + 4 * EYE4, b),
         randn(3, 1, 4, 4), randn(2, 4, 2))
register("solve_right_f32", lambda a, b: torch.linalg.solve(a + 4 * EYE4, b, left=False),
         randn(2, 4, 4), randn(2, 3, 4))
register("solve_ex_all_results_f64",
         lambda a, b: torch.ops.aten._linalg_solve_ex(a + 4 * EYE4.double(), b),
         randn(2, 4, 4, dtype=torch.float64), randn(2, 4, 3, dtype=torch.float64))
register("solve_needs_pivoting_f64", torch.linalg.solve,
         const(torch.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]],
                            dtype=torch.float64)),
         randn(3, 2, dtype=torch.float64))

# LU factors (aten.linalg_lu_factor_ex): lu_factor(A) row by row, pivots
# 1-based int32, info getrf's.
register("lu_factor_f64", lambda a: torch.linalg.lu_factor(a), randn(2, 5, 5, dtype=torch.float64))
register("lu_factor_ex_all_results_f32", lambda a: torch.ops.aten.linalg_lu_factor_ex(a),
         randn(3, 4, 4))
register("lu_factor_ex_singular_info_f64", lambda a: torch.ops.aten.linalg_lu_factor_ex(a),
         const(SINGULAR))
register("lu_factor_order_100_f64", lambda a: torch.linalg.lu_factor(a)[0],
         randn(100, 100, dtype=torch.float64))
register("inv_order_80_f64", lambda a: torch.linalg.inv(a + 10 * torch.eye(80, dtype=torch.float64)),
         randn(80, 80, dtype=torch.float64))

# QR (aten.linalg_qr): Householder reflectors with LAPACK's conventions,
# so the signs of R's diagonal (and Q's columns) are eager's.
register("qr_tall_f32", torch.linalg.qr, randn(6, 4))
register("qr_wide_batched_f64", torch.linalg.qr, randn(2, 3, 5, dtype=torch.float64))
register("qr_complete_tall_f64", lambda a: torch.linalg.qr(a, mode="complete"),
         randn(5, 3, dtype=torch.float64))
register("qr_complete_wide_f32", lambda a: torch.linalg.qr(a, mode="complete"), randn(3, 5))
register("qr_r_mode_f32", lambda a: torch.linalg.qr(a, mode="r")[1], randn(2, 4, 4))
# Already upper triangular: no reflection, R's diagonal keeps its signs.
register("qr_upper_triangular_f32", torch.linalg.qr,
         const(torch.tensor([[1.0, 2.0], [0.0, -3.0], [0.0, 0.0]])))
register("qr_zero_column_f64", torch.linalg.qr,
         const(torch.tensor([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, 1.0, 1.0]],
                            dtype=torch.float64)))
register("qr_square_40_f64", torch.linalg.qr, randn(40, 40, dtype=torch.float64))
# Entries whose squares underflow or overflow f32: the column norm is
# scaled by its largest |entry|, as LAPACK's dnrm2 scales it.
register("qr_tiny_f32", lambda a: torch.linalg.qr(a * 1e-25)[1], randn(4, 3), atol=1e-32)
register("qr_huge_f32", lambda a: torch.linalg.qr(a * 1e25), randn(4, 3))

# Eigenvalues and singular values (aten._linalg_eigh, _linalg_svd, whose
# unread vectors the client leaves out): a tridiagonal reduction and QL
# steps (eigvalsh), one-sided Jacobi rotations (svdvals), then sorted.
register("eigvalsh_f64", lambda a: torch.linalg.eigvalsh(a + a.mT),
         randn(6, 6, dtype=torch.float64))
register("eigvalsh_batched_f32", lambda a: torch.linalg.eigvalsh(a @ a.mT), randn(3, 5, 5))
register("eigvalsh_upper_f64", lambda a: torch.linalg.eigvalsh(a, UPLO="U"),
         randn(2, 4, 4, dtype=torch.float64))
register("eigvalsh_lower_reads_lower_triangle_f32", torch.linalg.eigvalsh, randn(5, 5))
register("eigvalsh_repeated_f64", torch.linalg.eigvalsh,
         const(torch.diag(torch.tensor([2.0, -1.0, 2.0, 0.0], dtype=torch.float64))))
register("eigvalsh_no_vectors_f32", lambda a: torch.ops.aten._linalg_eigh(a + a.mT, compute_v=False),
         randn(4, 4))
register("eigvalsh_order_60_f64", lambda a: torch.linalg.eigvalsh(a + a.mT),
         randn(60, 60, dtype=torch.float64))
register("svdvals_tall_f32", torch.linalg.svdvals, randn(6, 4))
register("svdvals_wide_batched_f64", torch.linalg.svdvals, randn(2, 3, 7, dtype=torch.float64))
register("svdvals_rank_deficient_f64", torch.linalg.svdvals,
         const(torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
                            dtype=torch.float64)))
register("svdvals_zero_f32", torch.linalg.svdvals, const(torch.zeros(3, 2)))
register("svdvals_no_vectors_f32", lambda a: torch.ops.aten._linalg_svd(a, compute_uv=False),
         randn(5, 3))
register("svdvals_order_50_f64", torch.linalg.svdvals, randn(50, 40, dtype=torch.float64))
# Entries whose squares overflow (or underflow) f32: both work on the
# matrix divided by its largest |entry| and scale the values back.
register("svdvals_huge_f32", lambda a: torch.linalg.svdvals(a * 1e25), randn(5, 4))
register("svdvals_tiny_f32", lambda a: torch.linalg.svdvals(a * 1e-25), randn(4, 4), atol=1e-32)
register("eigvalsh_huge_f32", lambda a: torch.linalg.eigvalsh((a + a.mT) * 1e22), randn(5, 5))
# Eigenvectors and singular vectors (aten.eigh, aten.svd): the QL rotations
# applied to Q, and the Jacobi rotations to V. Each vector's sign is
# unspecified (PyTorch says so; LAPACK's choice is not Kiln's algorithms'), so they are compared
# up to sign (SignFree); where the vectors are not unique beyond sign (a
# repeated eigenvalue, a zero singular value, a complete U's extra columns)
# the cases check what defines them: A = V diag(w) V^T, orthonormality, and
# the null space.
register("eigh_f64", lambda a: torch.linalg.eigh(a + a.mT), randn(6, 6, dtype=torch.float64),
         sign_free=(SignFree(1),))
register("eigh_upper_batched_f32", lambda a: torch.linalg.eigh(a, UPLO="U"), randn(2, 3, 4, 4),
         sign_free=(SignFree(1),))
register("eigh_order_40_f64", lambda a: torch.linalg.eigh(a @ a.mT), randn(40, 40, dtype=torch.float64),
         sign_free=(SignFree(1),))
register("eigh_huge_f32", lambda a: torch.linalg.eigh((a + a.mT) * 1e22), randn(5, 5),
         sign_free=(SignFree(1),))
register("eigh_vectors_only_f32", lambda a: torch.linalg.eigh(a + a.mT)[1] * 2, randn(5, 5),
         sign_free=(SignFree(0),))


def _eigen_identities(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    w, v = torch.linalg.eigh(a)
    return w, (v * w.unsqueeze(-2)) @ v.mT, v.mT @ v


# A repeated eigenvalue's vectors are any orthonormal basis of its space.
register("eigh_repeated_reconstructs_f64", _eigen_identities,
         const(torch.tensor([[2.0, 1.0, 0.0, 0.0], [1.0, 2.0, 0.0, 0.0],
                             [0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 1.0]], dtype=torch.float64)))
# The tridiagonal QL's own edge cases: an input already tridiagonal (no
# reflector does anything), a cluster of nearly equal eigenvalues, and an
# order where QL steps deflate many times.
register("eigh_tridiagonal_f64", torch.linalg.eigh,
         const(torch.diag(torch.full((9,), 2.0, dtype=torch.float64))
               - torch.diag(torch.ones(8, dtype=torch.float64), 1)
               - torch.diag(torch.ones(8, dtype=torch.float64), -1)),
         sign_free=(SignFree(1),))
register("eigvalsh_clustered_f64", lambda a: torch.linalg.eigvalsh(
    a @ torch.diag(torch.tensor([1.0, 1.0, 1.0 + 1e-12, 2.0, 2.0, -3.0], dtype=torch.float64)) @ a.mT),
    const(torch.linalg.qr(torch.randn(6, 6, generator=torch.Generator().manual_seed(3),
                                      dtype=torch.float64))[0]))
# A block far below the largest entry (1e-20 in f32): the QL rotations'
# radii are computed without squares that would underflow.
register("eigh_tiny_block_orthonormal_f32", lambda s: _eigen_identities(torch.block_diag(
    torch.ones(1, 1), 1e-20 * (s + s.mT)))[2], randn(4, 4))
register("eigh_order_120_reconstructs_f32", lambda a: _eigen_identities(a + a.mT), randn(120, 120),
         atol=1e-4)


# Eigenvalues of general real matrices (linalg.eig's values, aten.eigvals):
# dgebal's exchanges and scaling, a Hessenberg reduction and Francis QR
# sweeps, as LAPACK's dgeev. Their order is LAPACK's convergence order,
# which PyTorch does not promise (another LAPACK build, or rounding in f32,
# can order them otherwise), so they are compared as sets (Unordered).
_UNORDERED = (Unordered(0),)
register("eigvals_f64", torch.linalg.eigvals, randn(6, 6, dtype=torch.float64),
         unordered=_UNORDERED)
register("eigvals_batched_f32", torch.linalg.eigvals, randn(2, 3, 7, 7), unordered=_UNORDERED)
register("eigvals_order_60_f64", torch.linalg.eigvals, randn(60, 60, dtype=torch.float64),
         unordered=_UNORDERED)
register("eig_values_only_f32", lambda a: torch.linalg.eig(a)[0], randn(9, 9),
         unordered=_UNORDERED)
register("eigvals_1x1_and_2x2_f64", lambda a, b: (torch.linalg.eigvals(a), torch.linalg.eigvals(b)),
         randn(4, 1, 1, dtype=torch.float64), randn(5, 2, 2, dtype=torch.float64),
         unordered=(Unordered(0), Unordered(1)))
# 2 x 2 blocks: triangular either way (dgebal isolates those), a standard
# complex pair (equal diagonal, off-diagonal signs opposite), real and
# distinct (also 1e-9 apart), equal to within eps (dlanv2's rotation, then
# its split into a real pair), and a rotation's pair.
register("eigvals_2x2_forms_f64", torch.linalg.eigvals,
         const(torch.tensor([[[1.0, 2.0], [0.0, 3.0]], [[1.0, 0.0], [2.0, 3.0]],
                             [[2.0, 3.0], [-1.5, 2.0]], [[4.0, 1.0], [2.0, -3.0]],
                             [[1.0, 1e-9], [1e-9, 1.0]], [[1.0, 1e-17], [1e-17, 1.0]],
                             [[0.6, -0.8], [0.8, 0.6]]],
                            dtype=torch.float64)), unordered=_UNORDERED)
# Rows and columns that isolate eigenvalues (dgebal's exchanges): lower and
# upper triangular matrices, and a block structure.
register("eigvals_lower_triangular_f64", lambda a: torch.linalg.eigvals(torch.tril(a)),
         randn(7, 7, dtype=torch.float64), unordered=_UNORDERED)
register("eigvals_upper_triangular_f32", lambda a: torch.linalg.eigvals(torch.triu(a)), randn(6, 6),
         unordered=_UNORDERED)
register("eigvals_isolated_blocks_f64", lambda a, b: torch.linalg.eigvals(torch.block_diag(
    torch.triu(a), b, torch.tril(a))), randn(3, 3, dtype=torch.float64),
    randn(4, 4, dtype=torch.float64), unordered=_UNORDERED)
# Rows and columns of very different sizes (dgebal's scaling), and entries
# whose squares overflow f32.
register("eigvals_badly_scaled_f64", lambda a, s: torch.linalg.eigvals(a * s.exp() / s.exp().mT),
         randn(8, 8, dtype=torch.float64), randn(8, 1, dtype=torch.float64, scale=5.0),
         unordered=_UNORDERED)
register("eigvals_huge_f32", lambda a: torch.linalg.eigvals(a * 1e25), randn(5, 5),
         unordered=_UNORDERED)
# Complex pairs: a rotation in each plane (eigenvalues cos t +- i sin t),
# and symmetric matrices (all real).
register("eigvals_rotations_f64", lambda t: torch.linalg.eigvals(torch.block_diag(*[
    torch.stack([torch.stack([c, -s]), torch.stack([s, c])]) for c, s in zip(t.cos(), t.sin())])),
    randn(4, dtype=torch.float64), unordered=_UNORDERED)
register("eigvals_symmetric_f64", lambda a: torch.linalg.eigvals(a + a.mT), randn(9, 9, dtype=torch.float64),
         unordered=_UNORDERED)
# What programs do with them: a spectral radius (order-free), and a
# polynomial's roots as its companion matrix's eigenvalues (numpy.roots).
register("eigvals_spectral_radius_f32", lambda a: torch.linalg.eigvals(a).abs().amax(-1),
         randn(3, 12, 12))


def _companion_roots(c: torch.Tensor) -> torch.Tensor:
    n = c.shape[-1]
    companion = torch.diag(torch.ones(n - 1, dtype=c.dtype), -1)
    companion = torch.cat([(-c / 2.0).unsqueeze(0), companion[1:]])
    return torch.linalg.eigvals(companion)


register("eigvals_polynomial_roots_f64", _companion_roots, randn(7, dtype=torch.float64),
         unordered=_UNORDERED)


# Eigenvectors of general real matrices (aten.eig): dtrevc3's back
# substitution on the Schur form, back-transformed by Z, the balancing
# undone, each vector of norm 1 and a complex one turned so that its entry
# of largest modulus is real. A vector's phase is unspecified (SignFree
# compares complex vectors up to a unit factor). In f64 the values come in
# LAPACK's order, so vectors are compared column by column; where the order
# may differ (f32), the cases compare what defines them instead: the sorted
# values, A V - V diag(w) and each column's norm.
_EIG_VECTORS = (SignFree(1),)
register("eig_f64", torch.linalg.eig, randn(6, 6, dtype=torch.float64), sign_free=_EIG_VECTORS)
register("eig_batched_f64", torch.linalg.eig, randn(2, 3, 5, 5, dtype=torch.float64),
         sign_free=_EIG_VECTORS)
register("eig_order_40_f64", torch.linalg.eig, randn(40, 40, dtype=torch.float64),
         sign_free=_EIG_VECTORS)
register("eig_vectors_only_f64", lambda a: torch.linalg.eig(a)[1] * 2,
         randn(7, 7, dtype=torch.float64), sign_free=(SignFree(0),))
# Isolated eigenvalues (dgebal's exchanges, which dgebak undoes), scaling,
# triangular matrices, a repeated value whose vectors are the identity's,
# complex pairs of rotations.
register("eig_lower_triangular_f64", lambda a: torch.linalg.eig(torch.tril(a)),
         randn(6, 6, dtype=torch.float64), sign_free=_EIG_VECTORS)
register("eig_isolated_blocks_f64", lambda a, b: torch.linalg.eig(torch.block_diag(
    torch.triu(a), b, torch.tril(a))), randn(3, 3, dtype=torch.float64),
    randn(4, 4, dtype=torch.float64), sign_free=_EIG_VECTORS)
register("eig_badly_scaled_f64", lambda a, s: torch.linalg.eig(a * s.exp() / s.exp().mT),
         randn(8, 8, dtype=torch.float64), randn(8, 1, dtype=torch.float64, scale=5.0),
         sign_free=_EIG_VECTORS, atol=1e-8)
register("eig_identity_f64", torch.linalg.eig, const(torch.eye(4, dtype=torch.float64)),
         sign_free=_EIG_VECTORS)
register("eig_rotations_f64", lambda t: torch.linalg.eig(torch.block_diag(*[
    torch.stack([torch.stack([c, -s]), torch.stack([s, c])]) for c, s in zip(t.cos(), t.sin())])),
    randn(3, dtype=torch.float64), sign_free=_EIG_VECTORS)

# Where the back substitution meets (near-)singular pivots: a nilpotent
# shift (every value 0; dtrevc3 rescales the vector instead of
# overflowing), and a repeated complex pair (the 2 x 2 solve against the
# pair's own block, singular).
register("eig_nilpotent_f64", torch.linalg.eig,
         const(torch.diag(torch.ones(3, dtype=torch.float64), 1)), sign_free=_EIG_VECTORS)
register("eig_repeated_complex_pair_f64", lambda t: torch.linalg.eig(torch.block_diag(*[
    torch.stack([torch.stack([t.cos(), -t.sin()]), torch.stack([t.sin(), t.cos()])])] * 2)),
    const(torch.tensor(0.7, dtype=torch.float64)), sign_free=_EIG_VECTORS)
register("eig_empty_batch_f32", torch.linalg.eig, randn(0, 3, 3), sign_free=_EIG_VECTORS)


def _eig_identities(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    w, v = torch.linalg.eig(a)
    return (w.real.sort(-1).values, w.imag.abs().sort(-1).values,
            a.to(v.dtype) @ v - v * w.unsqueeze(-2), torch.linalg.vector_norm(v, dim=-2))


register("eig_identities_f32", _eig_identities, randn(2, 9, 9), atol=1e-4)
register("eig_identities_order_30_f32", _eig_identities, randn(30, 30), atol=1e-4)


def _svd_and_product(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The reduced SVD and U diag(S) Vh, which ties each vector's sign to
    its partner's (the vectors are compared up to sign one by one)."""
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    return u, s, vh, (u * s.unsqueeze(-2)) @ vh


register("svd_tall_reduced_f32", _svd_and_product, randn(6, 4),
         sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("svd_square_batched_f64", torch.linalg.svd, randn(3, 5, 5, dtype=torch.float64),
         sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("svd_wide_reduced_f64", _svd_and_product,
         randn(2, 3, 7, dtype=torch.float64), sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("torch_svd_some_f32", torch.svd, randn(7, 3), sign_free=(SignFree(0), SignFree(2)))
register("svd_order_50_f64", _svd_and_product,
         randn(50, 40, dtype=torch.float64), sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("svd_huge_f32", lambda a: torch.linalg.svd(a * 1e25, full_matrices=False), randn(5, 4),
         sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("svd_u_only_f32", lambda a: torch.linalg.svd(a, full_matrices=False)[0], randn(5, 3),
         sign_free=(SignFree(0),))


def _complete_svd(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """full_matrices: the defined vectors up to sign; the rest an orthonormal
    completion (U^T U = I, V^T V = I) that spans the null space."""
    u, s, vh = torch.linalg.svd(a)
    k = s.shape[-1]
    return (u[..., :, :k], s, vh[..., :k, :], u.mT @ u, vh @ vh.mT,
            a @ vh[..., k:, :].mT, u[..., :, k:].mT @ a)


register("svd_complete_tall_f64", _complete_svd, randn(6, 3, dtype=torch.float64),
         sign_free=(SignFree(0), SignFree(2, dim=-1)))
register("svd_complete_wide_batched_f32", _complete_svd, randn(2, 3, 5),
         sign_free=(SignFree(0), SignFree(2, dim=-1)))


def _svd_identities(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    u, s, vh = torch.linalg.svd(a)
    k = s.shape[-1]
    return s, (u[..., :, :k] * s.unsqueeze(-2)) @ vh[..., :k, :], u.mT @ u, vh @ vh.mT


# Zero singular values: their left vectors complete U to an orthonormal
# basis (any one will do), and U S Vh still gives A.
register("svd_rank_deficient_reconstructs_f64", _svd_identities,
         const(torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
                            dtype=torch.float64)))
register("svd_zero_reconstructs_f32", _svd_identities, const(torch.zeros(4, 3)))

register("matrix_norm_nuclear_f32", lambda a: torch.linalg.matrix_norm(a, "nuc"), randn(2, 4, 3))
register("matrix_norm_2_f64", lambda a: torch.linalg.matrix_norm(a, 2),
         randn(5, 5, dtype=torch.float64))

# Triangular solves (aten.linalg_solve_triangular, cholesky_solve): forward
# or back substitution reading only the triangle named (garbage in the
# other one, and on a unit diagonal, must not matter).
register("solve_triangular_lower_f32",
         lambda a, b: torch.linalg.solve_triangular(torch.tril(a) + 4 * EYE4, b, upper=False),
         randn(4, 4), randn(4, 3))
register("solve_triangular_upper_ignores_lower_f64",
         lambda a, b: torch.linalg.solve_triangular(a + 4 * EYE4.double(), b, upper=True),
         randn(2, 4, 4, dtype=torch.float64), randn(2, 4, 2, dtype=torch.float64))
register("solve_triangular_unit_right_f32",
         lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, left=False,
                                                    unitriangular=True),
         randn(3, 4, 4), randn(3, 2, 4))
register("solve_triangular_broadcast_f32",
         lambda a, b: torch.linalg.solve_triangular(torch.triu(a) + 4 * EYE4, b, upper=True),
         randn(4, 4), randn(2, 3, 4, 5))
register("cholesky_solve_f64",
         lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(a @ a.mT + 4 * EYE4.double())),
         randn(4, 4, dtype=torch.float64), randn(4, 2, dtype=torch.float64))
register("cholesky_solve_upper_batched_f32",
         lambda a, b: torch.cholesky_solve(
             b, torch.linalg.cholesky(a @ a.mT + 4 * EYE4, upper=True), upper=True),
         randn(2, 4, 4), randn(2, 4, 3))

# Cholesky (aten.linalg_cholesky_ex): potrf in scalar loops on the lower
# triangle (the upper one for upper=True); info is the order of
# the first leading minor that is not positive definite.
register("cholesky_f32", lambda a: torch.linalg.cholesky(a @ a.mT + 4 * EYE5), randn(5, 5))
register("cholesky_upper_batched_f64",
         lambda a: torch.linalg.cholesky(a @ a.mT + 4 * EYE4.double(), upper=True),
         randn(2, 3, 4, 4, dtype=torch.float64))
register("cholesky_reads_lower_triangle_f64",
         lambda a, g: torch.linalg.cholesky(a @ a.mT + 4 * EYE4.double() + torch.triu(g, 1)),
         randn(4, 4, dtype=torch.float64), randn(4, 4, dtype=torch.float64))
register("cholesky_upper_reads_upper_triangle_f32",
         lambda a, g: torch.linalg.cholesky(a @ a.mT + 4 * EYE4 + torch.tril(g, -1), upper=True),
         randn(4, 4), randn(4, 4))
register("cholesky_ex_all_results_f32",
         lambda a: torch.ops.aten.linalg_cholesky_ex(a @ a.mT + 4 * EYE4), randn(2, 4, 4))
# The second leading minor is -8 (exact in binary), so info is 2.
register("cholesky_ex_not_positive_definite_info_f64",
         lambda a: torch.ops.aten.linalg_cholesky_ex(a)[1],
         const(torch.tensor([[[4.0, 2.0, 0.0], [2.0, -1.0, 0.0], [0.0, 0.0, 1.0]],
                             [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]],
                            dtype=torch.float64)))

# Histograms (aten.histc): eager's bin formula in the element type, the
# last bin closed, elements outside [min, max] and NaN in none; with
# min == max the data's own range.
register("histc_range_f32", lambda x: torch.histc(x, bins=10, min=-2, max=2), randn(1000))
register("histc_data_range_f32", lambda x: torch.histc(x, bins=7), randn(3, 50))
register("histc_constant_data_f64", lambda x: torch.histc(x, bins=4),
         const(torch.full((5,), 2.0, dtype=torch.float64)))
register("histc_edges_outside_and_nan_f32", lambda x: torch.histc(x, bins=4, min=0, max=1),
         const(torch.tensor([-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, float("nan"), 0.9999])))
register("histc_f16", lambda x: torch.histc(x, bins=5, min=-1, max=1),
         randn(200, dtype=torch.float16))
# Regression: (max - min) * 3 / (max - min) rounds to 3.0000000000000004
# here, which eager truncates to the last bin; Kiln once counted the
# maximum nowhere.
register("histc_max_rounds_past_last_bin_f64", lambda x: torch.histc(x, bins=3),
         const(torch.tensor([-6.7733029133319205, 0.5, 8.361574925111086],
                            dtype=torch.float64)))
# No elements: every bin counts nothing.
register("histc_empty_f32", lambda x: torch.histc(x, bins=3), randn(0, 4))

# Histograms with edges (aten.histogram): eager's linspace edges over the
# range (the data's own, widened by 1/2 when it is one value), eager's
# guess settled among the edges beside it; given edges by binary search;
# weights and density (divided by the total, then each bin's width).
register("histogram_bins_f32", lambda x: tuple(torch.histogram(x, 8)), randn(500))
register("histogram_100_bins_f32", lambda x: tuple(torch.histogram(x, 100)), randn(4000))
register("histogram_range_f32", lambda x: tuple(torch.histogram(x, 7, range=(-1.0, 2.0))),
         randn(3, 40))
register("histogram_range_one_value_f64",
         lambda x: tuple(torch.histogram(x, 3, range=(1.0, 1.0))),
         rand(30, dtype=torch.float64, low=0.6, high=1.6))
register("histogram_weight_density_f32",
         lambda x, w: tuple(torch.histogram(x, 6, weight=w, density=True)),
         randn(50), rand(50))
register("histogram_constant_data_f32", lambda x: tuple(torch.histogram(x, 4)),
         const(torch.full((10,), 2.5)))
register("histogram_edges_outside_and_nan_f32",
         lambda x: tuple(torch.histogram(x, 4, range=(0.0, 1.0))),
         const(torch.tensor([-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, float("nan"), 0.9999])))
register("histogram_given_edges_f64", lambda x, e: tuple(torch.histogram(x, e)),
         randn(200, dtype=torch.float64),
         const(torch.tensor([-2.0, -0.5, 0.0, 0.1, 0.1, 3.0], dtype=torch.float64)))
register("histogram_given_edges_weight_density_f32",
         lambda x, e, w: tuple(torch.histogram(x, e, weight=w, density=True)),
         randn(4, 30), const(torch.tensor([-1.5, -0.25, 0.5, 2.0])), rand(4, 30))
# Regression (an OpInfo sample): the guess at the maximum rounds past the
# bin count; eager truncates it to the last bin, Kiln once guessed 0.
register("histogram_max_rounds_past_last_bin_f64",
         lambda x, w: tuple(torch.histogram(x, 3, weight=w)),
         const(torch.tensor([-6.7733029133319205, 0.5, 3.1, 8.361574925111086],
                            dtype=torch.float64)),
         const(torch.tensor([1.0, 2.0, 4.0, 8.0], dtype=torch.float64)))
# No elements: no counts (NaN densities, 0 / 0), the edges over [0, 1].
register("histogram_empty_f32", lambda x: tuple(torch.histogram(x, 3)), randn(0))
register("histogram_empty_density_f32", lambda x: tuple(torch.histogram(x, 2, density=True)),
         randn(0, 3))
# torch.histogramdd (aten.histogramdd): each coordinate's edges and bins as
# histogram's; a point outside the edges along any coordinate, or with a
# NaN, counts nowhere.


def _histogramdd(x, bins, **kw):
    hist, edges = torch.histogramdd(x, bins, **kw)
    return (hist, *edges)


register("histogramdd_2d_bins_f32", lambda x: _histogramdd(x, [5, 3]), randn(400, 2))
register("histogramdd_3d_points_f64", lambda x: _histogramdd(x, [4, 2, 3]),
         randn(2, 60, 3, dtype=torch.float64))
register("histogramdd_range_outside_nan_f32",
         lambda x: _histogramdd(x, [4, 2], range=[0.0, 1.0, -1.0, 1.0]),
         const(torch.tensor([[0.5, 0.0], [1.0, 1.0], [0.0, -1.0], [1.5, 0.0], [0.5, 1.5],
                             [float("nan"), 0.0], [0.25, float("nan")], [0.99, -0.2]])))
register("histogramdd_weight_density_f32",
         lambda x, w: _histogramdd(x, [3, 4], weight=w, density=True), randn(100, 2),
         rand(100))
register("histogramdd_constant_coordinate_f64",
         lambda x: _histogramdd(torch.stack([x[:, 0], x[:, 1] * 0 + 2.0], 1), [2, 3]),
         randn(30, 2, dtype=torch.float64))
register("histogramdd_given_edges_f64",
         lambda x, e0, e1: _histogramdd(x, [e0, e1]), randn(80, 2, dtype=torch.float64),
         const(torch.tensor([-2.0, -0.5, 0.0, 3.0], dtype=torch.float64)),
         const(torch.tensor([-1.0, 1.0], dtype=torch.float64)))
register("histogramdd_given_edges_weight_density_f32",
         lambda x, e0, w: _histogramdd(x, [e0], weight=w, density=True), randn(50, 1),
         const(torch.tensor([-1.5, -0.25, 0.5, 2.0])), rand(50))
register("histogramdd_empty_f32", lambda x: _histogramdd(x, [2, 2]), randn(0, 2))

# Matrix exponentials (aten.linalg_matrix_exp): scaling by 2^-s, a degree-18
# Taylor polynomial, s squarings, s the matrix's own. Entries of exp(A)
# grow like e^(largest eigenvalue) and small ones lose the digits of the
# large, so tolerances follow the largest entry; eager's own error is about
# twice Kiln's against an f64 reference (16 x 16 f32, norm ~26).
register("matrix_exp_f32", torch.linalg.matrix_exp, randn(4, 4))
register("matrix_exp_small_norm_f64", torch.linalg.matrix_exp,
         randn(3, 3, dtype=torch.float64, scale=0.01))
register("matrix_exp_batched_f64", torch.linalg.matrix_exp,
         randn(2, 3, 5, 5, dtype=torch.float64), rtol=1e-9, atol=1e-8)
register("matrix_exp_squarings_f64", torch.linalg.matrix_exp,
         randn(6, 6, dtype=torch.float64, scale=4.0), rtol=1e-8, atol=1e-6)
register("matrix_exp_squarings_f32", torch.linalg.matrix_exp, randn(2, 8, 8, scale=2.0),
         rtol=1e-4, atol=1e-3)
register("matrix_exp_1x1_f32", torch.linalg.matrix_exp, randn(3, 1, 1, scale=3.0))
register("matrix_exp_zero_f64", torch.linalg.matrix_exp,
         const(torch.zeros(2, 4, 4, dtype=torch.float64)))
# Nilpotent: exp(A) = I + A + A^2/2 exactly, however large A's entries
# (a norm of 2e6: 21 squarings of a matrix whose powers vanish).
register("matrix_exp_nilpotent_f64", torch.linalg.matrix_exp,
         const(torch.tensor([[0.0, 1e6, 3.0], [0.0, 0.0, -1e6], [0.0, 0.0, 0.0]],
                            dtype=torch.float64)), rtol=1e-9, atol=1e-3)
# A NaN makes every entry NaN, as in eager; no matrices, or matrices of
# order 0, give an empty result.
register("matrix_exp_nan_f32", torch.linalg.matrix_exp,
         const(torch.tensor([[1.0, float("nan")], [0.5, -1.0]])))
register("matrix_exp_empty_batch_f32", torch.linalg.matrix_exp, randn(0, 3, 3))
register("matrix_exp_order_0_f64", torch.linalg.matrix_exp, randn(2, 0, 0, dtype=torch.float64))
# Skew-symmetric: an orthogonal exponential, as orthogonal parametrizations
# (torch.nn.utils.parametrizations.orthogonal) compute it.
register("matrix_exp_skew_f32", lambda a: torch.linalg.matrix_exp(a - a.mT), randn(6, 6))


class OrthogonalLinear(nn.Module):
    """nn.Linear under torch.nn.utils.parametrizations.orthogonal (its
    default map for a square weight: the matrix exponential)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.utils.parametrizations.orthogonal(nn.Linear(8, 8))

    def forward(self, x):
        return self.linear(x)


register("orthogonal_linear_f32", OrthogonalLinear, randn(4, 8))

# Pseudo-inverses (Kiln's decomposition of linalg_pinv, as ATen computes it:
# the reduced SVD, or eigh for hermitian=True, and one product). Singular
# values at or below max(atol, rtol * the largest) count as zero.
register("pinv_tall_f64", torch.linalg.pinv, randn(6, 4, dtype=torch.float64))
register("pinv_wide_batched_f32", torch.linalg.pinv, randn(2, 3, 5))
register("pinv_rank_deficient_f64", torch.linalg.pinv,
         const(torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
                            dtype=torch.float64)))
register("pinv_rtol_drops_small_values_f64", lambda a: torch.linalg.pinv(a, rtol=0.3),
         const(torch.diag(torch.tensor([4.0, 1.0, 0.5], dtype=torch.float64)) +
               torch.tensor([[0.0, 0.1, 0.0], [0.1, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=torch.float64)))
register("pinv_atol_tensor_f32", lambda a, t: torch.linalg.pinv(a, atol=t), randn(4, 4),
         const(torch.tensor(0.5)))
register("pinv_hermitian_f64", lambda a: torch.linalg.pinv(a @ a.mT, hermitian=True),
         randn(5, 7, dtype=torch.float64))
register("pinv_hermitian_rank_deficient_f64", lambda a: torch.linalg.pinv(a, hermitian=True),
         const(torch.tensor([[2.0, 1.0, 0.0, 0.0], [1.0, 2.0, 0.0, 0.0],
                             [0.0, 0.0, -3.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)))
register("pinverse_rcond_f32", lambda a: torch.pinverse(a, rcond=1e-3), randn(5, 3))

# LU with P, L and U (aten.linalg_lu, lu_unpack): getrf, the row order its
# swaps leave (aten.lu_permutation) as P, the packed factors' triangles;
# lu_solve from the packed LU and its pivots, in each of its four forms.
register("linalg_lu_f64", torch.linalg.lu, randn(5, 5, dtype=torch.float64))
register("linalg_lu_batched_f32", torch.linalg.lu, randn(2, 3, 4, 4))
register("linalg_lu_needs_pivoting_f64", torch.linalg.lu,
         const(torch.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]],
                            dtype=torch.float64)))
# Rectangular matrices: min(m, n) pivoting steps; P is m x m, L m x k and
# U k x n (k = min(m, n)).
register("lu_factor_tall_f64", torch.linalg.lu_factor, randn(2, 6, 4, dtype=torch.float64))
register("lu_factor_wide_f32", torch.linalg.lu_factor_ex, randn(3, 5))
register("linalg_lu_tall_f32", torch.linalg.lu, randn(2, 5, 3))
register("linalg_lu_wide_f64", torch.linalg.lu, randn(3, 6, dtype=torch.float64))
register("linalg_lu_tall_needs_pivoting_f64", torch.linalg.lu,
         const(torch.tensor([[0.0, 2.0], [1.0, 1.0], [3.0, 0.0], [0.0, 0.0]], dtype=torch.float64)))
register("lu_unpack_wide_f64", lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a)),
         randn(2, 3, 5, dtype=torch.float64))
register("lu_unpack_tall_f32", lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a)), randn(6, 2))
register("lu_unpack_f64", lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a)),
         randn(2, 4, 4, dtype=torch.float64))
register("lu_unpack_pivots_only_f32",
         lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a), unpack_data=False)[0], randn(5, 5))
register("lu_unpack_data_only_f32",
         lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a), unpack_pivots=False)[1:], randn(5, 5))
register("lu_solve_f64", lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
         randn(5, 5, dtype=torch.float64), randn(5, 3, dtype=torch.float64))
register("lu_solve_adjoint_batched_f64",
         lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=True),
         randn(2, 4, 4, dtype=torch.float64), randn(2, 4, 2, dtype=torch.float64))
register("lu_solve_batched_needs_pivoting_f64",
         lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
         const(torch.tensor([[[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]],
                             [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 2.0, 0.0]]],
                            dtype=torch.float64)),
         randn(2, 3, 2, dtype=torch.float64))
register("lu_solve_right_f64",
         lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=False),
         randn(4, 4, dtype=torch.float64), randn(3, 4, dtype=torch.float64))
register("lu_solve_right_adjoint_f64",
         lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=False, adjoint=True),
         randn(4, 4, dtype=torch.float64), randn(3, 4, dtype=torch.float64))
# LDL^T with Bunch-Kaufman pivoting (aten.ldl_factor, dsytf2 on the lower
# triangle): 1 x 1 and 2 x 2 pivots, LAPACK's signed pivots, the upper
# triangle ignored, a zero column's info, and an order where LAPACK itself
# takes its blocked path.
register("ldl_factor_f64", lambda a: torch.linalg.ldl_factor(a + a.mT), randn(6, 6, dtype=torch.float64))
register("ldl_factor_ex_batched_reads_lower_f32", torch.linalg.ldl_factor_ex, randn(2, 3, 5, 5))
register("ldl_factor_zero_diagonal_f64", lambda a: torch.linalg.ldl_factor(
    a + a.mT - torch.diag(torch.diagonal(a + a.mT))), randn(7, 7, dtype=torch.float64))
register("ldl_factor_zero_column_f32", lambda a: torch.linalg.ldl_factor_ex(
    torch.nn.functional.pad(a + a.mT, (1, 0, 1, 0))), randn(4, 4))
# ldl_solve (dsytrs) from ldl_factor's LD and pivots: 1 x 1 and 2 x 2
# pivots (a zero diagonal forces 2 x 2 ones), several right-hand sides, a
# batch, and the broadcasts eager's kernel makes: B's batch into LD's, one
# LD over B's batch (it crashes on the others).
register("ldl_solve_f64", lambda a, b: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(a + a.mT), b),
         randn(6, 6, dtype=torch.float64), randn(6, 3, dtype=torch.float64))
register("ldl_solve_two_by_two_pivots_f64", lambda a, b: torch.linalg.ldl_solve(
    *torch.linalg.ldl_factor(a + a.mT - torch.diag(torch.diagonal(a + a.mT))), b),
    randn(7, 7, dtype=torch.float64), randn(7, 2, dtype=torch.float64))
register("ldl_solve_batched_f32", lambda a, b: torch.linalg.ldl_solve(
    *torch.linalg.ldl_factor(a + a.mT), b), randn(2, 3, 5, 5), randn(2, 3, 5, 4), atol=1e-4)
register("ldl_solve_b_broadcasts_into_ld_f64", lambda a, b: torch.linalg.ldl_solve(
    *torch.linalg.ldl_factor(a + a.mT), b), randn(2, 5, 5, dtype=torch.float64),
    randn(5, 3, dtype=torch.float64))
register("ldl_solve_b_batch_of_one_f64", lambda a, b: torch.linalg.ldl_solve(
    *torch.linalg.ldl_factor(a + a.mT), b), randn(2, 5, 5, dtype=torch.float64),
    randn(1, 5, 3, dtype=torch.float64))
register("ldl_solve_one_ld_over_b_batch_f32", lambda a, b: torch.linalg.ldl_solve(
    *torch.linalg.ldl_factor(a + a.mT), b), randn(5, 5), randn(2, 5, 3), atol=1e-4)
register("ldl_factor_order_80_f64", lambda a: torch.linalg.ldl_factor(a + a.mT),
         randn(80, 80, dtype=torch.float64), atol=1e-8)

# A batch of matrices of order 0: the factors and solutions are empty, but
# each matrix still has its info (0: success), determinant (1), sign (1),
# log |det| (0), rank, norm and condition number (0), as eager gives them.
register("order_zero_ldl_factor_ex_f32", torch.linalg.ldl_factor_ex, randn(3, 0, 0))
register("order_zero_ldl_solve_f32", lambda a, b: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(a), b),
         randn(2, 0, 0), randn(2, 0, 3))
register("order_zero_lu_factor_ex_f32", torch.linalg.lu_factor_ex, randn(3, 0, 0))
register("order_zero_inv_ex_f64", torch.linalg.inv_ex, randn(3, 0, 0, dtype=torch.float64))
register("order_zero_cholesky_ex_f32", torch.linalg.cholesky_ex, randn(3, 0, 0))
register("order_zero_solve_ex_f32", torch.linalg.solve_ex, randn(3, 0, 0), randn(3, 0, 2))
register("order_zero_det_f32", torch.linalg.det, randn(3, 0, 0))
register("order_zero_slogdet_f64", torch.linalg.slogdet, randn(2, 3, 0, 0, dtype=torch.float64))
register("order_zero_logdet_f32", torch.logdet, randn(3, 0, 0))
register("order_zero_matrix_rank_f32", torch.linalg.matrix_rank, randn(3, 0, 0))
register("order_zero_matrix_norm_f32", torch.linalg.matrix_norm, randn(3, 0, 0))
register("order_zero_cond_f32", torch.linalg.cond, randn(3, 0, 0))
# svd of 0 x n and m x 0 matrices: full_matrices makes the square factor the
# identity; reduced, every factor is empty.
register("svd_no_rows_full_f64", lambda a: torch.linalg.svd(a, full_matrices=True),
         randn(3, 0, 5, dtype=torch.float64))
register("svd_no_columns_full_f32", lambda a: torch.linalg.svd(a, full_matrices=True), randn(2, 4, 0))
register("svd_no_rows_reduced_f32", lambda a: torch.linalg.svd(a, full_matrices=False), randn(3, 0, 5))
# An empty batch and no right-hand sides.
register("ldl_factor_ex_empty_batch_f64", torch.linalg.ldl_factor_ex, randn(0, 4, 4, dtype=torch.float64))
register("ldl_solve_no_rhs_f64", lambda a, b: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(a + a.mT), b),
         randn(5, 5, dtype=torch.float64), randn(5, 0, dtype=torch.float64))

# Batches that broadcast: B's batch against the LU's (both ways), and a
# right solve whose B has more batch dims.
register("lu_solve_b_broadcasts_f64",
         lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
         randn(2, 1, 4, 4, dtype=torch.float64), randn(3, 4, 2, dtype=torch.float64))
register("lu_solve_lu_broadcasts_f32",
         lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=True),
         randn(4, 4), randn(2, 3, 4, 5))
register("lu_solve_right_broadcasts_f64",
         lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=False),
         randn(3, 1, 4, 4, dtype=torch.float64), randn(2, 5, 4, dtype=torch.float64))

# cholesky_inverse (the Cholesky solve of the identity) and the legacy
# torch.triangular_solve (its second result A, cloned and broadcast), whose
# deprecation warning says nothing about the case.
warnings.filterwarnings("ignore", message="torch.triangular_solve is deprecated")
register("cholesky_inverse_f64",
         lambda a: torch.cholesky_inverse(torch.linalg.cholesky(a @ a.mT + 4 * EYE4.double())),
         randn(4, 4, dtype=torch.float64))
register("cholesky_inverse_upper_batched_f32",
         lambda a: torch.cholesky_inverse(torch.linalg.cholesky(a @ a.mT + 4 * EYE4, upper=True),
                                          upper=True),
         randn(2, 4, 4))
register("triangular_solve_legacy_f64",
         lambda a, b: torch.triangular_solve(b, a + 4 * EYE4.double()),
         randn(4, 4, dtype=torch.float64), randn(4, 2, dtype=torch.float64))
register("triangular_solve_legacy_transpose_unit_broadcast_f32",
         lambda a, b: torch.triangular_solve(b, a, upper=False, transpose=True, unitriangular=True),
         randn(4, 4), randn(2, 4, 3))

# LAPACK's compact QR (torch.geqrf: R and the reflectors, tau), the product
# of reflectors (linalg.householder_product, as the "householder"
# orthogonal parametrization uses it) and their application to another
# matrix (torch.ormqr, left and right, with and without transpose).
register("geqrf_tall_f64", torch.geqrf, randn(5, 3, dtype=torch.float64))
register("geqrf_wide_batched_f32", torch.geqrf, randn(2, 3, 4))
register("householder_product_f64", lambda a: torch.linalg.householder_product(*torch.geqrf(a)),
         randn(6, 4, dtype=torch.float64))
register("householder_product_fewer_reflectors_f32",
         lambda a, t: torch.linalg.householder_product(a, t), randn(2, 5, 3), randn(2, 2))
register("ormqr_left_f64", lambda a, c: torch.ormqr(*torch.geqrf(a), c),
         randn(4, 3, dtype=torch.float64), randn(4, 2, dtype=torch.float64))
register("ormqr_left_transpose_f64", lambda a, c: torch.ormqr(*torch.geqrf(a), c, transpose=True),
         randn(4, 3, dtype=torch.float64), randn(4, 2, dtype=torch.float64))
register("ormqr_right_batched_f32", lambda a, c: torch.ormqr(*torch.geqrf(a), c, left=False),
         randn(2, 4, 4), randn(2, 3, 4))
register("ormqr_right_transpose_f64",
         lambda a, c: torch.ormqr(*torch.geqrf(a), c, left=False, transpose=True),
         randn(4, 4, dtype=torch.float64), randn(2, 4, dtype=torch.float64))


class HouseholderOrthogonalLinear(nn.Module):
    """nn.utils.parametrizations.orthogonal with orthogonal_map="householder":
    the weight is householder_product of the parameter and its tau."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.utils.parametrizations.orthogonal(
            nn.Linear(4, 4), orthogonal_map="householder")

    def forward(self, x):
        return self.linear(x)


register("householder_orthogonal_linear_f32", HouseholderOrthogonalLinear, randn(3, 4))

# torch.pdist, which the client decomposes (kiln/linalg_decompositions.py):
# the p-norms of the row differences for i < j, p = 2, 1, 0 (the count of
# differing entries), inf and a fraction; one row gives none.
register("pdist_f32", torch.pdist, randn(6, 5))
register("pdist_p1_f64", lambda x: torch.pdist(x, p=1.0), randn(7, 3, dtype=torch.float64))
register("pdist_p0_f32", lambda x: torch.pdist(x.round(), p=0.0), randn(5, 4))
register("pdist_pinf_f64", lambda x: torch.pdist(x, p=float("inf")), randn(5, 4, dtype=torch.float64))
register("pdist_p_half_f64", lambda x: torch.pdist(x, p=0.5), randn(4, 6, dtype=torch.float64))
register("pdist_one_row_f32", torch.pdist, randn(1, 4))

# addmv and dist, which the client decomposes with torch's own
# decompositions: beta and alpha; the p-norm of the difference for p = 2,
# 1, 0, inf and a fraction, broadcast.
register("addmv_f32", lambda v, m, x: torch.addmv(v, m, x, beta=0.5, alpha=2.0),
         randn(4), randn(4, 6), randn(6))
register("addmv_f64", torch.addmv, randn(3, dtype=torch.float64), randn(3, 5, dtype=torch.float64),
         randn(5, dtype=torch.float64))
for _label, _p in (("2", 2.0), ("1", 1.0), ("0", 0.0), ("inf", float("inf")), ("3_5", 3.5)):
    register(f"dist_p{_label}_f32", lambda a, b, p=_p: torch.dist(a, b, p), randn(3, 4), randn(4),
             rtol=1e-4, atol=1e-4)
