"""verify=True: check a compiled graph against the reference, and bisect.

After a verified call, every output of the executable is compared with what
:func:`kiln.reference.run_reference` computes for the same graph, inputs and
weights. When an output differs by more than :data:`TOLERANCES` allows, the
first node (in the graph's topological order) whose output diverges is found
by binary search over *probes*: prefixes of the graph (nodes ``0..k``) whose
outputs are the values at the cut after node ``k`` (node ``k``'s results and
every earlier value a later node reads), compiled for the same target and
options (through the daemon's compile cache) and run on the same inputs. A
probe whose cut matches the reference moves the search past ``k``; one that
diverges moves it to ``k`` or before. The node found read only matching
values and produced a diverging one. The search takes ``ceil(log2(m + 1))``
probes, plus at most one for the culprit's own numbers, where ``m`` is the
index of the node producing the earliest diverging output.

The result is a :class:`kiln.errors.VerificationError` naming the node, its op,
the output and the error magnitudes, or, when everything matches, a
:class:`VerificationReport` kept in ``CompiledModel.last_verification``.

Tolerances, per dtype (``|actual - expected| <= atol + rtol * |expected|``
elementwise, NaN matching NaN; integers and booleans exactly):

=========  =======  =======
dtype      rtol     atol
=========  =======  =======
float64    1e-5     1e-8
float32    1e-3     1e-5
float16    1e-2     1e-3
bfloat16   5e-2     1e-2
integers   0        0
bool       0        0
=========  =======  =======

float32 uses the bar Kiln's real-model tests hold outputs to; float64 is
looser than its precision because Kiln evaluates transcendental functions
with float32-accurate polynomials.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Mapping, Sequence

import torch

from kiln.compiled import CompiledModel
from kiln.errors import InvalidArgumentError, KilnError, VerificationError
from kiln.partition import PartitionRunner
from kiln.reference import node_label, run_reference
from kiln.rng import random_nodes
from kiln.session import Session
from kiln.v1 import graph_pb2

__all__ = ["TOLERANCES", "ValueComparison", "Probe", "VerificationReport",
           "tolerance", "compare", "verify_execution"]

#: (rtol, atol) per dtype; dtypes not listed compare exactly.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-5, 1e-8),
    torch.float32: (1e-3, 1e-5),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (5e-2, 1e-2),
}


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for values of ``dtype``."""
    return TOLERANCES.get(dtype, (0.0, 0.0))


@dataclasses.dataclass(frozen=True)
class ValueComparison:
    """One value of the executable next to the reference's."""

    name: str
    ok: bool
    max_abs_error: float
    max_rel_error: float
    rtol: float
    atol: float
    #: Where the largest error is (a flat index), -1 when there is none.
    worst_index: int = -1
    #: Why it failed beyond the numbers (a shape or dtype mismatch), or "".
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Probe:
    """One compiled prefix the bisection ran."""

    index: int           #: node index of the probe point
    node: str            #: node k's first output name
    op: str
    diverged: bool
    max_abs_error: float
    cache_hit: bool
    seconds: float       #: compile + run, client-side


@dataclasses.dataclass
class VerificationReport:
    """What one verified call found."""

    passed: bool
    outputs: list[ValueComparison]
    #: Probes the bisection compiled and ran (empty when the outputs matched).
    probes: list[Probe] = dataclasses.field(default_factory=list)
    #: The first diverging node's index, first output name and op ("" / -1 if none).
    index: int = -1
    node: str = ""
    op: str = ""
    reference_seconds: float = 0.0
    seconds: float = 0.0

    @property
    def compiles(self) -> int:
        """Probe compiles the daemon actually ran (cache misses)."""
        return sum(1 for p in self.probes if not p.cache_hit)


def compare(name: str, actual: torch.Tensor, expected: torch.Tensor) -> ValueComparison:
    """Compares ``actual`` with the reference ``expected`` at ``expected``'s tolerance."""
    rtol, atol = tolerance(expected.dtype)
    if actual.dtype != expected.dtype or tuple(actual.shape) != tuple(expected.shape):
        return ValueComparison(name, False, math.inf, math.inf, rtol, atol, note=(
            f"got {actual.dtype} {list(actual.shape)}, the reference has "
            f"{expected.dtype} {list(expected.shape)}"))
    if expected.numel() == 0:
        return ValueComparison(name, True, 0.0, 0.0, rtol, atol)
    a = actual.detach().reshape(-1).to(torch.float64)
    e = expected.detach().reshape(-1).to(torch.float64)
    same = (a == e) | (torch.isnan(a) & torch.isnan(e))
    diff = torch.where(same, torch.zeros_like(a), (a - e).abs())
    diff = torch.nan_to_num(diff, nan=math.inf)
    bound = atol + rtol * e.abs()
    ok = bool((same | (diff <= bound)).all())
    worst = int(diff.argmax())
    max_abs = float(diff[worst])
    rel = diff / e.abs().clamp_min(torch.finfo(torch.float64).tiny)
    rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
    return ValueComparison(name, ok, max_abs, float(rel.max()), rtol, atol,
                           worst_index=worst if max_abs > 0 else -1)


def _producers(graph: graph_pb2.Graph) -> dict[str, int]:
    """Value name -> index of the node that defines it."""
    return {out.name: i for i, node in enumerate(graph.nodes) for out in node.outputs}


def _probe_graph(graph: graph_pb2.Graph, k: int, outputs: Sequence[str]) -> graph_pb2.Graph:
    """Nodes 0..k of ``graph``, returning ``outputs``."""
    probe = graph_pb2.Graph()
    probe.CopyFrom(graph)
    del probe.nodes[k + 1:]
    del probe.outputs[:]
    probe.outputs.extend(outputs)
    probe.name = f"{graph.name or 'graph'}.verify@{k}"
    return probe


class _Bisection:
    """Binary search over cuts of the graph.

    The probe at ``k`` compiles nodes ``0..k`` and returns the *cut*: every
    value those nodes define that a later node reads or the graph returns.
    When the whole cut matches the reference, the rest of the graph gets
    correct inputs, so the first divergence lies after ``k``; when some value
    of it diverges, at or before ``k``. The search ends at ``lo = hi - 1``:
    every value node ``hi`` reads matched (cut ``lo``) and a value of cut
    ``hi`` did not, so node ``hi`` itself computes a wrong result.
    """

    def __init__(self, session: Session, compiled: CompiledModel, graph: graph_pb2.Graph,
                 inputs: Sequence[torch.Tensor], parameters: Mapping[str, torch.Tensor],
                 reference: Mapping[str, torch.Tensor], options: Any):
        self.session = session
        self.compiled = compiled
        self.graph = graph
        self.inputs = list(inputs)
        self.parameters = dict(parameters)
        self.reference = reference
        self.options = options
        self.producers = _producers(graph)
        n = len(graph.nodes)
        # Value name -> index of the last node that reads it (n: returned).
        self.last_use: dict[str, int] = {}
        for i, node in enumerate(graph.nodes):
            for a in node.arguments:
                if a.WhichOneof("kind") == "value":
                    self.last_use[a.value] = i
        for name in graph.outputs:
            self.last_use[name] = n
        self.probes: list[Probe] = []
        #: node index -> comparisons of its cut, by value name
        self.seen: dict[int, dict[str, ValueComparison]] = {}

    def cut(self, k: int) -> list[str]:
        """Node k's results, then the other values of nodes 0..k still live after k."""
        names = [o.name for o in self.graph.nodes[k].outputs]
        for node in self.graph.nodes[:k]:
            for o in node.outputs:
                if self.last_use.get(o.name, -1) > k:
                    names.append(o.name)
        return names

    def probe(self, k: int) -> bool:
        """Compiles and runs nodes 0..k; True when a value of the cut diverges."""
        node = self.graph.nodes[k]
        names = self.cut(k)
        t0 = time.perf_counter()
        model = self.session.compile_graph(_probe_graph(self.graph, k, names),
                                           target=self.compiled.target,
                                           options=self.options, parameters=self.parameters,
                                           placement=self.compiled.placement_policy,
                                           runner=PartitionRunner(self.session))
        outs = model.run([self.inputs[i] for i in model.input_order])
        seconds = time.perf_counter() - t0
        cmps = {n: compare(n, t, self.reference[n]) for n, t in zip(names, outs)}
        self.seen[k] = cmps
        diverged = not all(c.ok for c in cmps.values())
        self.probes.append(Probe(k, names[0], node.op, diverged,
                                 max(c.max_abs_error for c in cmps.values()),
                                 model.cache_hit, seconds))
        return diverged

    def run(self, last: int) -> tuple[int, int]:
        """(lo, hi): node ``hi`` is the first to diverge, cut ``lo`` matched
        (-1: the graph's inputs), knowing the cut at ``last`` diverges."""
        lo, hi = -1, last
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.probe(mid):
                hi = mid
            else:
                lo = mid
        if hi not in self.seen:
            self.probe(hi)
        return lo, hi


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


def verify_execution(session: Session, compiled: CompiledModel,
                     inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor],
                     parameters: Mapping[str, torch.Tensor] | None = None,
                     options: Any = None) -> VerificationReport:
    """Checks one execution of ``compiled`` and bisects on a mismatch.

    Args:
        inputs: the runtime inputs in ``compiled.graph.inputs`` order.
        outputs: what the executable returned, in ``graph.outputs`` order.
        parameters: parameter name -> tensor (default: the compiled model's).
        options: the compile options, reused for every probe.

    Returns the report when every output matches; raises
    :class:`kiln.errors.VerificationError` naming the first diverging node
    otherwise.
    """
    t0 = time.perf_counter()
    graph = compiled.graph
    drawn = random_nodes(graph)
    if drawn:
        ops = sorted({graph.nodes[i].op for i in drawn})
        raise InvalidArgumentError(
            f"verify compares values with eager's, and this graph draws random numbers "
            f"({', '.join(ops)}), which follow Kiln's generator, not eager's "
            "(docs/architecture.md, \"Random numbers\")", context={"executable": compiled.digest})
    weights = dict(compiled.parameters if parameters is None else parameters)
    missing = [p.value.name for p in graph.parameters if p.value.name not in weights]
    if missing:
        raise KilnError(f"verify needs the parameter tensors to run the reference, and "
                        f"{missing[:5]} are unknown (compile a model, not a raw Graph, or "
                        "pass the parameters)", context={"executable": compiled.digest})
    reference = run_reference(graph, inputs, weights)
    ref_seconds = time.perf_counter() - t0
    cmps = [compare(n, t, reference[n]) for n, t in zip(graph.outputs, outputs)]
    report = VerificationReport(all(c.ok for c in cmps), cmps, reference_seconds=ref_seconds)
    if report.passed:
        report.seconds = time.perf_counter() - t0
        return report

    bad = [c for c in cmps if not c.ok]
    producers = _producers(graph)
    nodes_of_bad = [producers[c.name] for c in bad if c.name in producers]
    ctx = {"executable": compiled.digest, "target": compiled.target}
    if not nodes_of_bad:  # only inputs/parameters returned as they are diverged
        c = bad[0]
        report.seconds = time.perf_counter() - t0
        raise VerificationError(
            f"verify: output '{c.name}' is a graph input or parameter, returned unchanged, "
            f"yet differs from it by max abs error {_fmt(c.max_abs_error)}",
            output=c.name, max_abs_error=c.max_abs_error, max_rel_error=c.max_rel_error,
            report=report, context=ctx)
    bisection = _Bisection(session, compiled, graph, inputs, weights, reference, options)
    lo, k = bisection.run(min(nodes_of_bad))
    node = graph.nodes[k]
    cut = bisection.seen[k]
    results = [cut[o.name] for o in node.outputs if o.name in cut]
    worst = max([c for c in results if not c.ok] or [c for c in cut.values() if not c.ok]
                or results, key=lambda c: c.max_abs_error)
    report.probes, report.index, report.node, report.op = (
        bisection.probes, k, node.outputs[0].name, node.op)
    report.seconds = time.perf_counter() - t0
    if lo < 0:
        inputs_note = "it reads only graph inputs and parameters"
    else:
        inputs_note = "every value it reads matches the reference"
    diverging = ", ".join(f"'{c.name}' (max abs {_fmt(c.max_abs_error)})" for c in bad)
    message = (
        f"verify: the first diverging op is {node_label(k, node)}: its output "
        f"'{worst.name}' differs from the reference by max abs error "
        f"{_fmt(worst.max_abs_error)}, max rel error {_fmt(worst.max_rel_error)} "
        f"(tolerance rtol {worst.rtol:g}, atol {worst.atol:g}"
        + (f"; {worst.note}" if worst.note else "") + f"); {inputs_note}. "
        f"Diverging graph outputs: {diverging}. Bisected with {len(report.probes)} "
        f"probe(s) ({report.compiles} compiled, {len(report.probes) - report.compiles} "
        f"from cache) over {len(graph.nodes)} nodes in {report.seconds:.2f}s")
    raise VerificationError(message, node=report.node, op=node.op, index=k,
                            output=worst.name, max_abs_error=worst.max_abs_error,
                            max_rel_error=worst.max_rel_error, report=report, context=ctx)
