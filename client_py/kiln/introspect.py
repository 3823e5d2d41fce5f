"""``kiln.get_mlir``: the module at every stage of Kiln's pipeline.

    kiln.get_mlir(compiled)                      # {"aten": ..., "linalg": ..., "asm": ...}
    kiln.get_mlir(compiled, stage="aten")        # one stage, as text
    y = compiled(x); kiln.get_mlir(y)            # a tensor a compiled model returned
    kiln.get_mlir(r)                             # r pending on kiln.device(): "aten" text
    kiln.get_mlir(model, example_inputs=(x,), client=client)   # export + compile first

The daemon records the stages when ``CompileOptions.dump_stages`` is set.
For a CompiledModel compiled without it, the daemon records them once for the
same executable (dump_stages is not part of the compile key, so no second
executable is made); the stage texts are read from the daemon's blob store.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import torch

from kiln.compiled import CompiledModel, producer_of
from kiln.errors import InvalidArgumentError, KilnError
from kiln.export import serialize_model
from kiln.lazy_tensor import KilnTensor, compile_pending
from kiln.session import Session
from kiln.v1 import graph_pb2

__all__ = ["get_mlir", "STAGES"]

#: The pipeline stages, in order: the ATen dialect after import, linalg on
#: tensors, the LLVM dialect, LLVM IR and the target assembly.
STAGES = ("aten", "linalg", "llvm-dialect", "llvm-ir", "asm")


def _compile_model(model: Any, example_inputs: Any, session: Session | None,
                   target: str, options: Mapping[str, Any] | None) -> CompiledModel:
    if session is None:
        session = Session(os.environ.get("KILN_ADDRESS", "localhost:50051"))
    opts = dict(options or {})
    opts["dump_stages"] = True
    if isinstance(model, graph_pb2.Graph):
        return session.compile_graph(model, target=target, options=opts)
    if isinstance(model, torch.nn.Module) and not isinstance(model, torch.fx.GraphModule):
        if example_inputs is None:
            raise InvalidArgumentError(
                f"get_mlir got an nn.Module ({type(model).__name__}) without example inputs",
                hint="pass example_inputs=(x, ...) to export it with")
        args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
        model = torch.export.export(model, args)
    serialized, out_spec, in_spec = serialize_model(model)
    return session.compile_serialized(serialized, target=target, options=opts,
                                      out_spec=out_spec, in_spec=in_spec)


def _pending_module(tensor: KilnTensor, stage: str) -> str:
    """The module of everything a kiln device tensor still waits for."""
    compiled = compile_pending([tensor])
    if compiled is None:
        raise InvalidArgumentError(
            f"this {tensor.device} tensor's value is computed already, so no graph produces "
            "it any more", hint="get_mlir shows pending work: ask before .cpu(), .item() "
                                "or printing")
    stages = compiled.stage_dumps()
    if stage not in stages:
        raise KilnError(f"the daemon returned no '{stage}' stage (it returned: "
                        f"{', '.join(stages) or 'none'})")
    return stages[stage]


def get_mlir(obj: Any, stage: str | None = None, *, example_inputs: Any = None,
             client: Session | None = None, target: str = "cpu",
             options: Mapping[str, Any] | None = None) -> dict[str, str] | str:
    """The compiled graph's module after each pipeline stage.

    Args:
        obj: a :class:`kiln.CompiledModel`; a tensor one returned; a pending
            tensor on a Kiln device (:func:`kiln.device`: the module of all
            that produces it, at ``stage`` "aten" unless told); or something
            to compile first: an ``nn.Module`` (with ``example_inputs``), a
            ``torch.export.ExportedProgram``, an ``fx.GraphModule`` or a
            ``kiln.v1.Graph``.
        stage: one of :data:`STAGES` for that stage's text; None for a dict of
            every stage in pipeline order.
        example_inputs: inputs to export an ``nn.Module`` with.
        client: the daemon (a :class:`kiln.Client`) to compile on when ``obj``
            is not compiled yet (default: ``$KILN_ADDRESS`` or localhost:50051).
        target, options: how to compile such an ``obj``.

    Raises:
        ValueError: ``stage`` is not a pipeline stage.
        KilnError: ``obj`` is a tensor no CompiledModel returned, or the daemon
            failed (its typed subclasses).
    """
    if stage is not None and stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; stages are {', '.join(STAGES)}")
    if isinstance(obj, CompiledModel):
        model = obj
    elif isinstance(obj, KilnTensor):
        return _pending_module(obj, stage or "aten")
    elif isinstance(obj, torch.Tensor):
        producer = producer_of(obj)
        if producer is None:
            raise KilnError("this tensor was not returned by a Kiln-compiled model, so it "
                            "has no compiled graph",
                            hint="pass the CompiledModel, or the module with example_inputs")
        model = producer
    else:
        model = _compile_model(obj, example_inputs, client, target, options)
    stages = model.stage_dumps()
    if stage is None:
        return stages
    if stage not in stages:
        raise KilnError(f"the daemon returned no '{stage}' stage (it returned: "
                        f"{', '.join(stages) or 'none'})")
    return stages[stage]
