"""The compiled-model object: an executable on the daemon plus the weights it
was compiled with, callable like the model.

A :class:`CompiledModel` knows how to run itself (through its
:class:`kiln.session.Session`) and how to get compiled again: it keeps the
CompileRequest it came from, so when the daemon no longer has its executable
(a restart on an empty cache) a call recompiles it once, logs that it did,
and runs. What runs a partitioned graph and what checks a call's numbers are
features above this layer; whoever makes the model hands them in
(``runner``, ``verifier``).
"""

from __future__ import annotations

import logging
import operator
import time
import types
import weakref
from typing import Any, Callable, Mapping, Protocol, Sequence

import torch
from torch.utils import _pytree as pytree

from kiln.blobs import BlobClient, tensor_digest
from kiln.counters import device_counters
from kiln.errors import InvalidArgumentError, KilnError, NotFoundError
from kiln.execution import Executor, StaleRequest
from kiln.graph import CallConvention
from kiln.op_report import OpReport
from kiln.placement import PlacementReport
from kiln.rng import fresh_seed, seed_input_of
from kiln.v1 import compiler_pb2, executable_pb2, executor_pb2, graph_pb2, placement_pb2, tensor_pb2

__all__ = ["CompiledModel", "ModelSession", "Runner", "Verifier", "producer_of"]


class ModelSession(Protocol):
    """What a CompiledModel needs of its connection (kiln.session.Session
    is one): the blob store, the Execute transport, and Compile."""

    blobs: BlobClient
    executor: Executor

    def send_compile(self, request: compiler_pb2.CompileRequest
                     ) -> compiler_pb2.CompileResponse: ...

log = logging.getLogger("kiln")

# A model with this many weights names them by one ParameterSet blob per call
# instead of one digest each (kilnd and the agent read the set once); fewer
# travel as a list, which costs no extra blob.
PARAMETER_SET_MIN = 8

#: Runs a partitioned model: (model, inputs in graph order, parameter
#: overrides) -> outputs (kiln.partition.run_partitioned).
Runner = Callable[["CompiledModel", Sequence[Any], "Mapping[str, torch.Tensor] | None"],
                  "list[torch.Tensor]"]
#: Checks one call: (model, flat inputs, outputs) -> a report, or raises
#: VerificationError (kiln.verify.verify_execution).
Verifier = Callable[["CompiledModel", Sequence[Any], Sequence[torch.Tensor]], Any]


def _us(v: int) -> float:
    return v / 1e6


# Tensors returned by CompiledModel calls: id -> (weak reference, model). Not
# a WeakKeyDictionary: its lookups compare tensors with ==, which is
# elementwise. An entry leaves when its tensor dies.
_PRODUCERS: dict[int, tuple[weakref.ref, "CompiledModel"]] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _PRODUCERS.get(key)
    if entry is not None and entry[0] is ref:
        del _PRODUCERS[key]


def _remember_outputs(model: "CompiledModel", outputs: Sequence[Any]) -> None:
    """Notes that ``outputs`` came from ``model`` (for kiln.get_mlir(tensor)),
    without keeping them alive."""
    for t in outputs:
        if isinstance(t, torch.Tensor):
            key = id(t)
            try:
                ref = weakref.ref(t, lambda r, key=key: _forget(key, r))
            except TypeError:  # a tensor subclass without weak references
                continue
            _PRODUCERS[key] = (ref, model)


_VERSION = operator.attrgetter("_version")
_DTYPE = operator.attrgetter("dtype")


def _weight_state(tensors: list[torch.Tensor]) -> tuple[list, ...]:
    """What says that weight tensors are unchanged since the last call: the
    versions, addresses, strides, dtypes and conjugate and negative bits
    (what the tensor digest cache keys on too: `p.data = ...` can keep the
    object, its version and its address and change the layout, or make it
    a conjugate view). Column by column: C-level loops, a fraction of a
    per-tensor tuple's cost for hundreds of weights."""
    return (list(map(_VERSION, tensors)), list(map(torch.Tensor.data_ptr, tensors)),
            list(map(torch.Tensor.stride, tensors)), list(map(_DTYPE, tensors)),
            list(map(torch.Tensor.is_conj, tensors)), list(map(torch.Tensor.is_neg, tensors)))


def _same_weights(cached: tuple, tensors: list[torch.Tensor], state: tuple) -> bool:
    """Whether a cached request's (tensors, state, template) are these tensor
    objects in this state."""
    return (len(cached[0]) == len(tensors) and all(map(operator.is_, cached[0], tensors))
            and cached[1] == state)


class _LastCall:
    """A call's response and the client's own seconds: what
    ``last_timings`` reports, decoded when read. It holds the response
    (inline outputs included, at most the frame's inline budget) until the
    model's next call."""

    __slots__ = ("response", "upload", "download", "wall")

    def __init__(self, response: executor_pb2.ExecuteResponse, upload: float,
                 download: float, wall: float):
        self.response = response
        self.upload = upload
        self.download = download
        self.wall = wall

    def timings(self) -> dict[str, float]:
        tm = self.response.timings
        return {"upload": self.upload, "queue": _us(tm.queue_us), "fetch": _us(tm.fetch_us),
                "load": _us(tm.load_us), "run": _us(tm.run_us), "total": _us(tm.total_us),
                "download": self.download, "wall": self.wall}


def _copy_request(template: executor_pb2.ExecuteRequest) -> executor_pb2.ExecuteRequest:
    request = executor_pb2.ExecuteRequest()
    request.CopyFrom(template)
    return request


def producer_of(t: torch.Tensor) -> "CompiledModel | None":
    """The CompiledModel whose call returned ``t``, if one did."""
    entry = _PRODUCERS.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


class CompiledModel:
    """An executable on the daemon plus the weights it was compiled with.

    Calling it runs it remotely: ``outputs = compiled(*inputs)``. The daemon
    validates inputs against the manifest; mismatches raise
    :class:`kiln.errors.InvalidArgumentError`.

    Attributes:
        digest: hex digest of the executable (its identity in the store).
        cache_hit: True when the daemon served the executable from its cache.
        remote_cache_hit: True when that cache was the shared tier (kilnd
            ``--remote-cache``): another replica compiled it.
        compile_key: hex compile key (graph without weights, target, options).
        manifest: the ExecutableManifest message.
        timings: client-side seconds per phase: ``upload`` (weights), ``compile``
            (the Compile RPC), plus ``server_queue``/``server_compile``.
        last_timings: seconds per phase of the latest call: ``upload`` (inputs
            sent as blobs, or written into memfds over the local socket),
            ``queue``, ``fetch``, ``load``, ``run``, ``total`` (as the daemon
            and agent measured them), ``download`` (blob outputs) and ``wall``
            (the whole call, client-side).
        last_counters: what the device counted on the latest call:
            ``instructions`` (guest instructions retired; simulated devices
            such as the qemu agent's riscv64 ones count them, others report
            0), ``estimated_cycles`` (the mdla agent's estimate from its
            throughput model; 0 elsewhere) and, from devices computing in a
            narrower type than the graph's (mdla: 16-bit fixed point),
            ``numeric_error``: a dict of ``numeric_type``, ``max_abs_error``,
            ``max_abs_reference`` (max |f32 result|) and ``rms_error``.
        last_transport: how the latest call's tensors travelled: ``"local"``
            (kilnd's local socket, memfds), ``"direct"`` (a direct channel
            to the device's agent, memfds, past kilnd) or ``"grpc"``.
        recompiles: how many times a call found the executable gone from the
            daemon and compiled it again.
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

    def __init__(self, session: ModelSession, response: compiler_pb2.CompileResponse,
                 graph: graph_pb2.Graph, parameters: Mapping[str, torch.Tensor] | None,
                 timings: dict[str, float], out_spec: pytree.TreeSpec | None = None,
                 in_spec: pytree.TreeSpec | None = None, *,
                 request: compiler_pb2.CompileRequest | None = None,
                 runner: Runner | None = None, verifier: Verifier | None = None,
                 convention: CallConvention = CallConvention()):
        self._session = session
        self._response = response
        self._graph = graph
        self._parameters = dict(parameters or {})
        self._out_spec = out_spec
        self._in_spec = in_spec
        #: The request it was compiled from (None: it cannot be recompiled).
        self._request = request
        self._runner = runner
        self._verifier = verifier
        #: What a call does around the executable: writes the new values of
        #: mutated inputs back, returns Python numbers for scalar outputs.
        self.convention = convention
        # Decided once: most programs only map tensors to tensors.
        self._applies_convention = convention != CallConvention()
        self.timings = timings
        #: The latest call's report; last_timings, last_counters and
        #: last_device_id decode it when first read (most calls never are).
        self._last_call: _LastCall | None = None
        self._last_timings: dict[str, float] | None = None
        self._last_counters: dict[str, Any] | None = None
        self._last_device_id: str | None = None
        self.last_transport = ""
        self.recompiles = 0
        #: The CompileOptions it was compiled with (kiln.get_mlir reuses them).
        self.options = compiler_pb2.CompileOptions()
        if request is not None and request.HasField("options"):
            self.options.CopyFrom(request.options)
        #: The PlacementPolicy it was compiled under (verify's probes reuse it).
        self.placement_policy = placement_pb2.PlacementPolicy()
        if request is not None and request.HasField("placement"):
            self.placement_policy.CopyFrom(request.placement)
        self._bind_manifest()

    def _bind_manifest(self) -> None:
        graph, response = self._graph, self._response
        graph_params = {p.value.name: p.digest for p in graph.parameters}
        order = [a.name for a in response.manifest.parameters] or list(graph_params)
        try:
            self._param_digests = [graph_params[n] for n in order]
        except KeyError as e:
            raise KilnError(f"the executable's manifest names parameter {e} which the "
                            "compiled graph does not have", context={"executable": self.digest})
        self._param_names = order
        # Asked on every call: decided once per response.
        self._partitioned = PlacementReport(response.placement).partitioned
        # The last call's weights (the tensors, their versions, storage and
        # layout) and the request they made: a call with the same unmodified
        # tensors reuses it instead of looking up each digest again
        # (mobilenet has 244). It holds the tensors, so their addresses are
        # not reused while it stands.
        self._request_cache: tuple[list[torch.Tensor], tuple[list, ...],
                                   executor_pb2.ExecuteRequest] | None = None
        # Whether a call may send the cached request and check the weights
        # while the device runs it (False after they changed, until a call
        # finds them unchanged again).
        self._defer_weight_check = True
        # The seed of a graph with random ops (kiln.rng): every call fills it
        # in at its position among the manifest's inputs.
        self.seed_input = seed_input_of(graph)
        graph_inputs = [v.name for v in graph.inputs if v.name != self.seed_input]
        manifest_inputs = [a.name for a in response.manifest.inputs]
        self._seed_slot = (manifest_inputs.index(self.seed_input)
                           if self.seed_input in manifest_inputs else None)
        manifest_inputs = [n for n in manifest_inputs if n != self.seed_input]
        # Position in the caller's argument list of each manifest input.
        if sorted(manifest_inputs) == sorted(graph_inputs) and \
                len(set(graph_inputs)) == len(graph_inputs):
            self._input_order = [graph_inputs.index(n) for n in manifest_inputs]
        else:
            self._input_order = list(range(len(graph_inputs)))

    # --- what it is ---------------------------------------------------------

    @property
    def session(self) -> ModelSession:
        """The daemon connection it runs through."""
        return self._session

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
    def remote_cache_hit(self) -> bool:
        return self._response.remote_cache_hit

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
        return self._partitioned

    @property
    def graph(self) -> graph_pb2.Graph:
        return self._graph

    @property
    def parameters(self) -> Mapping[str, torch.Tensor]:
        """The weights it runs with, by graph parameter name (a read-only
        view, not a copy; :meth:`hold_parameter` adds one)."""
        return types.MappingProxyType(self._parameters)

    def hold_parameter(self, name: str, tensor: torch.Tensor) -> None:
        """Keeps ``tensor`` as the weight ``name`` (one read back from the
        daemon's store, for a CPU segment)."""
        self._parameters[name] = tensor

    @property
    def input_order(self) -> list[int]:
        """For each manifest input a caller passes, its position among the
        graph's (both less the seed of a graph with random ops)."""
        return list(self._input_order)

    def with_seed(self, inputs: Sequence[Any]) -> Sequence[Any]:
        """``inputs`` in manifest order less the seed, with a fresh seed in
        its place when the graph draws random numbers (kiln.rng)."""
        if self._seed_slot is None:
            return inputs
        seeded = list(inputs)
        seeded.insert(self._seed_slot, fresh_seed())
        return seeded

    @property
    def call_inputs(self) -> list[graph_pb2.Value]:
        """The graph's inputs a caller passes: all but the seed of a graph
        with random ops, which each call draws (kiln.rng)."""
        return [v for v in self._graph.inputs if v.name != self.seed_input]

    @property
    def in_spec(self) -> pytree.TreeSpec | None:
        return self._in_spec

    @property
    def out_spec(self) -> pytree.TreeSpec | None:
        return self._out_spec

    @property
    def op_report(self) -> OpReport:
        """Per-layer MACs, FLOPs, parameter and activation bytes, and totals,
        from the daemon's analysis of the ATen-level module (every compile
        returns it, cache hits included); ``print()`` it for a table."""
        return OpReport(self._response.op_report)

    def stage_dumps(self) -> dict[str, str]:
        """The module after each compiler stage (aten, linalg, llvm-dialect,
        llvm-ir, asm), in pipeline order. Asked of the daemon on first use
        when the compile did not ask for them: the same executable, whose
        stages kilnd records once (no second executable). Read from the
        daemon's blob store on each call."""
        if not self._response.stages and self._request is not None and \
                not self._request.options.dump_stages:
            request = compiler_pb2.CompileRequest()
            request.CopyFrom(self._request)
            request.options.dump_stages = True
            response = self._session.send_compile(request)
            if response.executable.hash != self.digest:
                raise KilnError(f"the daemon dumped the stages of executable "
                                f"{response.executable.hash[:12]}, not of this model's",
                                context={"executable": self.digest})
            self._response.stages.extend(response.stages)
            self._request.options.dump_stages = True  # asked once; the daemon had none to give
        return {stage.stage: self._session.blobs.read(stage.blob).decode()
                for stage in self._response.stages}

    def __repr__(self) -> str:
        if self.partitioned:
            return (f"CompiledModel(partitioned, target={self.target!r}, "
                    f"segments={len(self.placement.segments)}, cache_hit={self.cache_hit})")
        return (f"CompiledModel(digest={self.digest[:12]}..., target={self.manifest.target!r}, "
                f"cache_hit={self.cache_hit})")

    # --- running it ---------------------------------------------------------

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
        if self._applies_convention:
            flat = self.convention.with_state(flat)
        ordered = ([flat[i] for i in self._input_order]
                   if len(flat) == len(self._input_order) else flat)
        outputs = self.run(ordered)
        if self.verify if verify is None else verify:
            if self._verifier is None:
                raise KilnError("this model was made without a verifier; compile it through "
                                "kiln.Client to verify its calls")
            self.last_verification = self._verifier(self, flat, outputs)
        if self._applies_convention:
            outputs = self.convention.apply(flat, outputs)
        if self._out_spec is not None:
            return pytree.tree_unflatten(outputs, self._out_spec)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run(self, inputs: Sequence[Any],
            parameters: Mapping[str, torch.Tensor] | None = None,
            keep_outputs: Sequence[int] = (), release: Sequence[str] = ()) -> list[Any]:
        """Runs it on ``inputs`` in manifest (= Graph.inputs) order, less
        the seed of a graph with random ops, which each call draws
        (kiln.rng); ``parameters`` (name -> tensor) overrides the weights it
        was compiled with (kiln.backend passes the live ones).

        ``keep_outputs`` (indices) stay on the device: they come back as
        :class:`kiln.tensors.HeldTensor` handles, which later calls take as
        inputs (and then run on that device). ``release`` names handles the
        caller is done with."""
        if (keep_outputs or release) and self.partitioned:
            raise InvalidArgumentError("a partitioned model (some ops on the host CPU) cannot "
                                       "keep outputs on a device")
        if keep_outputs or release:
            return self._execute(inputs, parameters, keep_outputs, release)
        if self.partitioned:
            if self._runner is None:
                raise KilnError("this model is partitioned and was made without a runner "
                                "for its CPU segments; compile it through kiln.Client")
            return self._runner(self, inputs, parameters)
        try:
            return self._execute(inputs, parameters)
        except NotFoundError as err:
            if self._request is None:
                raise
            self._recompile(err)
            return self._execute(inputs, parameters)

    def _recompile(self, err: NotFoundError) -> None:
        """The daemon lost the executable: compile it again, once."""
        assert self._request is not None
        log.warning("kiln: the daemon no longer has executable %s of graph %r (%s); "
                    "compiling it again", self.digest[:12],
                    self._graph.name or "<unnamed>", err.details)
        self._session.blobs.forget()
        self._request_cache = None  # it names the old executable
        self._session.blobs.ensure_tensors(list(self._parameters.values()))
        self._response = self._session.send_compile(self._request)
        if self._request.HasField("torchscript"):
            self._graph = self._response.graph  # converted again by the daemon
        self.recompiles += 1
        self._bind_manifest()

    @property
    def last_timings(self) -> dict[str, float]:
        if self._last_timings is None:
            self._last_timings = self._last_call.timings() if self._last_call else {}
        return self._last_timings

    @last_timings.setter
    def last_timings(self, value: dict[str, float]) -> None:
        self._last_timings = value  # a partitioned model's sums

    @property
    def last_counters(self) -> dict[str, Any]:
        if self._last_counters is None:
            self._last_counters = (device_counters(self._last_call.response.counters)
                                   if self._last_call else {})
        return self._last_counters

    @last_counters.setter
    def last_counters(self, value: dict[str, Any]) -> None:
        self._last_counters = value

    @property
    def last_device_id(self) -> str:
        if self._last_device_id is None:
            self._last_device_id = self._last_call.response.device_id if self._last_call else ""
        return self._last_device_id

    @last_device_id.setter
    def last_device_id(self, value: str) -> None:
        self._last_device_id = value

    def _weights(self, parameters: Mapping[str, torch.Tensor] | None
                 ) -> Mapping[str, torch.Tensor]:
        return self._parameters if parameters is None else parameters

    def _execute(self, inputs: Sequence[Any],
                 parameters: Mapping[str, torch.Tensor] | None,
                 keep_outputs: Sequence[int] = (), release: Sequence[str] = ()
                 ) -> list[Any]:
        context = {"executable": self.digest}
        wall0 = time.perf_counter()
        inputs = self.with_seed(inputs)
        weights = self._weights(parameters)
        t0 = time.perf_counter()
        # A call that keeps or releases nothing checks that the weights are
        # unchanged while the device works (hundreds of tensors take ~0.15
        # ms); a dropped reply would lose kept outputs, or releases. Not
        # after weights changed: calls that switch weights would run twice.
        request, still_current = self._request_for(
            weights, defer_check=(self._defer_weight_check and not keep_outputs
                                  and not release))
        if keep_outputs or release:
            request.keep_outputs.extend(keep_outputs)
            request.release.extend(release)
        prepare = time.perf_counter() - t0

        def reupload() -> None:
            self._request_cache = None
            self._session.blobs.ensure_tensors(self._named_blobs(
                [weights[n] for n in self._param_names])[0])

        try:
            run = self._session.executor.run(request, inputs, context,
                                             reupload if weights else None, still_current)
        except StaleRequest:
            # The weights changed since the last call: that call's request
            # ran with the old ones and was dropped. Upload and run again.
            self._defer_weight_check = False
            t0 = time.perf_counter()
            request, _ = self._request_for(weights)
            prepare += time.perf_counter() - t0
            run = self._session.executor.run(request, inputs, context, reupload)
        self.last_transport = run.transport
        self._last_call = _LastCall(run.response, prepare + run.upload, run.download,
                                    time.perf_counter() - wall0)
        self._last_timings = self._last_counters = self._last_device_id = None
        _remember_outputs(self, run.outputs)
        return run.outputs

    def _request_for(self, weights: Mapping[str, torch.Tensor] | None,
                     defer_check: bool = False
                     ) -> tuple[executor_pb2.ExecuteRequest, Callable[[], bool] | None]:
        """An ExecuteRequest naming the executable and the weights (uploaded
        when the daemon lacks them): their digests, or for a model with
        PARAMETER_SET_MIN or more, the digest of one ParameterSet blob that
        lists them. The same unmodified weight tensors as the last call reuse
        its request.

        With ``defer_check``, the last call's request comes back unchecked,
        with the check to run later (True: the weights are those it names);
        otherwise the check is None."""
        if not weights:
            request = executor_pb2.ExecuteRequest(executable=self.executable)
            request.parameters.extend(self._param_digests)
            return request, None
        cached = self._request_cache
        if defer_check and cached is not None:
            return _copy_request(cached[2]), lambda: self._names_weights(cached, weights)
        tensors = list(map(weights.__getitem__, self._param_names))
        state = _weight_state(tensors)
        if cached is not None and _same_weights(cached, tensors, state):
            self._defer_weight_check = True  # unchanged again
            return _copy_request(cached[2]), None
        blobs, parameter_set = self._named_blobs(tensors)
        digests, _ = self._session.blobs.ensure_tensors(blobs)
        request = executor_pb2.ExecuteRequest(executable=self.executable)
        if parameter_set is not None:
            request.parameter_set.CopyFrom(digests[-1])
        else:
            request.parameters.extend(digests)
        self._request_cache = (tensors, state, _copy_request(request))
        return request, None

    def _names_weights(self, cached: tuple, weights: Mapping[str, torch.Tensor]) -> bool:
        """Whether the cached request (tensors, state, template) names
        ``weights`` as they are now: the same tensor objects, unmodified."""
        tensors = list(map(weights.__getitem__, self._param_names))
        return _same_weights(cached, tensors, _weight_state(tensors))

    @staticmethod
    def _named_blobs(tensors: list[torch.Tensor]
                     ) -> tuple[list[torch.Tensor], torch.Tensor | None]:
        """The blobs a request for these weights names: the weights, and for
        PARAMETER_SET_MIN or more, last, their ParameterSet (also returned)."""
        if len(tensors) < PARAMETER_SET_MIN:
            return tensors, None
        listing = executor_pb2.ParameterSet(parameters=[tensor_digest(t) for t in tensors])
        parameter_set = torch.frombuffer(bytearray(listing.SerializeToString()),
                                         dtype=torch.uint8)
        return [*tensors, parameter_set], parameter_set
