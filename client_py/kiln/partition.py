"""Running a partitioned model: target segments through Execute, CPU
segments op by op in this process with :mod:`kiln.reference` (the client's
own libtorch), passing tensors between them by value name. Where the split
comes from, and why, is :mod:`kiln.placement`.
"""

from __future__ import annotations

import time
import weakref
from typing import Mapping, Sequence

import torch

from kiln.compiled import CompiledModel
from kiln.counters import merge_counters
from kiln.errors import InvalidArgumentError
from kiln.reference import run_nodes
from kiln.rng import fresh_seed
from kiln.session import Session
from kiln.tensors import PROTO_TO_DTYPE, tensor_from_bytes
from kiln.v1 import compiler_pb2, graph_pb2, placement_pb2

__all__ = ["PartitionRunner", "run_partitioned", "segment_models"]


def segment_models(session: Session, model: CompiledModel) -> list[CompiledModel | None]:
    """One CompiledModel per target segment (None for CPU segments): the
    segment's sub-graph as the daemon compiled it, bound to its executable
    (so ``kiln.get_mlir`` of a tensor a segment produced shows that
    segment)."""
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
        held = model.parameters
        weights = {a.name: held[a.name] for a in s.manifest.parameters if a.name in held}
        # Its own request, so that it can be compiled again alone.
        request = compiler_pb2.CompileRequest(graph=graph, target=model.target,
                                              options=model.options)
        models.append(CompiledModel(session, response, graph, weights, {}, request=request))
    return models


def _stored_parameter(session: Session, model: CompiledModel, name: str) -> torch.Tensor:
    """A parameter a CPU segment reads that this process holds no tensor for
    (a TorchScript compile, a raw Graph): read once from the daemon's store
    and kept on the model."""
    param = next((p for p in model.graph.parameters if p.value.name == name), None)
    if param is None:
        raise InvalidArgumentError(f"a CPU segment reads '{name}', which is neither a graph "
                                   "input, a parameter nor an earlier segment's output",
                                   context={"graph": model.graph.name})
    dtype = PROTO_TO_DTYPE[param.value.type.dtype]
    tensor = tensor_from_bytes(session.blobs.read(param.digest), dtype, param.value.type.shape)
    model.hold_parameter(name, tensor)
    return tensor


class PartitionRunner:
    """Runs a partitioned model (a CompiledModel's ``runner``): its target
    segments' executables (bound once, as CompiledModels) and its CPU
    segments with this process's PyTorch."""

    def __init__(self, session: Session):
        self._session = session
        # Per model object (two models of one architecture share a compile
        # key, not their weights), and only while the model lives.
        self._segments: weakref.WeakKeyDictionary[CompiledModel, list[CompiledModel | None]] = \
            weakref.WeakKeyDictionary()

    def __call__(self, model: CompiledModel, inputs: Sequence[torch.Tensor],
                 parameters: Mapping[str, torch.Tensor] | None = None) -> list[torch.Tensor]:
        return run_partitioned(self._session, model, self.segments(model), inputs, parameters)

    def segments(self, model: CompiledModel) -> list[CompiledModel | None]:
        """The segment models of ``model`` (None for CPU segments)."""
        segments = self._segments.get(model)
        if segments is None:
            segments = segment_models(self._session, model)
            self._segments[model] = segments
        return segments


def run_partitioned(session: Session, model: CompiledModel,
                    segments: Sequence[CompiledModel | None], inputs: Sequence[torch.Tensor],
                    parameters: Mapping[str, torch.Tensor] | None = None) -> list[torch.Tensor]:
    """Runs a partitioned model: ``inputs`` in ``model.graph.inputs`` order,
    ``parameters`` (name -> tensor) overriding the compiled weights."""
    graph = model.graph
    expected = model.call_inputs
    if len(inputs) != len(expected):
        raise InvalidArgumentError(f"the graph takes {len(expected)} inputs, got "
                                   f"{len(inputs)}", context={"graph": graph.name})
    weights = dict(model.parameters)
    if parameters:
        weights.update(parameters)
    values: dict[str, torch.Tensor] = {v.name: t for v, t in zip(expected, inputs)}
    if model.seed_input is not None:
        # The CPU segments' random nodes; each target segment draws its own.
        values[model.seed_input] = fresh_seed()
    wall0 = time.perf_counter()
    totals: dict[str, float] = {}
    counters = []
    cpu_seconds = 0.0
    for s, segment_model in zip(model.placement.message.segments, segments):
        if segment_model is None:
            t0 = time.perf_counter()
            for name in s.inputs:
                if name not in values:
                    values[name] = weights.get(name)
                    if values[name] is None:
                        values[name] = _stored_parameter(session, model, name)
            run_nodes(graph, list(s.nodes), values)
            cpu_seconds += time.perf_counter() - t0
            continue
        manifest = segment_model.manifest
        seg_weights = {a.name: weights[a.name] for a in manifest.parameters if a.name in weights}
        outs = segment_model.run([values[a.name] for a in manifest.inputs
                                  if a.name != segment_model.seed_input],
                                 parameters=seg_weights or None)
        for arg, tensor in zip(manifest.outputs, outs):
            values[arg.name] = tensor
        for key, secs in segment_model.last_timings.items():
            totals[key] = totals.get(key, 0.0) + secs
        counters.append(segment_model.last_counters)
        model.last_device_id = segment_model.last_device_id
    for name in graph.outputs:
        if name not in values and name in weights:
            values[name] = weights[name]
    totals["cpu"] = cpu_seconds
    totals["wall"] = time.perf_counter() - wall0
    model.last_timings = totals
    model.last_counters = merge_counters(counters)
    return [values[name] for name in graph.outputs]
