"""The shared shape of bench/run.sh's per-op sections (``linalg``,
``kernels``): single-op modules through Kiln against eager PyTorch on the
same inputs, interleaved as the models are, at each thread count. A section
is a tuple of :class:`OpCase`; :func:`measure_ops` gives its table rows:
op, thread count, Kiln end to end and the agent's run alone, eager, both
ratios, the error, and the ratios' geomeans per thread count.

bench_speed.py passes its own module in (``h``) for the timing and table
helpers, so that every section shares one set of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import torch
import torch.nn as nn

#: The columns of :func:`measure_ops`' rows.
HEADERS = ("op", "thr", "kiln e2e", "kiln run", "eager", "kiln/eager", "run/eager",
           "err kiln")


@dataclasses.dataclass(frozen=True)
class OpCase:
    name: str
    fn: Callable[..., Any]
    inputs: Callable[[torch.Generator], tuple[torch.Tensor, ...]]
    #: What the error compares (e.g. sign-free for eigenvectors); the
    #: outputs as they are by default.
    invariant: Callable[[Any], Any] = lambda out: out


class Op(nn.Module):
    def __init__(self, fn: Callable[..., Any]):
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> Any:
        return self.fn(*args)


def randn(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[..., Any]:
    """Inputs: one standard normal tensor of ``shape``."""
    return lambda g: (torch.randn(*shape, generator=g, dtype=dtype),)


def measure_ops(cases: Sequence[OpCase], section: str, clients: dict[int, Any],
                threads: Sequence[int], args: Any, h: Any) -> list[list[str]]:
    """The rows of ``cases`` (columns :data:`HEADERS`), then one geomean row
    per thread count."""
    rows: list[list[str]] = []
    ratios: dict[int, list[float]] = {t: [] for t in threads}
    run_ratios: dict[int, list[float]] = {t: [] for t in threads}
    for case in cases:
        h.log(f"{section}: {case.name}")
        module = Op(case.fn).eval()
        inputs = case.inputs(torch.Generator().manual_seed(0))
        builds = h.kiln_builds(clients, module, inputs, f"{section} {case.name}")
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
    return rows
