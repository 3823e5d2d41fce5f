"""kiln.Client: compile models on a Kiln daemon and run them remotely."""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Mapping, Sequence

import torch
import torch.fx
from torch.utils import _pytree as pytree

from kiln._rpc import Rpc
from kiln.blobs import BlobClient
from kiln.cache import CacheClient
from kiln.credentials import TlsConfig, is_loopback
from kiln.errors import (FailedPreconditionError, InvalidArgumentError, KilnError,
                         UnsupportedOpError)
from kiln.graph import SerializedGraph, serialize_graph_module
from kiln.local_execute import LocalExecutor, LocalUnavailable
from kiln.op_report import OpReport
from kiln.placement import (PlacementReport, log_placement, placement_policy,
                            run_partitioned, segment_models)
from kiln.tensors import (PROTO_TO_DTYPE, empty_tensor_for, payload_size, tensor_bytes,
                          tensor_from_bytes, tensor_type)
from kiln.v1 import (compiler_pb2, devices_pb2, executable_pb2, executor_pb2,
                     graph_pb2, placement_pb2, tensor_pb2)

__all__ = ["Client", "CompiledModel", "DeviceInfo", "INLINE_INPUT_LIMIT"]

#: Execute inputs larger than this travel as blobs, not inline.
INLINE_INPUT_LIMIT = 1024 * 1024
#: Inline inputs of one Execute request stay under this in total, so the
#: request stays under the 4 MiB message limit; the rest go as blobs.
INLINE_REQUEST_BUDGET = 3 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """One device as ListDevices reports it."""

    id: str
    kind: str
    agent_id: str
    state: str
    queue_depth: int
    properties: dict[str, str]


def _us(v: int) -> float:
    return v / 1e6


class CompiledModel:
    """An executable on the daemon plus the weights it was compiled with.

    Calling it runs it remotely: ``outputs = compiled(*inputs)``. The daemon
    validates inputs against the manifest; mismatches raise
    :class:`kiln.errors.InvalidArgumentError`.

    Attributes:
        digest: hex digest of the executable (its identity in the store).
        cache_hit: True when the daemon served the executable from its cache.
        compile_key: hex compile key (graph without weights, target, options).
        manifest: the ExecutableManifest message.
        timings: client-side seconds per phase: ``upload`` (weights), ``compile``
            (the Compile RPC), plus ``server_queue``/``server_compile``.
        last_timings: seconds per phase of the latest call: ``upload`` (inputs
            sent as blobs, or written into memfds over the local socket), ``queue``, ``fetch``, ``load``, ``run``, ``total``
            (as the daemon and agent measured them), ``download`` (blob outputs)
            and ``wall`` (the whole call, client-side).
        last_counters: what the device counted on the latest call:
            ``instructions`` (guest instructions retired; simulated devices
            such as the qemu agent's riscv64 ones count them, others report 0).
        last_transport: how the latest call's tensors travelled: ``"local"``
            (kilnd's local socket, memfds) or ``"grpc"``.
        placement: where each op runs (:class:`kiln.placement.PlacementReport`).
            With ``fallback="cpu"`` a graph with ops the target lacks is
            *partitioned*: calls run its target segments on the daemon and the
            rest op by op with this process's PyTorch (``last_timings`` then
            sums the segments and adds ``cpu``).
        verify: when True (``Client.compile(..., verify=True)``), every call
            checks its outputs against the reference (:mod:`kiln.verify`);
            ``model(x, verify=True)`` checks one call.
        last_verification: the :class:`kiln.verify.VerificationReport` of the
            latest verified call that passed (a failing one raises
            :class:`kiln.errors.VerificationError`, which carries its report).
    """

    verify = False
    last_verification = None

    def __init__(self, client: "Client", response: compiler_pb2.CompileResponse,
                 graph: graph_pb2.Graph, parameters: Mapping[str, torch.Tensor] | None,
                 timings: dict[str, float], out_spec: pytree.TreeSpec | None = None,
                 in_spec: pytree.TreeSpec | None = None):
        self._client = client
        self._response = response
        self._graph = graph
        self._parameters = dict(parameters or {})
        self._out_spec = out_spec
        self._in_spec = in_spec
        self.timings = timings
        self.last_timings: dict[str, float] = {}
        self.last_device_id = ""
        #: How the last run's tensors travelled: "local" (kilnd's local
        #: socket, memfds) or "grpc".
        self.last_transport = ""
        self.last_counters: dict[str, int] = {}
        #: The CompileOptions it was compiled with (kiln.get_mlir reuses them).
        self.options = compiler_pb2.CompileOptions()
        #: The PlacementPolicy it was compiled under (verify's probes reuse it).
        self.placement_policy = placement_pb2.PlacementPolicy()
        self._segments: list[CompiledModel | None] | None = None
        graph_params = {p.value.name: p.digest for p in graph.parameters}
        order = [a.name for a in response.manifest.parameters] or list(graph_params)
        try:
            self._param_digests = [graph_params[n] for n in order]
        except KeyError as e:
            raise KilnError(f"the executable's manifest names parameter {e} which the "
                            "compiled graph does not have", context={"executable": self.digest})
        self._param_names = order
        # The last call's weights (the tensors, their versions, storage and
        # layout) and the request they made: a call with the same unmodified
        # tensors reuses it instead of looking up each digest again
        # (mobilenet has 244). It holds the tensors, so their addresses are
        # not reused while it stands.
        self._request_cache: tuple[list[torch.Tensor], list[tuple],
                                   executor_pb2.ExecuteRequest] | None = None
        graph_inputs = [v.name for v in graph.inputs]
        manifest_inputs = [a.name for a in response.manifest.inputs]
        # Position in the caller's argument list of each manifest input.
        if sorted(manifest_inputs) == sorted(graph_inputs) and len(set(graph_inputs)) == len(graph_inputs):
            self._input_order = [graph_inputs.index(n) for n in manifest_inputs]
        else:
            self._input_order = list(range(len(graph_inputs)))

    @property
    def digest(self) -> str:
        return self._response.executable.hash

    @property
    def executable(self) -> tensor_pb2.Digest:
        return self._response.executable

    @property
    def cache_hit(self) -> bool:
        return self._response.cache_hit

    @property
    def compile_key(self) -> str:
        return self._response.compile_key

    @property
    def manifest(self) -> executable_pb2.ExecutableManifest:
        """The executable's signature (empty when the graph is partitioned:
        each target segment has its own, in ``placement.segments``)."""
        return self._response.manifest

    @property
    def target(self) -> str:
        return self._response.placement.target or self._response.manifest.target

    @property
    def placement(self) -> PlacementReport:
        """Where each op runs, and why (:class:`kiln.placement.PlacementReport`)."""
        return PlacementReport(self._response.placement)

    @property
    def partitioned(self) -> bool:
        """True when some ops run on the host CPU (compiled with fallback="cpu")."""
        return self.placement.partitioned

    def _segment_models(self) -> list["CompiledModel | None"]:
        if self._segments is None:
            self._segments = segment_models(self._client, self)
        return self._segments

    def _run(self, inputs: Sequence[Any],
             parameters: Mapping[str, torch.Tensor] | None = None) -> list[torch.Tensor]:
        """Runs it on inputs in manifest (= Graph.inputs) order."""
        if self.partitioned:
            return run_partitioned(self._client, self, inputs, parameters)
        return self._client._execute(self, inputs, parameters=parameters)

    def stage_dumps(self) -> dict[str, str]:
        """The module after each compiler stage (aten, linalg, llvm-dialect,
        llvm-ir, asm), in pipeline order. Empty unless the compile was asked
        for them with ``options={"dump_stages": True}``; read from the
        daemon's blob store on each call."""
        return {stage.stage: self._client.blobs.read(stage.blob).decode()
                for stage in self._response.stages}

    @property
    def graph(self) -> graph_pb2.Graph:
        return self._graph

    @property
    def op_report(self) -> OpReport:
        """Per-layer MACs, FLOPs, parameter and activation bytes, and totals,
        from the daemon's analysis of the ATen-level module (every compile
        returns it, cache hits included); ``print()`` it for a table."""
        return OpReport(self._response.op_report)

    def __repr__(self) -> str:
        if self.partitioned:
            return (f"CompiledModel(partitioned, target={self.target!r}, "
                    f"segments={len(self.placement.segments)}, cache_hit={self.cache_hit})")
        return (f"CompiledModel(digest={self.digest[:12]}..., target={self.manifest.target!r}, "
                f"cache_hit={self.cache_hit})")

    def __call__(self, *inputs: Any, verify: bool | None = None, **kwargs: Any) -> Any:
        """Runs the executable; ``verify`` (default: ``self.verify``) checks
        the outputs against the reference and bisects on a mismatch."""
        if self._in_spec is not None and not kwargs and \
                all(type(a) is torch.Tensor for a in inputs):
            flat = list(inputs)  # what tree_flatten gives for plain tensors, cheaper
        elif self._in_spec is not None:
            flat, _ = pytree.tree_flatten((inputs, kwargs))
        elif kwargs:
            raise TypeError("this CompiledModel takes positional tensors only")
        else:
            flat = list(inputs)
        ordered = [flat[i] for i in self._input_order] if len(flat) == len(self._input_order) else flat
        outputs = self._run(ordered)
        if self.verify if verify is None else verify:
            from kiln.verify import verify_execution
            self.last_verification = verify_execution(self._client, self, flat, outputs,
                                                      options=self.options)
        if self._out_spec is not None:
            return pytree.tree_unflatten(outputs, self._out_spec)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


class Client:
    """A connection to one Kiln daemon.

    Args:
        address: ``host:port`` of kilnd.
        local: Execute over kilnd's local socket with tensors in memfds
            (True), or always over gRPC (False). None: when ``address`` is
            loopback, unless ``KILN_LOCAL_EXECUTE=0``. Either way the client
            falls back to gRPC when kilnd serves no socket or it cannot be
            reached from here.
        timeout: deadline in seconds for each RPC (None: no deadline).
        tls: None (from ``KILN_TLS_CA``/``KILN_TLS_CERT``/``KILN_TLS_KEY``;
            plaintext when unset), True (the system's CA roots), a CA bundle
            path, a :class:`kiln.TlsConfig`, or False (plaintext).
        token: bearer token (None: ``KILN_TOKEN`` or ``KILN_TOKEN_FILE``).
    """

    def __init__(self, address: str, timeout: float | None = 300.0, *,
                 tls: TlsConfig | str | bool | None = None, token: str | None = None,
                 local: bool | None = None):
        self.address = address
        self.timeout = timeout
        self._rpc = Rpc(address, timeout, tls=tls, token=token)
        self.blobs = BlobClient(self._rpc)
        self.cache = CacheClient(self._rpc)
        if local is None:
            local = (os.environ.get("KILN_LOCAL_EXECUTE", "1") != "0"
                     and is_loopback(address))
        self._local = LocalExecutor(self._rpc, self.blobs) if local else None

    @property
    def local_execute(self) -> bool:
        """Whether Execute goes over kilnd's local socket (tensors in memfds)
        rather than gRPC. Decided on first use: kilnd must serve the socket
        and it must be reachable from this process."""
        return self._local is not None and self._local.available()

    def close(self) -> None:
        if self._local is not None:
            self._local.close()
        self._rpc.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- devices --------------------------------------------------------------

    def devices(self, kind: str = "") -> list[DeviceInfo]:
        """Every device of every connected agent (of ``kind`` when given)."""
        resp = self._rpc.call("kiln.v1.Devices/ListDevices", self._rpc.devices.ListDevices,
                              devices_pb2.ListDevicesRequest(kind=kind))
        return [DeviceInfo(id=d.id, kind=d.kind, agent_id=d.agent_id,
                           state=devices_pb2.DeviceState.Name(d.state),
                           queue_depth=d.queue_depth, properties=dict(d.properties))
                for d in resp.devices]

    # --- compile --------------------------------------------------------------

    def compile(self, model: Any, target: str = "cpu",
                options: compiler_pb2.CompileOptions | Mapping[str, Any] | None = None,
                name: str = "", verify: bool = False, fallback: str = "error",
                max_fallback_fraction: float | None = None) -> CompiledModel:
        """Compiles a model for ``target``.

        ``model`` is a ``torch.export.ExportedProgram`` (decomposed to core ATen
        here, with ``run_decompositions()``), a core-ATen ``torch.fx.GraphModule``
        whose placeholders carry ``meta["val"]`` (all placeholders are inputs,
        ``get_attr`` tensors are parameters), or a ``kiln.v1.Graph``.

        With ``verify=True`` every call of the result compares its outputs
        with the reference interpreter (:mod:`kiln.reference`) and, on a
        mismatch, raises :class:`kiln.errors.VerificationError` naming the
        first diverging op (:mod:`kiln.verify`).

        ``fallback`` says what happens to ops the target cannot compile:
        ``"error"`` (default) raises :class:`kiln.errors.UnimplementedError`
        naming each of them; ``"cpu"`` partitions the graph so that they run
        on the host CPU with this process's PyTorch, between target segments
        (a WARNING on the ``kiln.placement`` logger says which and why; see
        ``model.placement``). ``max_fallback_fraction`` (with ``"cpu"``)
        caps the fraction of ops that may fall back; over it the compile
        raises :class:`kiln.errors.UnimplementedError`.
        """
        policy = placement_policy(fallback, max_fallback_fraction)
        model = self._compile_model(model, target, options, name, policy)
        model.verify = verify
        return model

    def _compile_model(self, model: Any, target: str, options: Any, name: str,
                       placement: placement_pb2.PlacementPolicy | None = None) -> CompiledModel:
        if isinstance(model, graph_pb2.Graph):
            return self.compile_graph(model, target=target, options=options,
                                      placement=placement)
        out_spec = in_spec = None
        if isinstance(model, torch.export.ExportedProgram):
            serialized, out_spec, in_spec = _serialize_exported(model, name)
        elif isinstance(model, torch.fx.GraphModule):
            serialized = serialize_graph_module(model, name=name or type(model).__name__)
        else:
            raise TypeError(f"Client.compile takes an ExportedProgram, an fx.GraphModule or "
                            f"a kiln.v1.Graph, not {type(model).__name__}")
        return self.compile_serialized(serialized, target=target, options=options,
                                       out_spec=out_spec, in_spec=in_spec, placement=placement)

    def compile_serialized(self, serialized: SerializedGraph, target: str = "cpu",
                           options: Any = None, out_spec: Any = None,
                           in_spec: Any = None,
                           placement: placement_pb2.PlacementPolicy | None = None
                           ) -> CompiledModel:
        """Uploads a serialised graph's weights, then compiles it."""
        t0 = time.perf_counter()
        self.blobs.ensure_tensors(list(serialized.parameters.values()))
        upload = time.perf_counter() - t0
        return self.compile_graph(serialized.graph, target=target, options=options,
                                  parameters=serialized.parameters, out_spec=out_spec,
                                  in_spec=in_spec, upload_seconds=upload,
                                  placement=placement)

    def compile_torchscript(self, path_or_module: Any, example_inputs: Sequence[Any],
                            target: str = "cpu",
                            options: compiler_pb2.CompileOptions | Mapping[str, Any] | None = None,
                            fallback: str = "error",
                            max_fallback_fraction: float | None = None) -> CompiledModel:
        """Compiles a TorchScript archive (a path, its bytes, or a scripted or
        traced module) for ``target``; the daemon converts it to a graph.

        ``example_inputs`` state forward()'s input types (TorchScript has no
        static shapes): tensors, ``kiln.v1.TensorType``s or ``(dtype, shape)``
        pairs. A returned (nested) tuple comes back as one flat tuple. Errors name
        the TorchScript node: :class:`kiln.errors.InvalidArgumentError` for an
        archive libtorch cannot read or inputs that do not fit,
        :class:`kiln.errors.UnimplementedError` for constructs Kiln cannot
        convert (control flow, non-tensor outputs); an op the compiler lacks
        fails, or falls back, as for any graph (``fallback``,
        ``max_fallback_fraction``: see :meth:`compile`).
        """
        from kiln.torchscript import compile_torchscript
        return compile_torchscript(self, path_or_module, example_inputs, target, options,
                                   placement_policy(fallback, max_fallback_fraction))

    def compile_graph(self, graph: graph_pb2.Graph, target: str = "cpu",
                      options: compiler_pb2.CompileOptions | Mapping[str, Any] | None = None,
                      *, parameters: Mapping[str, torch.Tensor] | None = None,
                      out_spec: Any = None, in_spec: Any = None,
                      upload_seconds: float = 0.0,
                      placement: placement_pb2.PlacementPolicy | None = None) -> CompiledModel:
        """Compiles a raw kiln.v1.Graph as is (its parameter blobs must be in
        the store already, e.g. uploaded with ``client.blobs``); ``placement``
        is the fallback policy (see :meth:`compile`)."""
        if isinstance(options, Mapping):
            options = compiler_pb2.CompileOptions(**options)
        request = compiler_pb2.CompileRequest(graph=graph, target=target, options=options,
                                              placement=placement)
        t0 = time.perf_counter()
        resp = self._rpc.call("kiln.v1.Compiler/Compile", self._rpc.compiler.Compile, request,
                              context={"target": target, "graph": graph.name or "<unnamed>"})
        timings = {
            "upload": upload_seconds,
            "compile": time.perf_counter() - t0,
            "server_queue": _us(resp.timings.queue_us),
            "server_compile": _us(resp.timings.compile_us),
        }
        model = CompiledModel(self, resp, graph, parameters, timings, out_spec, in_spec)
        if options is not None:
            model.options.CopyFrom(options)
        if placement is not None:
            model.placement_policy.CopyFrom(placement)
        log_placement(graph.name, model.placement)
        return model

    # --- execute --------------------------------------------------------------

    def _encode_inputs(self, request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
                       ctx: dict) -> float:
        """Adds Execute inputs to ``request`` in place (no message copies):
        small ones inline, the rest as blobs. Returns the upload seconds."""
        upload, inline_total = 0.0, 0
        for i, t in enumerate(inputs):
            nbytes = t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0
            as_blob = nbytes > INLINE_INPUT_LIMIT or inline_total + nbytes > INLINE_REQUEST_BUDGET
            upload += self._encode_input(request.inputs.add(), i, t, ctx, as_blob)
            if not as_blob:
                inline_total += nbytes
        return upload

    def _encode_input(self, msg: tensor_pb2.Tensor, i: int, t: Any, ctx: dict,
                      as_blob: bool) -> float:
        if not isinstance(t, torch.Tensor):
            raise InvalidArgumentError(f"input {i} is a {type(t).__name__}; Kiln inputs are tensors",
                                       context=ctx)
        try:
            msg.type.CopyFrom(tensor_type(t.dtype, t.shape))
        except ValueError as e:
            raise InvalidArgumentError(f"input {i}: {e}", context=ctx) from None
        if as_blob:
            t0 = time.perf_counter()
            (digest,), _ = self.blobs.ensure_tensors([t], in_transit=True)
            msg.blob.CopyFrom(digest)
            return time.perf_counter() - t0
        msg.data = tensor_bytes(t)
        return 0.0

    def _decode_output(self, i: int, out: tensor_pb2.Tensor, ctx: dict) -> tuple[torch.Tensor, float]:
        dtype = PROTO_TO_DTYPE.get(out.type.dtype)
        if dtype is None:
            raise KilnError(f"output {i} has unknown dtype {out.type.dtype}", context=ctx)
        t0 = time.perf_counter()
        try:
            if out.WhichOneof("payload") == "blob":
                # Straight into the output tensor's memory, once its size is
                # known to match the blob's (no allocation from a bad shape).
                expected = payload_size(dtype, out.type.shape)
                if expected != out.blob.size_bytes:
                    raise ValueError(f"tensor payload has {out.blob.size_bytes} bytes, expected "
                                     f"{expected} for {dtype} {list(out.type.shape)}")
                t, view = empty_tensor_for(dtype, out.type.shape)
                self.blobs.read_into(out.blob, view)
            else:
                t = tensor_from_bytes(out.data, dtype, out.type.shape)
        except ValueError as e:
            raise KilnError(f"output {i}: {e}", context=ctx) from None
        return t, time.perf_counter() - t0

    def _execute(self, model: CompiledModel, inputs: Sequence[Any],
                 parameters: Mapping[str, torch.Tensor] | None = None) -> list[torch.Tensor]:
        """Runs ``model``; ``parameters`` (name → tensor) overrides the weights
        it was compiled with (kiln.backend passes the live ones)."""
        ctx = {"executable": model.digest}
        wall0 = time.perf_counter()
        upload = 0.0
        weights = model._parameters if parameters is None else parameters
        t0 = time.perf_counter()
        request = self._request_for(model, weights)
        upload += time.perf_counter() - t0
        transport = "local" if self.local_execute else "grpc"
        if transport == "local":
            try:
                resp, outputs, encode_s = self._execute_local(model, request, inputs,
                                                              weights, ctx)
                upload += encode_s
                download = 0.0
            except LocalUnavailable:
                transport = "grpc"  # the socket is full or gone: this call over gRPC
        if transport == "grpc":
            upload += self._encode_inputs(request, inputs, ctx)
            resp = self._execute_grpc(model, request, inputs, weights, ctx)
            outputs, download = [], 0.0
            for i, out in enumerate(resp.outputs):
                t, secs = self._decode_output(i, out, ctx)
                outputs.append(t)
                download += secs
        tm = resp.timings
        model.last_device_id = resp.device_id
        model.last_transport = transport
        model.last_counters = {"instructions": resp.counters.instructions}
        model.last_timings = {
            "upload": upload, "queue": _us(tm.queue_us), "fetch": _us(tm.fetch_us),
            "load": _us(tm.load_us), "run": _us(tm.run_us), "total": _us(tm.total_us),
            "download": download, "wall": time.perf_counter() - wall0,
        }
        from kiln.introspect import remember_outputs
        remember_outputs(model, outputs)
        return outputs

    def _request_for(self, model: CompiledModel,
                     weights: Mapping[str, torch.Tensor] | None) -> executor_pb2.ExecuteRequest:
        """An ExecuteRequest naming the executable and the weights' digests
        (uploaded when the daemon lacks them). The same unmodified weight
        tensors as the last call reuse its request."""
        if not weights:
            request = executor_pb2.ExecuteRequest(executable=model.executable)
            request.parameters.extend(model._param_digests)
            return request
        tensors = [weights[n] for n in model._param_names]
        # What the tensor digest cache keys on too: `p.data = ...` can keep
        # the object, its version and its address and change the layout.
        state = [(t._version, t.data_ptr(), t.stride(), t.dtype) for t in tensors]
        cached = model._request_cache
        if (cached is not None and len(cached[0]) == len(tensors)
                and all(a is b for a, b in zip(cached[0], tensors)) and cached[1] == state):
            request = executor_pb2.ExecuteRequest()
            request.CopyFrom(cached[2])
            return request
        digests, _ = self.blobs.ensure_tensors(tensors)
        request = executor_pb2.ExecuteRequest(executable=model.executable)
        request.parameters.extend(digests)
        template = executor_pb2.ExecuteRequest()
        template.CopyFrom(request)
        model._request_cache = (tensors, state, template)
        return request

    def _execute_grpc(self, model: CompiledModel, request: executor_pb2.ExecuteRequest,
                      inputs: Sequence[Any], weights: Mapping[str, torch.Tensor] | None,
                      ctx: dict) -> executor_pb2.ExecuteResponse:
        try:
            return self._rpc.call("kiln.v1.Executor/Execute", self._rpc.executor.Execute,
                                  request, context=ctx)
        except FailedPreconditionError:
            # The daemon lost blobs we believed it held (e.g. it restarted on a
            # fresh store): upload again, once, when we hold the tensors.
            if not weights and not any(m.WhichOneof("payload") == "blob" for m in request.inputs):
                raise
            self.blobs.forget()
            model._request_cache = None
            if weights:
                self.blobs.ensure_tensors([weights[n] for n in model._param_names])
            self.blobs.ensure_tensors([t for t, m in zip(inputs, request.inputs)
                                       if m.WhichOneof("payload") == "blob"], in_transit=True)
            return self._rpc.call("kiln.v1.Executor/Execute", self._rpc.executor.Execute,
                                  request, context=ctx)

    def _execute_local(self, model: CompiledModel, request: executor_pb2.ExecuteRequest,
                       inputs: Sequence[Any], weights: Mapping[str, torch.Tensor] | None,
                       ctx: dict) -> tuple[executor_pb2.ExecuteResponse, list[torch.Tensor], float]:
        """Execute over kilnd's local socket; also returns the seconds spent
        writing inputs."""
        assert self._local is not None
        def encode(msg: tensor_pb2.Tensor, i: int, t: Any, as_blob: bool = False) -> None:
            self._encode_input(msg, i, t, ctx, as_blob)
        try:
            result = self._local.execute(request, inputs, ctx, encode)
        except FailedPreconditionError:
            # As over gRPC: the daemon lost the parameters; upload them once.
            if not weights:
                raise
            self.blobs.forget()
            model._request_cache = None
            self.blobs.ensure_tensors([weights[n] for n in model._param_names])
            result = self._local.execute(request, inputs, ctx, encode)
        return result.response, result.outputs, result.encode_s

    def execute(self, executable: tensor_pb2.Digest | str, inputs: Sequence[torch.Tensor],
                parameters: Sequence[tensor_pb2.Digest] = ()) -> list[torch.Tensor]:
        """Runs an executable by digest (low level; ``CompiledModel`` is the usual way)."""
        if isinstance(executable, str):
            executable = tensor_pb2.Digest(hash=executable)
        ctx = {"executable": executable.hash}
        request = executor_pb2.ExecuteRequest(executable=executable, parameters=list(parameters))
        self._encode_inputs(request, inputs, ctx)
        resp = self._rpc.call("kiln.v1.Executor/Execute", self._rpc.executor.Execute,
                              request, context=ctx)
        return [self._decode_output(i, o, ctx)[0] for i, o in enumerate(resp.outputs)]


def _run_decompositions(ep: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """``ep.run_decompositions()``, working around torch 2.5's attention bug.

    The scaled_dot_product_attention decomposition yields other strides than
    the kernel it replaces, so an ``aten.view`` after it (nn.MultiheadAttention,
    torchvision's ViT) fails to retrace with "Cannot view a tensor"
    (pytorch/pytorch#136543). The exported graph is functional, so ``reshape``
    means the same there: retry with the views as reshapes (restored after,
    the caller's program is left as it was).
    """
    try:
        return ep.run_decompositions()
    except (RuntimeError, ValueError) as e:
        if "Cannot view a tensor" not in str(e):
            raise
    gm = ep.graph_module
    views = [n for n in gm.graph.nodes
             if n.op == "call_function" and n.target is torch.ops.aten.view.default]
    for n in views:
        n.target = torch.ops.aten.reshape.default
    gm.recompile()
    try:
        return ep.run_decompositions()
    finally:
        for n in views:
            n.target = torch.ops.aten.view.default
        gm.recompile()


def _serialize_exported(ep: torch.export.ExportedProgram, name: str
                        ) -> tuple[SerializedGraph, Any, Any]:
    """Decomposes an ExportedProgram to core ATen and serialises it."""
    from torch.export.graph_signature import InputKind, OutputKind, TensorArgument

    ep = _run_decompositions(ep)
    sig = ep.graph_signature
    parameters: dict[str, torch.Tensor] = {}
    for spec in sig.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            if not isinstance(spec.arg, TensorArgument):
                raise UnsupportedOpError(f"user input {spec.arg} is not a tensor; "
                                         "Kiln inputs are tensors")
            continue
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            if spec.target in ep.state_dict:
                tensor = ep.state_dict[spec.target]
            elif spec.target in ep.constants:
                tensor = ep.constants[spec.target]
            else:
                raise UnsupportedOpError(f"{spec.kind.name.lower()} '{spec.target}' is in "
                                         "neither state_dict nor constants")
            parameters[spec.arg.name] = tensor
        else:
            raise UnsupportedOpError(f"exported input '{spec.arg}' of kind {spec.kind.name} "
                                     "is not supported")
    keep = []
    for i, spec in enumerate(sig.output_specs):
        if spec.kind == OutputKind.USER_OUTPUT:
            keep.append(i)
        else:
            raise UnsupportedOpError(
                f"the program has a {spec.kind.name} output ({spec.target}); Kiln runs "
                "inference graphs without mutations (put the model in eval mode)")
    graph_name = name or getattr(ep.module_call_graph[0], "fqn", "") or "exported"
    serialized = serialize_graph_module(ep.graph_module, parameters=parameters,
                                        name=graph_name, keep_outputs=keep)
    return serialized, ep.call_spec.out_spec, ep.call_spec.in_spec
