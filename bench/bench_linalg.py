"""The dense linear algebra section of bench/run.sh (``--sections linalg``):
Kiln's factorisations and decompositions (scalar loops on the agent,
lib/Conversion/AtenToLinalg/{Factorisations,SymmetricEigen,GeneralEigen,
Jacobi,MatrixExp}.cpp) against eager PyTorch (LAPACK, via its CPU kernels) on the
same inputs, end to end and the agent's run alone, at each thread count.

The error column compares what defines each result, not the vectors' signs
(PyTorch leaves them unspecified): eigh's values and V diag(w) V^T, svd's
values and U diag(S) Vh, eigvals' sorted parts and moduli (and eig's
V diag(w) V^-1); the others elementwise. bench_speed.py passes its
own module in (``h``) for the timing and table helpers, so that both share
one set of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import torch
import torch.nn as nn


@dataclasses.dataclass(frozen=True)
class LinalgCase:
    name: str
    fn: Callable[..., Any]
    inputs: Callable[[torch.Generator], tuple[torch.Tensor, ...]]
    #: What the error compares (sign-free for vectors); the outputs as they are by default.
    invariant: Callable[[Any], Any] = lambda out: out


class Op(nn.Module):
    def __init__(self, fn: Callable[..., Any]):
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> Any:
        return self.fn(*args)


def _randn(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[..., Any]:
    return lambda g: (torch.randn(*shape, generator=g, dtype=dtype),)


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
    LinalgCase("solve 128 f64, 8 rhs", torch.linalg.solve,
               lambda g: (torch.randn(128, 128, generator=g, dtype=torch.float64),
                          torch.randn(128, 8, generator=g, dtype=torch.float64))),
    LinalgCase("inv 128 f32", torch.linalg.inv, _randn(128, 128)),
    LinalgCase("cholesky 128 f64", torch.linalg.cholesky, _spd(128, torch.float64)),
    LinalgCase("qr 256x128 f32", torch.linalg.qr, _randn(256, 128)),
    LinalgCase("eigvalsh 128 f64", torch.linalg.eigvalsh, _symmetric(128, torch.float64)),
    LinalgCase("eigh 64 f64", torch.linalg.eigh, _symmetric(64, torch.float64),
               _eigen_invariants),
    LinalgCase("eigvals 128 f64", torch.linalg.eigvals, _randn(128, 128, dtype=torch.float64),
               _unordered_values),
    LinalgCase("eig 64 f64", torch.linalg.eig, _randn(64, 64, dtype=torch.float64),
               _eig_invariants),
    LinalgCase("svd 128x64 f32", lambda a: torch.linalg.svd(a, full_matrices=False),
               _randn(128, 64), _svd_invariants),
    LinalgCase("matrix_exp 64 f32", lambda a: torch.linalg.matrix_exp(a / 8), _randn(64, 64)),
)


def measure_linalg(clients: dict[int, Any], threads: Sequence[int], args: Any,
                   h: Any) -> list[str]:
    """The section's lines: a table of op, thread count, Kiln end to end and
    run, eager, their ratios and the error, then the ratios' geomeans."""
    rows: list[list[str]] = []
    ratios: dict[int, list[float]] = {t: [] for t in threads}
    run_ratios: dict[int, list[float]] = {t: [] for t in threads}
    for case in CASES:
        h.log(f"linalg: {case.name}")
        module = Op(case.fn).eval()
        inputs = case.inputs(torch.Generator().manual_seed(0))
        builds = h.kiln_builds(clients, module, inputs, "linalg " + case.name)
        with torch.no_grad():
            ref = h.flat_outputs(case.invariant(module(*inputs)))
            for t in threads:
                torch.set_num_threads(t)
                kiln_c = h.kiln_contender(builds[t], inputs)
                eager_c = h.eager_contender(module, inputs)
                error = None
                if kiln_c.ok:
                    error = h.rel_l2(case.invariant(kiln_c.check()), ref)
                m = h.interleaved([kiln_c, eager_c], args.rounds, args.round_s)
                eager = m.seconds["eager"]
                if "kiln" not in m.seconds:
                    rows.append([case.name, str(t), kiln_c.cell, "", h.format_ms(eager), "", "",
                                 ""])
                    continue
                e2e, run = m.seconds["kiln"], m.device_run["kiln"]
                ratios[t].append(e2e / eager)
                run_ratios[t].append(run / eager)
                rows.append([case.name, str(t), h.format_ms(e2e), h.format_ms(run),
                             h.format_ms(eager), h.format_ratio(e2e / eager),
                             h.format_ratio(run / eager), h.format_error(error)])
    for t in threads:
        rows.append(["geomean", str(t), "", "", "", h.format_ratio(h.geomean(ratios[t])),
                     h.format_ratio(h.geomean(run_ratios[t])), ""])
    return ["Dense linear algebra: median ms per call, Kiln (scalar loops on the agent, "
            "one thread) against eager (LAPACK);",
            "err = relative L2 vs eager of what defines the result (eigh: w and V diag(w) "
            "V^T; svd: S and U diag(S) Vh; eigvals: sorted parts and moduli; eig: also V diag(w) V^-1).",
            *h.table(["op", "thr", "kiln e2e", "kiln run", "eager", "kiln/eager",
                      "run/eager", "err kiln"], rows)]
