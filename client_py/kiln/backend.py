"""kiln.backend: a torch.compile backend that compiles and runs on a Kiln daemon.

    model = torch.compile(model, backend=kiln.backend("localhost:50051"))

Inference only. Each Dynamo graph is lowered with AOTAutograd's inference
export (``aot_export_joint_simple(..., trace_joint=False)``) and the core-ATen
decompositions, serialised, compiled on the daemon and run there. No autograd
graph is recorded: outputs never require grad, even when inputs or weights do.

Example inputs that are ``torch.nn.Parameter`` become Graph.parameters: their
bytes are uploaded once (by digest) and stay resident on the device; every
other tensor (including buffers) is sent as a runtime input on each call.

Kiln needs static shapes. When Dynamo hands over a dynamic graph (it does after
it sees a second input shape), the backend specialises it per concrete input
signature at call time; the daemon's compile cache makes repeats cheap.

Errors are typed :mod:`kiln.errors` exceptions. With ``fallback="eager"`` a graph
that fails to compile or run is run eagerly instead, and a WARNING names the
graph and the reason; with the default ``fallback=None`` nothing falls back.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Sequence

import torch
import torch.fx

from kiln.client import Client, CompiledModel
from kiln.errors import KilnError, UnsupportedOpError
from kiln.graph import serialize_graph_module

__all__ = ["backend", "lower_to_core_aten"]

log = logging.getLogger("kiln.backend")


def lower_to_core_aten(gm: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor]
                       ) -> torch.fx.GraphModule:
    """Dynamo graph → flat core-ATen inference graph (one placeholder per input).

    Outputs are cloned first: AOTAutograd's inference export refuses outputs
    that alias inputs (``return x.t()``), and Kiln returns fresh tensors from
    the device anyway, so a returned view is a copy either way.
    """
    from torch._decomp import core_aten_decompositions
    from torch._functorch.aot_autograd import aot_export_joint_simple

    def cloned_outputs(*args):
        outputs = gm(*args)
        if isinstance(outputs, torch.Tensor):
            return outputs.clone()
        return type(outputs)(o.clone() if isinstance(o, torch.Tensor) else o
                             for o in outputs)

    with torch.no_grad():
        return aot_export_joint_simple(cloned_outputs, list(example_inputs),
                                       trace_joint=False,
                                       decompositions=core_aten_decompositions())


def _signature(args: Sequence[Any]) -> tuple:
    sig = []
    for a in args:
        if isinstance(a, torch.Tensor):
            sig.append(("t", tuple(a.shape), a.dtype, isinstance(a, torch.nn.Parameter)))
        elif isinstance(a, (int, float, bool, torch.SymInt)):
            sig.append(("s", int(a) if isinstance(a, torch.SymInt) else a))
        else:
            sig.append(("o", type(a).__name__))
    return tuple(sig)


class _Specialization:
    """One static-shape compile of a Dynamo graph."""

    def __init__(self, compiled: CompiledModel, tensor_positions: list[int],
                 param_positions: list[int], param_names: list[str], n_outputs: int):
        self.compiled = compiled
        self.tensor_positions = tensor_positions   # runtime inputs, in Graph.inputs order
        self.param_positions = param_positions
        self.param_names = param_names
        self.n_outputs = n_outputs


class _KilnCompiledGraph:
    """The callable torch.compile gets back for one Dynamo graph."""

    def __init__(self, client: Client, gm: torch.fx.GraphModule, target: str,
                 options: Any, fallback: str | None):
        self.client = client
        self.gm = gm
        self.target = target
        self.options = options
        self.fallback = fallback
        self.name = f"dynamo_graph_{id(gm):x}"
        self._specs: dict[tuple, _Specialization] = {}
        self._eager: set[tuple] = set()
        self._lock = threading.Lock()
        out = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
        self._out_container = type(out.args[0]) if isinstance(out.args[0], (tuple, list)) else None
        self._n_outputs = len(out.args[0]) if self._out_container else 1

    def _compile(self, args: Sequence[Any]) -> _Specialization:
        tensor_pos = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        scalars = {i: (int(a) if isinstance(a, torch.SymInt) else a)
                   for i, a in enumerate(args) if not isinstance(a, torch.Tensor)}
        for i, v in scalars.items():
            if not isinstance(v, (int, float, bool)):
                raise UnsupportedOpError(f"{self.name}: graph input {i} is a "
                                         f"{type(v).__name__}; Kiln takes tensors and ints")
        gm = self.gm

        def with_scalars(*tensors: torch.Tensor) -> Any:
            full: list[Any] = [None] * len(args)
            for pos, t in zip(tensor_pos, tensors):
                full[pos] = t
            for pos, v in scalars.items():
                full[pos] = v
            return gm(*full)

        tensors = [args[i] for i in tensor_pos]
        try:
            lowered = lower_to_core_aten(with_scalars, tensors)
        except KilnError:
            raise
        except Exception as e:  # AOTAutograd rejects what it cannot export
            raise UnsupportedOpError(f"{self.name}: AOTAutograd could not lower the graph "
                                     f"to core ATen: {type(e).__name__}: {e}") from None
        placeholders = [n for n in lowered.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(tensors):
            raise UnsupportedOpError(f"{self.name}: lowered graph has {len(placeholders)} "
                                     f"inputs, expected {len(tensors)}")
        params, param_pos, param_names, input_pos = {}, [], [], []
        for node, pos in zip(placeholders, tensor_pos):
            if isinstance(args[pos], torch.nn.Parameter):
                params[node.name] = args[pos]
                param_pos.append(pos)
                param_names.append(node.name)
            else:
                input_pos.append(pos)
        serialized = serialize_graph_module(lowered, parameters=params, name=self.name)
        compiled = self.client.compile_serialized(serialized, target=self.target,
                                                  options=self.options)
        n_out = len(serialized.graph.outputs)
        if n_out != self._n_outputs:
            raise UnsupportedOpError(f"{self.name}: the Dynamo graph returns {self._n_outputs} "
                                     f"values but its lowered form {n_out}; Kiln returns "
                                     "tensors only")
        log.debug("kiln: compiled %s (%d params, %d inputs): %r", self.name,
                  len(param_pos), len(input_pos), compiled)
        return _Specialization(compiled, input_pos, param_pos, param_names, n_out)

    def _run(self, args: Sequence[Any]) -> Any:
        sig = _signature(args)
        with self._lock:
            spec = self._specs.get(sig)
        if spec is None:
            spec = self._compile(args)
            with self._lock:
                self._specs[sig] = spec
        # The weights as they are now (they may have changed in place since
        # the compile; their digests follow the version counter).
        weights = {n: args[p] for n, p in zip(spec.param_names, spec.param_positions)}
        inputs = [args[i] for i in spec.tensor_positions]
        with torch.no_grad():
            outs = self.client._execute(spec.compiled, inputs, parameters=weights)
        # Kiln returns host tensors; hand them back where the caller's data lives.
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
        if device is not None and device.type != "cpu":
            outs = [o.to(device) for o in outs]
        if self._out_container is None:
            return outs[0]
        return self._out_container(outs)

    def __call__(self, *args: Any) -> Any:
        if self.fallback is None:
            return self._run(args)
        sig = _signature(args)
        if sig in self._eager:
            return self.gm(*args)
        try:
            return self._run(args)
        except KilnError as e:
            log.warning("kiln: %s ran eagerly on the host instead of on target %r: %s",
                        self.name, self.target, e)
            if sig not in self._specs:  # compile failed: stay eager for this signature
                self._eager.add(sig)
            return self.gm(*args)

    @property
    def specializations(self) -> list[CompiledModel]:
        """The executables compiled so far, one per input signature."""
        return [s.compiled for s in self._specs.values()]


def backend(address: str | Client, target: str = "cpu", fallback: str | None = None,
            options: Any = None, timeout: float | None = 300.0
            ) -> Callable[[torch.fx.GraphModule, list], Callable[..., Any]]:
    """A torch.compile backend that compiles for ``target`` on the daemon at
    ``address`` (or through an existing :class:`kiln.Client`).

    Inference only: the returned graphs record no autograd history; called with
    inputs or weights that require grad, they return outputs that do not.

    Args:
        fallback: None (default) — errors propagate as typed exceptions;
            ``"eager"`` — a graph that fails to compile or run runs eagerly, and
            a WARNING on the ``kiln.backend`` logger says which and why.
    """
    if fallback not in (None, "eager"):
        raise ValueError(f"fallback must be None or 'eager', not {fallback!r}")
    client = address if isinstance(address, Client) else Client(address, timeout=timeout)
    compiled_graphs: list[_KilnCompiledGraph] = []

    def kiln_backend(gm: torch.fx.GraphModule, example_inputs: list) -> Callable[..., Any]:
        # Lowering and compiling happen at the first call of each input
        # signature, outside Dynamo's backend hook, so errors reach the caller
        # as typed kiln.errors exceptions rather than BackendCompilerFailed.
        compiled = _KilnCompiledGraph(client, gm, target, options, fallback)
        compiled_graphs.append(compiled)
        return compiled

    kiln_backend.client = client  # type: ignore[attr-defined]
    kiln_backend.compiled_graphs = compiled_graphs  # type: ignore[attr-defined]
    return kiln_backend
