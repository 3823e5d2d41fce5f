"""kiln.backend: a torch.compile backend that compiles and runs on a Kiln daemon.

    model = torch.compile(model, backend=kiln.backend("localhost:50051"))

Each Dynamo graph is lowered with AOTAutograd's inference export
(``aot_export_joint_simple(..., trace_joint=False)``) and the core-ATen
decompositions, serialised, compiled on the daemon and run there; outputs do
not require grad. When grad mode is on and an input or weight requires grad
(modes ``execute`` and ``simulate``), the graph is AOTAutograd's joint graph
instead, partitioned into a forward and a backward graph that are both
compiled and run by Kiln (:class:`_AutogradGraph`), so ``loss.backward()``
and optimizers work as in eager.

Example inputs that are ``torch.nn.Parameter`` become Graph.parameters: their
bytes are uploaded once (by digest) and stay resident on the device; every
other tensor (including buffers) is sent as a runtime input on each call.

When Dynamo hands over a dynamic graph (``dynamic=True``, or automatically
after it sees a second input shape), the backend compiles it once with
symbolic sizes (docs/architecture.md, "Variable sizes"): one executable
serves every size Dynamo's guards let through. A graph whose ops Kiln
compiles for static sizes only is specialised per concrete input signature
instead (logged at INFO); the daemon's compile cache makes repeats cheap.

Errors are typed :mod:`kiln.errors` exceptions. With ``fallback="eager"`` a graph
that fails to compile or run is run eagerly instead, and a WARNING names the
graph and the reason. With ``fallback="cpu"`` the daemon partitions a graph
with ops the target lacks: those ops run on the host CPU with PyTorch, the
rest on the target, and a WARNING on ``kiln.placement`` names every op that
fell back (:mod:`kiln.placement`; ``max_fallback_fraction`` caps them). With
the default ``fallback=None`` nothing falls back.

``mode`` says what happens to each graph (the modes of a simulator backend,
each doing what it says):

=============  ==============================================================
``execute``    compile for ``target`` and run on a device of that target
               (default)
``simulate``   compile for ``target`` (default ``riscv64``) and run on a
               simulated device (one whose ListDevices properties name a
               ``simulator``); each call's instruction count is kept in
               ``last_counters``
``compile``    compile with every pipeline stage dumped (``mlir`` holds the
               ATen, linalg and LLVM dialect modules, LLVM IR and assembly);
               run eagerly
``codegen``    compile for bare-metal riscv64 and write a buildable bundle
               (:mod:`kiln.bundle`) into ``codegen_dir``; run eagerly
``trace``      log the core-ATen graph (kept in ``traced``); run eagerly
``eager``      run eagerly; Kiln is not contacted
=============  ==============================================================
"""

from __future__ import annotations

import logging
import pathlib
import threading
from typing import Any, Callable, Sequence

import torch
import torch.fx

from kiln.client import Client, CompiledModel
from kiln.errors import (KilnError, UnavailableError, UnimplementedError, UnsupportedOpError,
                         VerificationError)
from kiln.graph import serialize_graph_module
from kiln.placement import placement_policy
from kiln.resampling import keep_uint8_resampling_whole

__all__ = ["MODES", "backend", "lower_to_core_aten"]

MODES = ("execute", "simulate", "compile", "codegen", "trace", "eager")

log = logging.getLogger("kiln.backend")


def lower_to_core_aten(gm: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor]
                       ) -> torch.fx.GraphModule:
    """Dynamo graph → flat core-ATen inference graph (one placeholder per input).

    Outputs are cloned first: AOTAutograd's inference export refuses outputs
    that alias inputs (``return x.t()``), and Kiln returns fresh tensors from
    the device anyway, so a returned view is a copy either way.
    """
    from torch._functorch.aot_autograd import aot_export_joint_simple

    from kiln.export import decomposition_table

    def cloned_outputs(*args):
        outputs = gm(*args)
        if isinstance(outputs, torch.Tensor):
            return outputs.clone()
        return type(outputs)(o.clone() if isinstance(o, torch.Tensor) else o
                             for o in outputs)

    with torch.no_grad():
        return aot_export_joint_simple(cloned_outputs, list(example_inputs),
                                       trace_joint=False,
                                       decompositions=decomposition_table())


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


def _split_parameters(placeholders: Sequence[torch.fx.Node], tensor_pos: Sequence[int],
                      args: Sequence[Any]) -> tuple[dict, list[int], list[str], list[int]]:
    """The lowered graph's placeholders that are ``nn.Parameter`` arguments
    (Graph.parameters: name → tensor, their argument positions and names)
    and the argument positions of the rest (runtime inputs)."""
    params: dict[str, torch.Tensor] = {}
    param_pos: list[int] = []
    param_names: list[str] = []
    input_pos: list[int] = []
    for node, pos in zip(placeholders, tensor_pos):
        if isinstance(args[pos], torch.nn.Parameter):
            params[node.name] = args[pos]
            param_pos.append(pos)
            param_names.append(node.name)
        else:
            input_pos.append(pos)
    return params, param_pos, param_names, input_pos


class _Specialization:
    """One static-shape compile of a Dynamo graph."""

    def __init__(self, compiled: CompiledModel, tensor_positions: list[int],
                 param_positions: list[int], param_names: list[str], n_outputs: int,
                 output_positions: list[int] | None = None):
        self.compiled = compiled
        self.tensor_positions = tensor_positions   # runtime inputs, in Graph.inputs order
        self.param_positions = param_positions
        self.param_names = param_names
        self.n_outputs = n_outputs
        #: Where each compiled output goes among the graph's; the rest are
        #: None (a backward graph's gradients of inputs that need none).
        self.output_positions = output_positions


class _KilnCompiledGraph:
    """The callable torch.compile gets back for one Dynamo graph."""

    def __init__(self, client: Client, gm: torch.fx.GraphModule, target: str,
                 options: Any, fallback: str | None, mode: str = "execute",
                 codegen_dir: pathlib.Path | None = None, index: int = 0,
                 verify: bool = False, max_fallback_fraction: float | None = None,
                 core_aten: bool = False):
        self.client = client
        #: True for AOTAutograd's forward and backward graphs, which are core
        #: ATen already and take tensors only.
        self.core_aten = core_aten
        #: fallback="cpu": the placement policy every compile sends.
        self.placement = (placement_policy("cpu", max_fallback_fraction)
                          if fallback == "cpu" else None)
        self.verify = verify
        #: verify=True: the report of the latest call (kiln.verify).
        self.last_verification: Any = None
        self.gm = gm
        self.target = target
        self.options = options
        self.fallback = fallback
        self.mode = mode
        self.codegen_dir = codegen_dir
        self.name = f"dynamo_graph_{id(gm):x}"
        self.index = index
        #: mode "trace": the core-ATen graph's code, per input signature.
        self.traced: list[str] = []
        #: mode "codegen": the bundles written, per input signature.
        self.bundles: list[Any] = []
        #: mode "simulate"/"execute": what the device counted on the latest call.
        self.last_counters: dict[str, int] = {}
        self._specs: dict[tuple, _Specialization] = {}
        #: A dynamic graph's one compile with symbolic sizes (None: not tried
        #: yet; False: it compiles per input size).
        self._symbolic: _Specialization | None | bool = None
        self._eager: set[tuple] = set()
        self._lock = threading.Lock()
        out = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
        self._out_container = type(out.args[0]) if isinstance(out.args[0], (tuple, list)) else None
        self._n_outputs = len(out.args[0]) if self._out_container else 1

    def _symbolic_inputs(self) -> list[Any] | None:
        """The fake values Dynamo traced the graph's placeholders with, when
        some size among them is symbolic (a dynamic graph) or some node's
        size depends on the values (nonzero, x[mask], captured with
        ``capture_dynamic_output_shape_ops``); else None."""
        from kiln.symbolic_sizes import is_symbolic

        def symbolic(v: Any) -> bool:
            return is_symbolic(v) or isinstance(v, torch.Tensor) and any(
                is_symbolic(d) for d in v.shape)

        values = [n.meta.get("example_value") for n in self.gm.graph.nodes
                  if n.op == "placeholder"]
        dynamic = any(symbolic(v) for v in values) or any(
            symbolic(n.meta.get("example_value")) for n in self.gm.graph.nodes
            if n.op == "call_function")
        return values if dynamic else None

    def _compile_symbolic(self, args: Sequence[Any]) -> _Specialization | None:
        """The dynamic graph compiled once with symbolic sizes; None (logged)
        when Kiln compiles some op of it for static sizes only."""
        values = self._symbolic_inputs()
        if values is None or len(values) != len(args) or self.mode != "execute":
            return None
        tensor_pos = [i for i, v in enumerate(values) if isinstance(v, torch.Tensor)]
        if any(not isinstance(values[i], torch.SymInt) for i in range(len(values))
               if i not in tensor_pos):
            return None  # a plain scalar input: the static path bakes it in
        gm = self.gm

        def with_sizes(*tensors: torch.Tensor) -> Any:
            full: list[Any] = list(values)
            for pos, t in zip(tensor_pos, tensors):
                full[pos] = t
            return gm(*full)

        try:
            lowered = lower_to_core_aten(with_sizes, [values[i] for i in tensor_pos])
            placeholders = [n for n in lowered.graph.nodes if n.op == "placeholder"]
            params, param_pos, param_names, input_pos = _split_parameters(
                placeholders, tensor_pos, args)
            serialized = serialize_graph_module(lowered, parameters=params, name=self.name)
            compiled = self.client.compile_serialized(serialized, target=self.target,
                                                      options=self.options,
                                                      placement=self.placement)
        except (UnimplementedError, UnsupportedOpError) as e:
            log.info("kiln: %s compiles per input size (Kiln takes it with static sizes "
                     "only): %s", self.name, e)
            return None
        except Exception as e:  # AOTAutograd could not trace it symbolically
            log.info("kiln: %s compiles per input size (no symbolic trace: %s: %s)",
                     self.name, type(e).__name__, e)
            return None
        n_out = len(serialized.graph.outputs)
        if n_out != self._n_outputs:
            return None
        log.debug("kiln: compiled %s once for symbolic sizes %s", self.name,
                  [f"{d.name} in [{d.min}, {d.max}]" for d in serialized.graph.symbols])
        return _Specialization(compiled, input_pos, param_pos, param_names, n_out)

    def _compile(self, args: Sequence[Any]) -> _Specialization:
        if self.core_aten:
            return self._compile_core_aten(args)
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
            if "does not support input mutations" in str(e):
                raise UnsupportedOpError(
                    f"{self.name}: the graph writes into its inputs, which Kiln's "
                    "torch.compile backend does not lower yet",
                    hint="torch.export the program and compile it with Client.compile "
                         "(the call writes the new values back), or pass "
                         "fallback=\"eager\" to run such graphs in PyTorch") from None
            raise UnsupportedOpError(f"{self.name}: AOTAutograd could not lower the graph "
                                     f"to core ATen: {type(e).__name__}: {e}") from None
        placeholders = [n for n in lowered.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(tensors):
            raise UnsupportedOpError(f"{self.name}: lowered graph has {len(placeholders)} "
                                     f"inputs, expected {len(tensors)}")
        params, param_pos, param_names, input_pos = _split_parameters(
            placeholders, tensor_pos, args)
        if self.mode == "trace":
            code = lowered.print_readable(print_output=False)
            self.traced.append(code)
            log.info("kiln: traced %s:\n%s", self.name, code)
            return _Specialization(None, input_pos, param_pos, param_names, self._n_outputs)
        serialized = serialize_graph_module(lowered, parameters=params, name=self.name)
        if self.mode == "codegen":
            return self._codegen(serialized, args, input_pos, param_pos, param_names)
        options = self.options
        if self.mode == "compile":
            options = _with_stage_dumps(options)
        compiled = self.client.compile_serialized(serialized, target=self.target,
                                                  options=options, placement=self.placement)
        n_out = len(serialized.graph.outputs)
        if n_out != self._n_outputs:
            raise UnsupportedOpError(f"{self.name}: the Dynamo graph returns {self._n_outputs} "
                                     f"values but its lowered form {n_out}; Kiln returns "
                                     "tensors only")
        log.debug("kiln: compiled %s (%d params, %d inputs): %r", self.name,
                  len(param_pos), len(input_pos), compiled)
        return _Specialization(compiled, input_pos, param_pos, param_names, n_out)

    def _compile_core_aten(self, args: Sequence[Any]) -> _Specialization:
        """A forward or backward graph of AOTAutograd: every input a tensor,
        outputs that may be None (gradients nobody needs)."""
        if not all(isinstance(a, torch.Tensor) for a in args):
            raise UnsupportedOpError(f"{self.name}: an autograd graph input is not a tensor "
                                     "(Kiln needs static shapes)")
        out = next(n for n in reversed(self.gm.graph.nodes) if n.op == "output")
        flat, _ = torch.utils._pytree.tree_flatten(out.args[0])
        kept = [i for i, o in enumerate(flat) if isinstance(o, torch.fx.Node)]
        # Every input is a runtime input: the weights of a graph that trains
        # change at every optimizer step, and as content-addressed parameters
        # each step would hash, upload and store every weight anew (measured:
        # LeNet's step 85 ms that way, 29 ms as inputs).
        serialized = serialize_graph_module(self.gm, name=self.name, keep_outputs=kept)
        compiled = self.client.compile_serialized(serialized, target=self.target,
                                                  options=self.options,
                                                  placement=self.placement)
        return _Specialization(compiled, list(range(len(args))), [], [], len(flat), kept)

    def _codegen(self, serialized: Any, args: Sequence[Any], input_pos: list[int],
                 param_pos: list[int], param_names: list[str]) -> _Specialization:
        from kiln import bundle
        riscv = _riscv_options(self.options)
        vector = not riscv.scalar_only
        compiled = self.client.compile_serialized(
            serialized, target="riscv64",
            options=bundle.bare_metal_options(vector, riscv.vlen or 128))
        name = f"graph{self.index}_{len(self._specs)}"
        directory = (self.codegen_dir or pathlib.Path("kiln_bundles")) / name
        written = bundle.write_compiled_bundle(
            self.client, compiled, [args[i] for i in input_pos], directory, name,
            vector=vector, vlen=riscv.vlen or 128)
        self.bundles.append(written)
        log.info("kiln: wrote the bare-metal bundle of %s to %s (make -C %s run)",
                 self.name, directory, directory)
        return _Specialization(compiled, input_pos, param_pos, param_names,
                               len(serialized.graph.outputs))

    @property
    def mlir(self) -> dict[str, str]:
        """Mode "compile": the module after each pipeline stage for the latest
        input signature (aten, linalg, llvm-dialect, llvm-ir, asm)."""
        with self._lock:
            specs = list(self._specs.values())
        if not specs or specs[-1].compiled is None:
            return {}
        return specs[-1].compiled.stage_dumps()

    def _specialize(self, args: Sequence[Any]) -> _Specialization:
        if self._symbolic is None and not self.core_aten:
            symbolic = self._compile_symbolic(args)
            with self._lock:
                self._symbolic = symbolic or False
        if self._symbolic:
            return self._symbolic
        sig = _signature(args)
        with self._lock:
            spec = self._specs.get(sig)
        if spec is None:
            spec = self._compile(args)
            with self._lock:
                self._specs[sig] = spec
        return spec

    def _run(self, args: Sequence[Any]) -> Any:
        spec = self._specialize(args)
        if self.mode in ("trace", "compile", "codegen"):
            # These modes look inside; the numbers come from eager PyTorch.
            return self.gm(*args)
        # The weights as they are now (they may have changed in place since
        # the compile; their digests follow the version counter).
        weights = {n: args[p] for n, p in zip(spec.param_names, spec.param_positions)}
        inputs = [args[i] for i in spec.tensor_positions]
        with torch.no_grad():
            outs = spec.compiled.run(inputs, parameters=weights)
            if self.verify:
                from kiln.verify import verify_execution
                self.last_verification = verify_execution(
                    self.client, spec.compiled, inputs, outs, parameters=weights,
                    options=self.options)
        self.last_counters = dict(spec.compiled.last_counters)
        # Kiln returns host tensors; hand them back where the caller's data lives.
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
        if device is not None and device.type != "cpu":
            outs = [o.to(device) for o in outs]
        if spec.output_positions is not None:
            full: list[Any] = [None] * spec.n_outputs
            for pos, o in zip(spec.output_positions, outs):
                full[pos] = o
            outs = full
        if self._out_container is None:
            return outs[0]
        return self._out_container(outs)

    def __call__(self, *args: Any) -> Any:
        if self.mode == "eager":
            return self.gm(*args)
        if self.fallback != "eager":  # None, or "cpu" (the daemon partitions)
            return self._run(args)
        sig = _signature(args)
        if sig in self._eager:
            return self.gm(*args)
        try:
            return self._run(args)
        except VerificationError:
            raise  # wrong numbers are what verify=True asked to hear about
        except KilnError as e:
            log.warning("kiln: %s ran eagerly on the host instead of on target %r: %s",
                        self.name, self.target, e)
            if sig not in self._specs:  # compile failed: stay eager for this signature
                self._eager.add(sig)
            return self.gm(*args)

    @property
    def specializations(self) -> list[CompiledModel]:
        """The executables compiled so far: the one with symbolic sizes, or
        one per input signature."""
        specs = ([self._symbolic] if self._symbolic else []) + list(self._specs.values())
        return [s.compiled for s in specs if s.compiled is not None]


def _needs_autograd(example_inputs: Sequence[Any]) -> bool:
    """Whether a Dynamo graph must record autograd history, as eager would:
    grad mode is on and some input (a weight, usually) requires grad."""
    return torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs)


class _AutogradGraph:
    """A Dynamo graph that records autograd history: per concrete input
    signature (Dynamo may hand over a dynamic graph), AOTAutograd traces the
    joint graph with static shapes and partitions it into a forward and a
    backward graph, each compiled and run by Kiln at its first call. The
    forward returns what the backward needs; autograd holds those tensors
    between the two."""

    def __init__(self, gm: torch.fx.GraphModule,
                 graph_for: Callable[[torch.fx.GraphModule], _KilnCompiledGraph]):
        self.gm = gm
        self.graph_for = graph_for
        self._functions: dict[tuple, Callable[..., Any]] = {}
        self._lock = threading.Lock()

    def _function(self, args: Sequence[Any]) -> Callable[..., Any]:
        from torch._functorch.aot_autograd import aot_function, make_boxed_func

        from kiln.export import decomposition_table

        scalars = {i: (int(a) if isinstance(a, torch.SymInt) else a)
                   for i, a in enumerate(args) if not isinstance(a, torch.Tensor)}
        gm = self.gm

        def with_scalars(*tensors: torch.Tensor) -> Any:
            full = list(tensors)
            for pos, v in sorted(scalars.items()):
                full.insert(pos, v)
            return gm(*full)

        def compile_part(part: torch.fx.GraphModule, _example: Sequence[Any]) -> Callable:
            return make_boxed_func(self.graph_for(part))

        return aot_function(with_scalars, fw_compiler=compile_part, bw_compiler=compile_part,
                            decompositions=decomposition_table())

    def __call__(self, *args: Any) -> Any:
        sig = _signature(args)
        with self._lock:
            function = self._functions.get(sig)
            if function is None:
                function = self._functions[sig] = self._function(args)
        return function(*(a for a in args if isinstance(a, torch.Tensor)))


def _riscv_options(options: Any) -> Any:
    """options.riscv as a RiscvOptions message, whether options is a dict,
    a CompileOptions message or None."""
    from kiln.v1 import compiler_pb2
    if isinstance(options, compiler_pb2.CompileOptions):
        return options.riscv
    return compiler_pb2.RiscvOptions(**dict((options or {}).get("riscv", {})))


def _with_stage_dumps(options: Any) -> Any:
    from kiln.v1 import compiler_pb2
    if options is None:
        return {"dump_stages": True}
    if isinstance(options, compiler_pb2.CompileOptions):
        copy = compiler_pb2.CompileOptions()
        copy.CopyFrom(options)
        copy.dump_stages = True
        return copy
    return {**options, "dump_stages": True}


def _require_simulator(client: Client, target: str) -> None:
    devices = client.devices(kind=target)
    if not devices:
        raise UnavailableError(f"mode='simulate': the daemon has no {target!r} devices "
                               "(start kilnd with --local-agents cpu,qemu)")
    if not any("simulator" in d.properties for d in devices):
        raise UnavailableError(f"mode='simulate': none of the daemon's {target!r} devices "
                               "is a simulator")


def backend(address: str | Client, target: str | None = None, fallback: str | None = None,
            options: Any = None, timeout: float | None = 300.0, mode: str = "execute",
            codegen_dir: str | pathlib.Path | None = None, verify: bool = False,
            max_fallback_fraction: float | None = None
            ) -> Callable[[torch.fx.GraphModule, list], Callable[..., Any]]:
    """A torch.compile backend that compiles for ``target`` on the daemon at
    ``address`` (or through an existing :class:`kiln.Client`).

    With grad mode on and an input or weight that requires grad (modes
    ``execute`` and ``simulate``), a graph records autograd history: its
    forward and backward graphs are both compiled and run by Kiln. Under
    ``torch.no_grad()`` a graph is inference only.

    Args:
        target: device kind to compile for; default ``cpu``, or ``riscv64``
            in mode ``simulate``.
        fallback: None (default) — errors propagate as typed exceptions;
            ``"eager"`` — a graph that fails to compile or run runs eagerly, and
            a WARNING on the ``kiln.backend`` logger says which and why;
            ``"cpu"`` — ops the target lacks run on the host CPU with PyTorch
            and the rest of the graph on the target (:mod:`kiln.placement`).
        max_fallback_fraction: with ``fallback="cpu"``, the largest fraction
            of a graph's ops that may fall back; over it the graph's first
            call raises :class:`kiln.errors.UnimplementedError`.
        mode: one of :data:`MODES` (see the module docstring).
        codegen_dir: mode ``codegen``: where bundles go (default
            ``./kiln_bundles``), one folder per graph and input signature.
        verify: modes ``execute``/``simulate``: check every call's outputs
            against the reference interpreter (:mod:`kiln.verify`); a mismatch
            raises :class:`kiln.errors.VerificationError` naming the first
            diverging op, whatever ``fallback`` says. Each graph's latest
            report is in ``compiled_graphs[i].last_verification``.
    """
    if fallback not in (None, "eager", "cpu"):
        raise ValueError(f"fallback must be None, 'eager' or 'cpu', not {fallback!r}")
    if max_fallback_fraction is not None and fallback != "cpu":
        raise ValueError("max_fallback_fraction needs fallback='cpu'")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if target is None:
        target = "riscv64" if mode in ("simulate", "codegen") else "cpu"
    if mode == "codegen" and target != "riscv64":
        raise ValueError(f"mode='codegen' writes bare-metal riscv64 bundles; target "
                         f"{target!r} has none")
    client = address if isinstance(address, Client) else Client(address, timeout=timeout)
    if mode == "simulate":
        _require_simulator(client, target)
    compiled_graphs: list[_KilnCompiledGraph] = []
    directory = pathlib.Path(codegen_dir) if codegen_dir is not None else None

    def kiln_backend(gm: torch.fx.GraphModule, example_inputs: list) -> Callable[..., Any]:
        if mode == "eager":
            compiled_graphs.append(_KilnCompiledGraph(client, gm, target, options, fallback,
                                                      mode, directory, len(compiled_graphs)))
            return gm.forward
        # uint8 bilinear/bicubic resampling becomes kiln::upsample_uint8,
        # which the lowering keeps whole (kiln/resampling.py).
        keep_uint8_resampling_whole(gm)
        if mode in ("execute", "simulate") and _needs_autograd(example_inputs):
            return _AutogradGraph(gm, graph_for)
        # Lowering and compiling happen at the first call of each input
        # signature, outside Dynamo's backend hook, so errors reach the caller
        # as typed kiln.errors exceptions rather than BackendCompilerFailed.
        compiled = _KilnCompiledGraph(client, gm, target, options, fallback, mode,
                                      directory, len(compiled_graphs), verify=verify,
                                      max_fallback_fraction=max_fallback_fraction)
        compiled_graphs.append(compiled)
        return compiled

    def graph_for(part: torch.fx.GraphModule) -> _KilnCompiledGraph:
        compiled = _KilnCompiledGraph(client, part, target, options, fallback, mode,
                                      directory, len(compiled_graphs), verify=verify,
                                      max_fallback_fraction=max_fallback_fraction,
                                      core_aten=True)
        compiled_graphs.append(compiled)
        return compiled

    kiln_backend.client = client  # type: ignore[attr-defined]
    kiln_backend.compiled_graphs = compiled_graphs  # type: ignore[attr-defined]
    return kiln_backend
