"""``kiln.get_mlir``: the module at every stage of Kiln's pipeline.

    kiln.get_mlir(compiled)                      # {"aten": ..., "linalg": ..., "asm": ...}
    kiln.get_mlir(compiled, stage="aten")        # one stage, as text
    y = compiled(x); kiln.get_mlir(y)            # a tensor a compiled model returned
    kiln.get_mlir(model, example_inputs=(x,), client=client)   # export + compile first

The daemon records the stages when ``CompileOptions.dump_stages`` is set. A
CompiledModel compiled without it is compiled again with it (same graph,
target and options; a separate cache entry, since options are part of the
compile key); the stage texts are read from the daemon's blob store.
"""

from __future__ import annotations

import os
import weakref
from typing import Any, Mapping

import torch

from kiln.client import Client, CompiledModel
from kiln.errors import KilnError

__all__ = ["get_mlir", "STAGES", "remember_outputs"]

#: The pipeline stages, in order: the ATen dialect after import, linalg on
#: tensors, the LLVM dialect, LLVM IR and the target assembly.
STAGES = ("aten", "linalg", "llvm-dialect", "llvm-ir", "asm")

# Tensors returned by CompiledModel calls: id -> (weak reference, model). Not
# a WeakKeyDictionary: its lookups compare tensors with ==, which is
# elementwise. An entry leaves when its tensor dies.
_PRODUCERS: dict[int, tuple[weakref.ref, CompiledModel]] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _PRODUCERS.get(key)
    if entry is not None and entry[0] is ref:
        del _PRODUCERS[key]


def remember_outputs(model: CompiledModel, outputs: Any) -> None:
    """Notes that ``outputs`` (tensors) came from ``model``, for get_mlir(tensor).
    Remembering an output never keeps it alive."""
    for t in outputs:
        if isinstance(t, torch.Tensor):
            key = id(t)
            try:
                ref = weakref.ref(t, lambda r, key=key: _forget(key, r))
            except TypeError:  # a tensor subclass without weak references
                continue
            _PRODUCERS[key] = (ref, model)


def _producer(t: torch.Tensor) -> CompiledModel | None:
    entry = _PRODUCERS.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def _with_stages(model: CompiledModel) -> CompiledModel:
    if model._response.stages:
        return model
    options = type(model.options)()
    options.CopyFrom(model.options)
    options.dump_stages = True
    return model._client.compile_graph(
        model.graph, target=model.target or "cpu", options=options,
        parameters=model._parameters, out_spec=model._out_spec, in_spec=model._in_spec)


def _compile_model(model: Any, example_inputs: Any, client: Client | None,
                   target: str, options: Mapping[str, Any] | None) -> CompiledModel:
    if client is None:
        client = Client(os.environ.get("KILN_ADDRESS", "localhost:50051"))
    opts = dict(options or {})
    opts["dump_stages"] = True
    if isinstance(model, torch.nn.Module) and not isinstance(model, torch.fx.GraphModule):
        if example_inputs is None:
            raise TypeError("get_mlir(module) needs example_inputs=(...) to export it")
        args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
        model = torch.export.export(model, args)
    return client.compile(model, target=target, options=opts)


def get_mlir(obj: Any, stage: str | None = None, *, example_inputs: Any = None,
             client: Client | None = None, target: str = "cpu",
             options: Mapping[str, Any] | None = None) -> dict[str, str] | str:
    """The compiled graph's module after each pipeline stage.

    Args:
        obj: a :class:`kiln.CompiledModel`; a tensor one returned; or something
            to compile first: an ``nn.Module`` (with ``example_inputs``), a
            ``torch.export.ExportedProgram``, an ``fx.GraphModule`` or a
            ``kiln.v1.Graph``.
        stage: one of :data:`STAGES` for that stage's text; None for a dict of
            every stage in pipeline order.
        example_inputs: inputs to export an ``nn.Module`` with.
        client: the daemon to compile on when ``obj`` is not compiled yet
            (default: ``$KILN_ADDRESS`` or localhost:50051).
        target, options: how to compile such an ``obj``.

    Raises:
        ValueError: ``stage`` is not a pipeline stage.
        KilnError: ``obj`` is a tensor no CompiledModel returned, or the daemon
            failed (its typed subclasses).
    """
    if stage is not None and stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; stages are {', '.join(STAGES)}")
    if isinstance(obj, CompiledModel):
        model = _with_stages(obj)
    elif isinstance(obj, torch.Tensor):
        producer = _producer(obj)
        if producer is None:
            raise KilnError("this tensor was not returned by a Kiln-compiled model, so it "
                            "has no compiled graph; pass the CompiledModel or the module")
        model = _with_stages(producer)
    else:
        model = _compile_model(obj, example_inputs, client, target, options)
    stages = model.stage_dumps()
    if stage is None:
        return stages
    if stage not in stages:
        raise KilnError(f"the daemon returned no '{stage}' stage (it returned: "
                        f"{', '.join(stages) or 'none'})")
    return stages[stage]
