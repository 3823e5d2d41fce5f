"""The op report: per-layer cost of a compiled graph, as the daemon computed it.

Every compile returns a ``kiln.v1.OpReport`` (an analysis of the ATen-level
module, before any lowering); :attr:`kiln.CompiledModel.op_report` wraps it in
:class:`OpReport`, a typed, iterable view that prints as a table::

    compiled = client.compile(torch.export.export(model, (x,)))
    print(compiled.op_report)               # one row per graph node + total
    compiled.op_report.totals.macs          # multiply-accumulates of the graph
    compiled.op_report["addmm"].parameter_bytes

What each number means is defined in proto/kiln/v1/executable.proto
(``OpReportLayer``, ``OpCostKind``).
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from kiln.text_table import format_table
from kiln.v1 import executable_pb2

__all__ = ["LayerCost", "OpReport", "format_count"]

_KINDS = {
    executable_pb2.OP_COST_KIND_UNSPECIFIED: "-",
    executable_pb2.OP_COST_KIND_CONTRACTION: "contraction",
    executable_pb2.OP_COST_KIND_ELEMENTWISE: "elementwise",
    executable_pb2.OP_COST_KIND_REDUCTION: "reduction",
    executable_pb2.OP_COST_KIND_WINDOW: "window",
    executable_pb2.OP_COST_KIND_DATA_MOVEMENT: "data-movement",
}


@dataclasses.dataclass(frozen=True)
class LayerCost:
    """One graph node's cost (or, for :attr:`OpReport.totals`, the sums)."""

    name: str
    """The node's first output value name."""
    op: str
    """The node's ATen op, e.g. ``aten.addmm.default``."""
    dialect_ops: str
    """The aten dialect op(s) it imported as, joined with ``+``."""
    kind: str
    """Cost model: contraction, elementwise, reduction, window,
    data-movement, or ``-`` (bytes only)."""
    macs: int
    flops: int
    parameter_bytes: int
    activation_in_bytes: int
    activation_out_bytes: int
    bytes_read: int
    bytes_written: int
    unit: str = ""
    """What runs it once compiled: the kernel library (``onednn``; ``aie``,
    the acap target's AI Engine array), ``generated`` (Kiln's own code; on
    acap the host part), or empty (not recorded, or mixed in a sum)."""

    @classmethod
    def from_proto(cls, msg: executable_pb2.OpReportLayer) -> "LayerCost":
        return cls(name=msg.name, op=msg.op, dialect_ops=msg.dialect_ops,
                   kind=_KINDS.get(msg.kind, "-"), macs=msg.macs, flops=msg.flops,
                   parameter_bytes=msg.parameter_bytes,
                   activation_in_bytes=msg.activation_in_bytes,
                   activation_out_bytes=msg.activation_out_bytes,
                   bytes_read=msg.bytes_read, bytes_written=msg.bytes_written,
                   unit=msg.unit)


def format_count(n: int) -> str:
    """6912 -> '6.91K', 1_500_000 -> '1.50M'; exact below 1000."""
    if abs(n) < 1000:
        return str(n)
    value = float(n)
    for unit in ("K", "M", "G", "T", "P"):
        value /= 1000
        if abs(value) < 1000 or unit == "P":
            return f"{value:.2f}{unit}"
    raise AssertionError("unreachable")


def _format_bytes(n: int) -> str:
    from kiln.units import format_bytes
    return format_bytes(n)


class OpReport:
    """The per-layer costs of a compiled graph, plus totals.

    Iterating yields :class:`LayerCost` rows in graph order; ``report[name]``
    finds a layer by its value name (``report[i]`` by position). ``str()`` is
    a readable table; :meth:`table` with ``exact=True`` prints exact numbers.
    """

    def __init__(self, proto: executable_pb2.OpReport):
        self.proto = proto
        self.layers: tuple[LayerCost, ...] = tuple(LayerCost.from_proto(l) for l in proto.layers)
        self.totals: LayerCost = LayerCost.from_proto(proto.totals)

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self) -> Iterator[LayerCost]:
        return iter(self.layers)

    def __bool__(self) -> bool:
        return bool(self.layers)

    def __getitem__(self, key: int | str) -> LayerCost:
        if isinstance(key, int):
            return self.layers[key]
        for layer in self.layers:
            if layer.name == key:
                return layer
        raise KeyError(f"no layer named {key!r} (layers: "
                       f"{', '.join(l.name for l in self.layers[:8])}"
                       f"{', ...' if len(self.layers) > 8 else ''})")

    def by_op(self) -> dict[str, LayerCost]:
        """Sums per ATen op (e.g. every ``aten.addmm.default`` together), in
        order of first appearance; ``name`` holds the layer count."""
        groups: dict[str, list[LayerCost]] = {}
        for layer in self.layers:
            groups.setdefault(layer.op, []).append(layer)
        return {op: LayerCost(
            name=str(len(ls)), op=op, dialect_ops=ls[0].dialect_ops, kind=ls[0].kind,
            unit=ls[0].unit if all(l.unit == ls[0].unit for l in ls) else "",
            **{f: sum(getattr(l, f) for l in ls) for f in _NUMBERS})
            for op, ls in groups.items()}

    def units(self) -> dict[str, list[str]]:
        """Layer names by what runs them (see :attr:`LayerCost.unit`), in
        graph order."""
        found: dict[str, list[str]] = {}
        for layer in self.layers:
            found.setdefault(layer.unit, []).append(layer.name)
        return found

    def table(self, exact: bool = False) -> str:
        """One row per layer and a total row. Counts read as 6.91K / 1.50M and
        bytes as KiB/MiB unless ``exact``."""
        count = str if exact else format_count
        size = str if exact else _format_bytes
        headers = ("layer", "op", "kind", "unit", "MACs", "FLOPs", "params", "act in",
                   "act out", "read", "written")

        def row(l: LayerCost) -> list[str]:
            return [l.name, l.op, l.kind, l.unit or "-", count(l.macs), count(l.flops),
                    size(l.parameter_bytes), size(l.activation_in_bytes),
                    size(l.activation_out_bytes), size(l.bytes_read), size(l.bytes_written)]

        total = row(self.totals)
        n = len(self.layers)
        total[:4] = ["total", f"{n} layer{'' if n == 1 else 's'}", "", ""]
        # Names left-aligned, numbers right-aligned.
        return format_table(headers, (row(l) for l in self.layers), right_from=4, footer=total)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        t = self.totals
        return (f"OpReport({len(self.layers)} layers, macs={t.macs}, flops={t.flops}, "
                f"parameter_bytes={t.parameter_bytes})")


_NUMBERS = ("macs", "flops", "parameter_bytes", "activation_in_bytes",
            "activation_out_bytes", "bytes_read", "bytes_written")
