"""Placement: where each op of a compiled graph runs, and running a partition.

When a target cannot compile some ops and the compile asked for
``fallback="cpu"``, the daemon partitions the graph into *segments*: runs
of ops it compiled for the target (each its own executable) and runs of ops
the host CPU executes with PyTorch. :class:`PlacementReport` describes that
split (every node, where it runs and why); :func:`run_partitioned` runs a
partitioned model: target segments through ``Executor.Execute``, CPU
segments op by op in this process with :mod:`kiln.reference` (the client's
own libtorch), passing tensors between them by value name.

Nothing falls back silently: compiling a partitioned graph logs the
placement summary as a WARNING on the ``kiln.placement`` logger.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import torch

from kiln.errors import InvalidArgumentError
from kiln.reference import run_nodes
from kiln.tensors import PROTO_TO_DTYPE, tensor_from_bytes
from kiln.v1 import compiler_pb2, graph_pb2, placement_pb2

if TYPE_CHECKING:
    from kiln.client import Client, CompiledModel

__all__ = ["FALLBACKS", "NodePlacement", "PlacementReport", "placement_policy",
           "run_partitioned"]

log = logging.getLogger("kiln.placement")

#: The ``fallback`` values ``Client.compile`` takes.
FALLBACKS = ("error", "cpu")
#: How many CPU nodes a summary names before "and N more".
_NAMED_NODES = 5


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
    """Where one graph node runs: ``"target"`` or ``"cpu"``, and why."""

    node: int
    name: str
    op: str
    placement: str
    reason: str
    segment: int


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
        return [NodePlacement(n.node, n.name, n.op, _where(n.placement), n.reason, n.segment)
                for n in self.message.nodes]

    @property
    def cpu_nodes(self) -> list[NodePlacement]:
        return [n for n in self.nodes if n.placement == "cpu"]

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


def segment_models(client: "Client", model: "CompiledModel") -> list["CompiledModel | None"]:
    """One CompiledModel per target segment (None for CPU segments): the
    segment's sub-graph as the daemon compiled it, bound to its executable
    (so ``kiln.get_mlir`` of a tensor a segment produced shows that
    segment)."""
    from kiln.client import CompiledModel
    params = {p.value.name: p for p in model.graph.parameters}
    models: list[CompiledModel | None] = []
    for i, s in enumerate(model.placement.message.segments):
        if s.placement != placement_pb2.PLACEMENT_TARGET:
            models.append(None)
            continue
        response = compiler_pb2.CompileResponse(
            executable=s.executable, manifest=s.manifest, cache_hit=s.cache_hit,
            compile_key=s.compile_key)
        graph = graph_pb2.Graph(
            name=f"{model.graph.name}.segment{i}",
            parameters=[params[a.name] for a in s.manifest.parameters],
            inputs=[graph_pb2.Value(name=a.name, type=a.type) for a in s.manifest.inputs],
            nodes=[model.graph.nodes[n] for n in s.nodes], outputs=list(s.outputs))
        weights = {a.name: model._parameters[a.name] for a in s.manifest.parameters
                   if a.name in model._parameters}
        segment = CompiledModel(client, response, graph, weights, {})
        segment.options.CopyFrom(model.options)
        models.append(segment)
    return models


def _stored_parameter(client: "Client", model: "CompiledModel", name: str) -> torch.Tensor:
    """A parameter a CPU segment reads that this process holds no tensor for
    (a TorchScript compile, a raw Graph): read once from the daemon's store
    and kept on the model."""
    param = next((p for p in model.graph.parameters if p.value.name == name), None)
    if param is None:
        raise InvalidArgumentError(f"a CPU segment reads '{name}', which is neither a graph "
                                   "input, a parameter nor an earlier segment's output",
                                   context={"graph": model.graph.name})
    dtype = PROTO_TO_DTYPE[param.value.type.dtype]
    tensor = tensor_from_bytes(client.blobs.read(param.digest), dtype, param.value.type.shape)
    model._parameters[name] = tensor
    return tensor


def run_partitioned(client: "Client", model: "CompiledModel", inputs: Sequence[torch.Tensor],
                    parameters: Mapping[str, torch.Tensor] | None = None) -> list[torch.Tensor]:
    """Runs a partitioned model: ``inputs`` in ``model.graph.inputs`` order,
    ``parameters`` (name -> tensor) overriding the compiled weights."""
    graph = model.graph
    if len(inputs) != len(graph.inputs):
        raise InvalidArgumentError(f"the graph takes {len(graph.inputs)} inputs, got "
                                   f"{len(inputs)}", context={"graph": graph.name})
    weights = dict(model._parameters)
    if parameters:
        weights.update(parameters)
    values: dict[str, torch.Tensor] = {v.name: t for v, t in zip(graph.inputs, inputs)}
    wall0 = time.perf_counter()
    totals: dict[str, float] = {}
    instructions = 0
    cpu_seconds = 0.0
    for s, segment_model in zip(model.placement.message.segments, model._segment_models()):
        if segment_model is None:
            t0 = time.perf_counter()
            for name in s.inputs:
                if name not in values:
                    values[name] = weights.get(name)
                    if values[name] is None:
                        values[name] = _stored_parameter(client, model, name)
            run_nodes(graph, list(s.nodes), values)
            cpu_seconds += time.perf_counter() - t0
            continue
        manifest = segment_model.manifest
        seg_weights = {a.name: weights[a.name] for a in manifest.parameters if a.name in weights}
        outs = client._execute(segment_model, [values[a.name] for a in manifest.inputs],
                               parameters=seg_weights or None)
        for arg, tensor in zip(manifest.outputs, outs):
            values[arg.name] = tensor
        for key, secs in segment_model.last_timings.items():
            totals[key] = totals.get(key, 0.0) + secs
        instructions += segment_model.last_counters.get("instructions", 0)
        model.last_device_id = segment_model.last_device_id
    for name in graph.outputs:
        if name not in values and name in weights:
            values[name] = weights[name]
    totals["cpu"] = cpu_seconds
    totals["wall"] = time.perf_counter() - wall0
    model.last_timings = totals
    model.last_counters = {"instructions": instructions}
    return [values[name] for name in graph.outputs]
