"""The dense linear algebra section of bench/run.sh (``--sections linalg``):
Kiln's factorisations and decompositions (scalar loops on the agent,
lib/Conversion/AtenToLinalg/{Factorisations,SymmetricEigen,GeneralEigen,
Jacobi,MatrixExp}.cpp) against eager PyTorch (LAPACK, via its CPU kernels) on the
same inputs, end to end and the agent's run alone, at each thread count.

The error column compares what defines each result, not the vectors' signs
(PyTorch leaves them unspecified): eigh's values and V diag(w) V^T, svd's
values and U diag(S) Vh, eigvals' sorted parts and moduli (and eig's
V diag(w) V^-1); the others elementwise. bench_speed.py passes its
own module in (``h``) for the timing and table helpers; the measuring
loop is op_sections.measure_ops, which the kernels section shares.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from op_sections import HEADERS, OpCase, measure_ops, randn


def _spd(n: int, dtype: torch.dtype) -> Callable[..., Any]:
    def make(g: torch.Generator) -> tuple[torch.Tensor, ...]:
        a = torch.randn(n, n, generator=g, dtype=dtype)
        return (a @ a.mT + n * torch.eye(n, dtype=dtype),)
    return make


def _symmetric(n: int, dtype: torch.dtype) -> Callable[..., Any]:
    def make(g: torch.Generator) -> tuple[torch.Tensor, ...]:
        a = torch.randn(n, n, generator=g, dtype=dtype)
        return (a + a.mT,)
    return make


def _eigen_invariants(out: Any) -> Any:
    w, v = out
    return w, (v * w.unsqueeze(-2)) @ v.mT


def _svd_invariants(out: Any) -> Any:
    u, s, vh = out
    return s, (u * s.unsqueeze(-2)) @ vh


def _unordered_values(out: Any) -> Any:
    """eigvals' values without their order (LAPACK's convergence order,
    which PyTorch does not promise): the sorted real parts, imaginary parts
    and moduli."""
    return (out.real.sort(-1).values, out.imag.sort(-1).values, out.abs().sort(-1).values)


def _eig_invariants(out: Any) -> Any:
    """eig's values without their order, and V diag(w) V^-1, which gives A
    back whatever the vectors' phases and order."""
    w, v = out
    return (*_unordered_values(w), (v * w.unsqueeze(-2)) @ torch.linalg.inv(v))


CASES = (
    OpCase("solve 128 f64, 8 rhs", torch.linalg.solve,
               lambda g: (torch.randn(128, 128, generator=g, dtype=torch.float64),
                          torch.randn(128, 8, generator=g, dtype=torch.float64))),
    OpCase("inv 128 f32", torch.linalg.inv, randn(128, 128)),
    OpCase("cholesky 128 f64", torch.linalg.cholesky, _spd(128, torch.float64)),
    OpCase("qr 256x128 f32", torch.linalg.qr, randn(256, 128)),
    OpCase("eigvalsh 128 f64", torch.linalg.eigvalsh, _symmetric(128, torch.float64)),
    OpCase("eigh 64 f64", torch.linalg.eigh, _symmetric(64, torch.float64),
               _eigen_invariants),
    OpCase("eigvals 128 f64", torch.linalg.eigvals, randn(128, 128, dtype=torch.float64),
               _unordered_values),
    OpCase("eig 64 f64", torch.linalg.eig, randn(64, 64, dtype=torch.float64),
               _eig_invariants),
    OpCase("svd 128x64 f32", lambda a: torch.linalg.svd(a, full_matrices=False),
               randn(128, 64), _svd_invariants),
    OpCase("matrix_exp 64 f32", lambda a: torch.linalg.matrix_exp(a / 8), randn(64, 64)),
)


def measure_linalg(clients: dict[int, Any], threads: Sequence[int], args: Any,
                   h: Any) -> list[str]:
    """The section's lines: a table of op, thread count, Kiln end to end and
    run, eager, their ratios and the error, then the ratios' geomeans."""
    rows = measure_ops(CASES, "linalg", clients, threads, args, h)
    return ["Dense linear algebra: median ms per call, Kiln (scalar loops on the agent, "
            "one thread) against eager (LAPACK);",
            "err = relative L2 vs eager of what defines the result (eigh: w and V diag(w) "
            "V^T; svd: S and U diag(S) Vh; eigvals: sorted parts and moduli; eig: also V diag(w) V^-1).",
            *h.table(HEADERS, rows)]
