"""Kiln's decompositions of linear-algebra ops that it compiles from other
ops, which torch keeps whole in an export:

- ``torch.linalg.pinv`` (and ``torch.pinverse``), as ATen computes it,
  from a singular value decomposition (an eigendecomposition for
  ``hermitian=True``) and one product. Kiln lowers ``_linalg_svd`` and
  ``_linalg_eigh`` itself (one-sided Jacobi rotations, a tridiagonal QL).
- ``torch.pdist`` (``aten._pdist_forward``): the p-norms of the row
  differences x[i] - x[j], i < j in row-major order, as ATen's kernel
  computes them (differences, not cdist's matrix-product form).
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["pdist_decompositions", "pinv_decompositions"]


def _tolerances(a: torch.Tensor, atol: Any, rtol: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """(atol, rtol) as ATen's get_atol_rtol settles them, as f64 tensors:
    atol 0 when not given; rtol eps * max(m, n) when not given, or 0 where
    a given atol is positive."""
    def f64(x: Any) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return x.to(torch.float64)
        return torch.full((), float(x), dtype=torch.float64)
    given = atol is not None
    atol = f64(atol if given else 0.0)
    if rtol is None:
        default = f64(torch.finfo(a.dtype).eps * max(a.shape[-2], a.shape[-1]))
        rtol = torch.where(atol > 0, f64(0.0), default) if given else default
    return atol, f64(rtol)


def _threshold(largest: torch.Tensor, atol: torch.Tensor, rtol: torch.Tensor) -> torch.Tensor:
    """max(atol, rtol * largest) in f64, the tolerances broadcast over the
    batch as ATen's unsqueeze(-1) does."""
    return torch.maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * largest)


def _linalg_pinv(a: torch.Tensor, atol: Any = None, rtol: Any = None,
                 hermitian: bool = False) -> torch.Tensor:
    """A^+ = V diag(1 / s where s > tol, else 0) U^T from the reduced SVD;
    for a hermitian A, U diag(1 / w where |w| > tol) U^T from eigh, with
    tol = max(atol, rtol * the largest |value|)."""
    atol, rtol = _tolerances(a, atol, rtol)
    if a.numel() == 0:
        return a.new_zeros((*a.shape[:-2], a.shape[-1], a.shape[-2]))
    if hermitian:
        w, u = torch.linalg.eigh(a)
        magnitude = w.abs()
        tol = _threshold(magnitude.amax(-1, keepdim=True), atol, rtol)
        inverse = torch.where(magnitude > tol, w.reciprocal(), 0.0).to(a.dtype)
        return (u * inverse.unsqueeze(-2)) @ u.mH
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    tol = _threshold(s.narrow(-1, 0, 1), atol, rtol)
    inverse = torch.where(s > tol, s.reciprocal(), 0.0).to(a.dtype)
    return (vh.mH * inverse.unsqueeze(-2)) @ u.mH


def _pinv_rcond(a: torch.Tensor, rcond: Any, hermitian: bool = False) -> torch.Tensor:
    """The rcond overloads (torch.pinverse): rcond is the relative
    tolerance, and the absolute one 0."""
    return _linalg_pinv(a, atol=0.0, rtol=rcond, hermitian=hermitian)


def _pinv_atol_rtol(a: torch.Tensor, *, atol: Any = None, rtol: Any = None,
                    hermitian: bool = False) -> torch.Tensor:
    return _linalg_pinv(a, atol, rtol, hermitian)


def pinv_decompositions() -> dict:
    """The pinv overloads this torch has, each to its decomposition."""
    pinv = torch.ops.aten.linalg_pinv
    table = {}
    for name, decomposition in (("default", _pinv_rcond), ("rcond_tensor", _pinv_rcond),
                                ("atol_rtol_float", _pinv_atol_rtol),
                                ("atol_rtol_tensor", _pinv_atol_rtol)):
        if name in pinv.overloads():
            table[getattr(pinv, name)] = decomposition
    return table


def _pdist_forward(x: torch.Tensor, p: float = 2.0) -> torch.Tensor:
    """||x[i] - x[j]||_p for the pairs i < j of x's n rows, (i, j) in
    row-major order: n (n - 1) / 2 distances (none for n < 2). p = 0
    counts the differing entries and p = inf takes the largest, as eager's
    kernel does."""
    n = x.shape[0]
    first, second = torch.triu_indices(n, n, offset=1, device=x.device)
    differences = x.index_select(0, first) - x.index_select(0, second)
    return torch.linalg.vector_norm(differences, ord=p, dim=-1)


def pdist_decompositions() -> dict:
    """``aten._pdist_forward`` to its decomposition."""
    return {torch.ops.aten._pdist_forward.default: _pdist_forward}
