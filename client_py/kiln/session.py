"""A session with one Kiln daemon: its channel, blob store, cache, Execute
transport, and compiling kiln.v1 graphs into :class:`CompiledModel` objects.

:class:`kiln.Client` is a Session plus the front door for models (exported
programs, fx graphs, TorchScript) and the features (placement, verify);
the features themselves take a Session, so nothing here or below reaches up
to them.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping, Sequence

import torch

from kiln.version import __version__ as client_version
from kiln._rpc import Rpc
from kiln.blobs import BlobClient
from kiln.cache import CacheClient
from kiln.compiled import CompiledModel, Runner, Verifier
from kiln.credentials import TlsConfig
from kiln.execution import Executor
from kiln.graph import CallConvention, SerializedGraph
from kiln.options import compile_options
from kiln.placement import log_placement
from kiln.v1 import compiler_pb2, daemon_pb2, devices_pb2, graph_pb2, placement_pb2, tensor_pb2
from kiln.v1 import executor_pb2

__all__ = ["Session", "DeviceInfo", "DaemonInfo"]


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """One device as ListDevices reports it."""

    id: str
    kind: str
    agent_id: str
    state: str
    queue_depth: int
    properties: dict[str, str]

    @property
    def simulated(self) -> bool:
        """Whether the device is a simulation (its properties name a
        ``simulator``: the qemu riscv64 devices, ``kiln-agent-mdla --simulate``,
        ``kiln-agent-acap --simulate``)."""
        return "simulator" in self.properties


@dataclasses.dataclass(frozen=True)
class DaemonInfo:
    """What a kilnd says of itself (kiln.v1.Daemon/GetInfo)."""

    version: str
    compiler_build_id: str
    daemon_id: str
    compile_targets: tuple[str, ...]
    client_protocol_version: int


def _us(v: int) -> float:
    return v / 1e6


class Session:
    """A connection to one Kiln daemon.

    Args:
        address: ``host:port`` of kilnd.
        timeout: deadline in seconds for each RPC (None: no deadline).
        tls: None (from ``KILN_TLS_CA``/``KILN_TLS_CERT``/``KILN_TLS_KEY``;
            plaintext when unset), True (the system's CA roots), a CA bundle
            path, a :class:`kiln.TlsConfig`, or False (plaintext).
        token: bearer token (None: ``KILN_TOKEN`` or ``KILN_TOKEN_FILE``).
        local: Execute over kilnd's local socket with tensors in memfds
            (True), or always over gRPC (False). None: when ``address`` is
            loopback, unless ``KILN_LOCAL_EXECUTE=0``. Either way the client
            falls back to gRPC when kilnd serves no socket or it cannot be
            reached from here.
        direct: on kilnd's local socket, ask for a direct channel to the
            device's agent for a model called again, and send its later
            calls there, past kilnd (True); never (False). None: unless
            ``KILN_DIRECT_EXECUTE=0``. Calls that keep or release held
            tensors, or pass blobs, always go to kilnd.
        connect_timeout: seconds a call waits for the daemon to be reachable
            (a restart) before failing UNAVAILABLE (None:
            ``KILN_CONNECT_TIMEOUT``, else 5).
    """

    #: The partition runner and verifier a model compiled here gets when the
    #: compile names none (a Client sets both; a bare Session has neither).
    default_runner: Runner | None = None
    default_verifier: Verifier | None = None

    def __init__(self, address: str, timeout: float | None = 300.0, *,
                 tls: TlsConfig | str | bool | None = None, token: str | None = None,
                 local: bool | None = None, direct: bool | None = None,
                 connect_timeout: float | None = None):
        self.address = address
        self.timeout = timeout
        self._rpc = Rpc(address, timeout, tls=tls, token=token,
                        connect_timeout=connect_timeout)
        self.blobs = BlobClient(self._rpc)
        self.cache = CacheClient(self._rpc)
        self.executor = Executor(self._rpc, self.blobs, local, direct)

    @property
    def rpc(self) -> Rpc:
        """The channel and its stubs (for features that send their own RPCs)."""
        return self._rpc

    @property
    def local_execute(self) -> bool:
        """Whether Execute goes over kilnd's local socket (tensors in memfds)
        rather than gRPC. Decided on first use: kilnd must serve the socket
        and it must be reachable from this process."""
        return self.executor.local

    def close(self) -> None:
        self.executor.close()
        self._rpc.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the daemon -----------------------------------------------------------

    def devices(self, kind: str = "") -> list[DeviceInfo]:
        """Every device of every connected agent (of ``kind`` when given)."""
        resp = self._rpc.call("kiln.v1.Devices/ListDevices", self._rpc.devices.ListDevices,
                              devices_pb2.ListDevicesRequest(kind=kind))
        return [DeviceInfo(id=d.id, kind=d.kind, agent_id=d.agent_id,
                           state=devices_pb2.DeviceState.Name(d.state),
                           queue_depth=d.queue_depth, properties=dict(d.properties))
                for d in resp.devices]

    def daemon_info(self) -> DaemonInfo:
        """The daemon's version, compiler build and process id."""
        resp = self._rpc.call("kiln.v1.Daemon/GetInfo", self._rpc.daemon.GetInfo,
                              daemon_pb2.GetDaemonInfoRequest())
        return DaemonInfo(resp.version, resp.compiler_build_id, resp.daemon_id,
                          tuple(resp.compile_targets), resp.client_protocol_version)

    @property
    def client_version(self) -> str:
        return client_version

    # --- compile --------------------------------------------------------------

    def send_compile(self, request: compiler_pb2.CompileRequest) -> compiler_pb2.CompileResponse:
        """One Compiler.Compile call, as is."""
        graph = ("<torchscript>" if request.HasField("torchscript")
                 else request.graph.name or "<unnamed>")
        return self._rpc.call("kiln.v1.Compiler/Compile", self._rpc.compiler.Compile, request,
                              context={"target": request.target, "graph": graph})

    def compile_request(self, request: compiler_pb2.CompileRequest, graph: graph_pb2.Graph | None,
                        parameters: Mapping[str, torch.Tensor] | None = None,
                        out_spec: Any = None, in_spec: Any = None, upload_seconds: float = 0.0,
                        runner: Runner | None = None, verifier: Verifier | None = None,
                        convention: CallConvention = CallConvention()) -> CompiledModel:
        """Sends ``request`` and binds the response into a CompiledModel (its
        graph: ``graph``, or the one the daemon returns for TorchScript;
        ``convention``: what a call does around the executable)."""
        t0 = time.perf_counter()
        resp = self.send_compile(request)
        timings = {
            "upload": upload_seconds,
            "compile": time.perf_counter() - t0,
            "server_queue": _us(resp.timings.queue_us),
            "server_compile": _us(resp.timings.compile_us),
        }
        graph = graph if graph is not None else resp.graph
        model = CompiledModel(self, resp, graph, parameters, timings, out_spec, in_spec,
                              request=request, runner=runner or self.default_runner,
                              verifier=verifier or self.default_verifier,
                              convention=convention)
        log_placement(graph.name, model.placement)
        return model

    def compile_graph(self, graph: graph_pb2.Graph, target: str = "cpu",
                      options: compiler_pb2.CompileOptions | Mapping[str, Any] | None = None,
                      *, parameters: Mapping[str, torch.Tensor] | None = None,
                      out_spec: Any = None, in_spec: Any = None,
                      upload_seconds: float = 0.0,
                      placement: placement_pb2.PlacementPolicy | None = None,
                      runner: Runner | None = None, verifier: Verifier | None = None,
                      convention: CallConvention = CallConvention()) -> CompiledModel:
        """Compiles a raw kiln.v1.Graph as is (its parameter blobs must be in
        the store already, e.g. uploaded with ``blobs``); ``placement`` is
        the fallback policy."""
        request = compiler_pb2.CompileRequest(graph=graph, target=target,
                                              options=compile_options(options),
                                              placement=placement)
        return self.compile_request(request, graph, parameters, out_spec, in_spec,
                                    upload_seconds, runner, verifier, convention)

    def compile_serialized(self, serialized: SerializedGraph, target: str = "cpu",
                           options: Any = None, out_spec: Any = None, in_spec: Any = None,
                           placement: placement_pb2.PlacementPolicy | None = None,
                           runner: Runner | None = None, verifier: Verifier | None = None
                           ) -> CompiledModel:
        """Uploads a serialised graph's weights, then compiles it."""
        t0 = time.perf_counter()
        self.blobs.ensure_tensors(list(serialized.parameters.values()))
        upload = time.perf_counter() - t0
        return self.compile_graph(serialized.graph, target=target, options=options,
                                  parameters=serialized.parameters, out_spec=out_spec,
                                  in_spec=in_spec, upload_seconds=upload, placement=placement,
                                  runner=runner, verifier=verifier,
                                  convention=serialized.convention)

    # --- execute --------------------------------------------------------------

    def release_held(self, handles: Sequence[str], timeout: float | None = None) -> int:
        """Releases held tensors (handles from ``keep_outputs``) without
        running anything; returns how many the daemon knew. With a
        ``timeout``, one attempt bounded by it (no waiting for kilnd to come
        back: what the release at exit uses)."""
        request = executor_pb2.ReleaseRequest(handles=list(handles))
        if timeout is not None:
            response = self._rpc.call_once("kiln.v1.Executor/Release",
                                           self._rpc.executor.Release, request, timeout)
        else:
            response = self._rpc.call("kiln.v1.Executor/Release",
                                      self._rpc.executor.Release, request)
        return response.released

    def execute(self, executable: tensor_pb2.Digest | str, inputs: Sequence[torch.Tensor],
                parameters: Sequence[tensor_pb2.Digest] = ()) -> list[torch.Tensor]:
        """Runs an executable by digest (low level; ``CompiledModel`` is the usual way)."""
        if isinstance(executable, str):
            executable = tensor_pb2.Digest(hash=executable)
        request = executor_pb2.ExecuteRequest(executable=executable, parameters=list(parameters))
        return self.executor.run(request, inputs, {"executable": executable.hash}).outputs
