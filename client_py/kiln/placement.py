"""Placement: where each op of a compiled graph runs.

When a target cannot compile some ops and the compile asked for
``fallback="cpu"``, the daemon partitions the graph into *segments*: runs
of ops it compiled for the target (each its own executable) and runs of ops
the host CPU executes with PyTorch. :class:`PlacementReport` describes that
split (every node, where it runs and why); :mod:`kiln.partition` runs it.
Each node also says what runs it (:attr:`NodePlacement.unit`): on the target
a kernel library ("onednn", or "aie": the acap target's AI Engine array) or
"generated" code for the target's processor (on acap the host part, on the
Versal's Arm cores), or the target's name (mdla); "pytorch" on the CPU.

Nothing falls back silently: compiling a partitioned graph logs the
placement summary as a WARNING on the ``kiln.placement`` logger.
"""

from __future__ import annotations

import dataclasses
import logging

from kiln.v1 import placement_pb2

__all__ = ["FALLBACKS", "NodePlacement", "PlacementReport", "placement_policy",
           "log_placement"]

log = logging.getLogger("kiln.placement")

#: The ``fallback`` values ``Client.compile`` takes.
FALLBACKS = ("error", "cpu")
#: How many CPU nodes a summary names before "and N more".
_NAMED_NODES = 5
#: How many nodes the table names per unit before "and N more".
_NAMED_UNIT_NODES = 12


def placement_policy(fallback: str = "error", max_fallback_fraction: float | None = None
                     ) -> placement_pb2.PlacementPolicy:
    """The PlacementPolicy message for ``Client.compile``'s arguments."""
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)}; got {fallback!r}")
    policy = placement_pb2.PlacementPolicy(
        fallback=(placement_pb2.FALLBACK_POLICY_CPU if fallback == "cpu"
                  else placement_pb2.FALLBACK_POLICY_ERROR))
    if max_fallback_fraction is not None:
        if fallback != "cpu":
            raise ValueError("max_fallback_fraction needs fallback='cpu'")
        if not 0.0 <= float(max_fallback_fraction) <= 1.0:
            raise ValueError(f"max_fallback_fraction must be in 0..1, got "
                             f"{max_fallback_fraction}")
        policy.max_fallback_fraction = float(max_fallback_fraction)
    return policy


@dataclasses.dataclass(frozen=True)
class NodePlacement:
    """Where one graph node runs: ``"target"`` or ``"cpu"``, and why; and
    what runs it there (``unit``; empty for a node that does not run or
    compiles to no code of its own, and from daemons older than it)."""

    node: int
    name: str
    op: str
    placement: str
    reason: str
    segment: int
    unit: str = ""


class PlacementReport:
    """The daemon's placement of a compiled graph (a ``kiln.v1.PlacementReport``).

    ``str(report)`` is a table of the segments and the CPU nodes with their
    reasons; :meth:`summary` is one line.
    """

    def __init__(self, message: placement_pb2.PlacementReport):
        self.message = message

    @property
    def target(self) -> str:
        return self.message.target

    @property
    def nodes(self) -> list[NodePlacement]:
        return [NodePlacement(n.node, n.name, n.op, _where(n.placement), n.reason, n.segment,
                              n.unit)
                for n in self.message.nodes]

    @property
    def cpu_nodes(self) -> list[NodePlacement]:
        return [n for n in self.nodes if n.placement == "cpu"]

    def units(self) -> dict[str, list[str]]:
        """Node names by what runs them (see :attr:`NodePlacement.unit`), in
        graph order; nodes without a unit are left out."""
        found: dict[str, list[str]] = {}
        for n in self.message.nodes:
            if n.unit:
                found.setdefault(n.unit, []).append(n.name)
        return found

    @property
    def segments(self) -> list[placement_pb2.Segment]:
        return list(self.message.segments)

    @property
    def fallback_fraction(self) -> float:
        return self.message.fallback_fraction

    @property
    def partitioned(self) -> bool:
        """True when some nodes run on the CPU."""
        return any(s.placement == placement_pb2.PLACEMENT_CPU for s in self.message.segments)

    def summary(self) -> str:
        m = self.message
        total = len(m.nodes)
        if not self.partitioned:
            return f"all {total} ops run on target {m.target!r}"
        named = [f"node {n.node} '{n.name}' ({n.op}): {n.reason}"
                 for n in self.cpu_nodes[:_NAMED_NODES]]
        more = m.cpu_nodes - len(named)
        tail = f"; and {more} more" if more > 0 else ""
        return (f"{m.cpu_nodes} of {total} ops ({m.fallback_fraction:.1%}) run on the host "
                f"CPU with PyTorch instead of target {m.target!r}, in "
                f"{len(m.segments)} segments: " + "; ".join(named) + tail)

    def __str__(self) -> str:
        lines = [f"placement on target {self.target!r}: {self.message.target_nodes} target "
                 f"ops, {self.message.cpu_nodes} CPU ops "
                 f"(fallback fraction {self.fallback_fraction:.3f})"]
        for i, s in enumerate(self.message.segments):
            where = _where(s.placement)
            exe = f" executable {s.executable.hash[:12]}" if s.executable.hash else ""
            lines.append(f"  segment {i}: {where:6} {len(s.nodes):4} ops{exe}  "
                         f"reads {', '.join(s.inputs) or '-'}  "
                         f"-> {', '.join(s.outputs) or '-'}")
        for n in self.cpu_nodes:
            lines.append(f"  cpu  node {n.node} '{n.name}' ({n.op}): {n.reason}")
        for unit, names in self.units().items():
            more = len(names) - _NAMED_UNIT_NODES
            tail = f", and {more} more" if more > 0 else ""
            lines.append(f"  unit {unit:10} {len(names):4} ops: "
                         f"{', '.join(names[:_NAMED_UNIT_NODES])}{tail}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"PlacementReport({self.summary()})"


def _where(placement: int) -> str:
    return {placement_pb2.PLACEMENT_TARGET: "target",
            placement_pb2.PLACEMENT_CPU: "cpu"}.get(placement, "unspecified")


def log_placement(graph_name: str, report: PlacementReport) -> None:
    """WARNING when ops fell back to the CPU, DEBUG otherwise."""
    if report.partitioned:
        log.warning("kiln: graph %r: %s", graph_name or "<unnamed>", report.summary())
    else:
        log.debug("kiln: graph %r: %s", graph_name or "<unnamed>", report.summary())
