"""An in-process stand-in for kilnd, for the client's unit tests.

It speaks the kiln.v1 Compiler/Executor/Blobs/Devices protocol over real gRPC
on loopback, and "compiles" a Graph by checking it and "executes" it by
interpreting each node with the torch op of the same name. That checks the
serialiser round trip (graph → same numbers as eager) and the client's side of
the protocol without the C++ daemon. It is not a reference for kilnd's
behaviour beyond the status codes the protos document.
"""

from __future__ import annotations

import hashlib
import threading
from concurrent import futures

import grpc
import torch

from kiln.tensors import PROTO_TO_DTYPE, tensor_bytes, tensor_from_bytes
from kiln.v1 import (blobs_pb2, blobs_pb2_grpc, compiler_pb2, compiler_pb2_grpc,
                     devices_pb2, devices_pb2_grpc, executable_pb2, executor_pb2,
                     executor_pb2_grpc, graph_pb2, tensor_pb2)

CHUNK = 1024 * 1024


def _resolve_op(name: str):
    parts = name.split(".")
    if len(parts) != 3 or parts[0] != "aten":
        return None
    packet = getattr(torch.ops.aten, parts[1], None)
    if packet is None:
        return None
    try:
        return getattr(packet, parts[2])
    except AttributeError:
        return None


def _op_report(g: graph_pb2.Graph) -> executable_pb2.OpReport:
    """Bytes only, one layer per node: enough to check the client's plumbing
    (kilnd's real analysis is tested by lit and the e2e tests)."""
    report = executable_pb2.OpReport()
    for n in g.nodes:
        out = sum(PROTO_TO_DTYPE[o.type.dtype].itemsize * int(torch.Size(o.type.shape).numel())
                  for o in n.outputs)
        report.layers.add(name=n.outputs[0].name if n.outputs else "", op=n.op,
                          activation_out_bytes=out, bytes_written=out)
    report.totals.activation_out_bytes = sum(l.activation_out_bytes for l in report.layers)
    report.totals.bytes_written = report.totals.activation_out_bytes
    return report


class FakeDaemon(compiler_pb2_grpc.CompilerServicer, executor_pb2_grpc.ExecutorServicer,
                 blobs_pb2_grpc.BlobsServicer, devices_pb2_grpc.DevicesServicer):
    def __init__(self):
        self.blobs: dict[str, bytes] = {}
        self.cache: dict[str, str] = {}           # compile key -> executable hash
        self.graphs: dict[str, graph_pb2.Graph] = {}
        self.lock = threading.Lock()
        self.writes: list[tuple[str, list[int]]] = []   # (digest, chunk sizes)
        self.in_transit: dict[str, bool] = {}   # digest -> WriteRequest.in_transit
        self.named_by_daemon: dict[str, bool] = {}  # digest -> sent without its hash
        #: Set to a status code and message: uploads without a hash get it.
        self.refuse_unnamed: tuple[grpc.StatusCode, str] | None = None
        #: Set: uploads without a hash are answered with this name.
        self.name_unnamed_as: tensor_pb2.Digest | None = None
        self.compiles = 0
        self.compile_requests: list[compiler_pb2.CompileRequest] = []
        self.executes: list[executor_pb2.ExecuteRequest] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        compiler_pb2_grpc.add_CompilerServicer_to_server(self, self.server)
        executor_pb2_grpc.add_ExecutorServicer_to_server(self, self.server)
        blobs_pb2_grpc.add_BlobsServicer_to_server(self, self.server)
        devices_pb2_grpc.add_DevicesServicer_to_server(self, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{port}"
        self.server.start()

    def stop(self):
        self.server.stop(None)

    # Blobs
    def FindMissing(self, request, context):
        return blobs_pb2.FindMissingResponse(
            missing_digests=[d for d in request.digests if d.hash not in self.blobs])

    def Write(self, request_iterator, context):
        digest, parts, sizes, in_transit = None, [], [], False
        for req in request_iterator:
            if digest is None:
                digest, in_transit = req.digest, req.in_transit
            if req.offset != sum(sizes):
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "chunk out of order")
            parts.append(req.data)
            sizes.append(len(req.data))
            if max(sizes) > CHUNK:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "chunk above 1 MiB")
        data = b"".join(parts)
        named = digest is not None and digest.hash
        if not named and in_transit and self.refuse_unnamed is not None:
            context.abort(*self.refuse_unnamed)
        if digest is None or len(data) != digest.size_bytes or (
                (named or not in_transit)
                and hashlib.sha256(data).hexdigest() != digest.hash):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "digest mismatch")
        # In transit without a hash: named here, as kilnd does.
        digest = tensor_pb2.Digest(hash=hashlib.sha256(data).hexdigest(),
                                   size_bytes=len(data))
        with self.lock:
            self.blobs[digest.hash] = data
            self.writes.append((digest.hash, sizes))
            self.in_transit[digest.hash] = in_transit
            self.named_by_daemon[digest.hash] = not named
        if not named and self.name_unnamed_as is not None:
            digest = self.name_unnamed_as
        return blobs_pb2.WriteResponse(committed_size=len(data), digest=digest)

    def Read(self, request, context):
        data = self.blobs.get(request.digest.hash)
        if data is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"blob {request.digest.hash} not found")
        for off in range(0, max(len(data), 1), CHUNK):
            yield blobs_pb2.ReadResponse(data=data[off:off + CHUNK])

    # Devices
    def ListDevices(self, request, context):
        return devices_pb2.ListDevicesResponse(devices=[devices_pb2.Device(
            id="fake/0", kind="cpu", agent_id="fake", state=devices_pb2.DEVICE_STATE_READY)])

    # Compiler
    def Compile(self, request, context):
        g = request.graph
        if request.target != "cpu":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown target '{request.target}'")
        for n in g.nodes:
            if _resolve_op(n.op) is None:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown op '{n.op}'")
        for p in g.parameters:
            if p.digest.hash not in self.blobs:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                              f"parameter '{p.value.name}' blob {p.digest.hash} is not in the store")
        keyed = graph_pb2.Graph()
        keyed.CopyFrom(g)
        keyed.name = ""
        for p in keyed.parameters:
            p.ClearField("digest")
        key = hashlib.sha256(keyed.SerializeToString(deterministic=True)
                             + request.target.encode()).hexdigest()
        hit = key in self.cache
        if not hit:
            self.compiles += 1
            self.cache[key] = hashlib.sha256(b"exe" + key.encode()).hexdigest()
            self.graphs[self.cache[key]] = keyed
        manifest = executable_pb2.ExecutableManifest(
            entry_symbol="kiln_main", target="cpu", format="fake",
            parameters=[executable_pb2.ManifestArgument(name=p.value.name, type=p.value.type)
                        for p in g.parameters],
            inputs=[executable_pb2.ManifestArgument(name=v.name, type=v.type) for v in g.inputs])
        self.compile_requests.append(request)
        return compiler_pb2.CompileResponse(
            executable=tensor_pb2.Digest(hash=self.cache[key], size_bytes=1),
            manifest=manifest, cache_hit=hit, compile_key=key,
            stages=self._stages(g) if request.options.dump_stages else [],
            op_report=_op_report(g))

    def _stages(self, g: graph_pb2.Graph) -> list[executable_pb2.StageDump]:
        """A recognisable text per pipeline stage, stored as blobs."""
        dumps = []
        for stage in ("aten", "linalg", "llvm-dialect", "llvm-ir", "asm"):
            text = f"// fake {stage} stage of {g.name or 'graph'}: {len(g.nodes)} nodes\n".encode()
            digest = hashlib.sha256(text).hexdigest()
            with self.lock:
                self.blobs[digest] = text
            dumps.append(executable_pb2.StageDump(
                stage=stage, blob=tensor_pb2.Digest(hash=digest, size_bytes=len(text))))
        return dumps

    # Executor
    def _tensor(self, t: tensor_pb2.Tensor, context) -> torch.Tensor:
        if t.WhichOneof("payload") == "blob":
            data = self.blobs.get(t.blob.hash)
            if data is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"blob {t.blob.hash} missing")
        else:
            data = t.data
        return tensor_from_bytes(data, PROTO_TO_DTYPE[t.type.dtype], t.type.shape)

    def parameters_of(self, request: executor_pb2.ExecuteRequest) -> list[tensor_pb2.Digest]:
        """The parameters an Execute named: its list, or its set's."""
        if request.HasField("parameter_set"):
            listing = self.blobs[request.parameter_set.hash]
            return list(executor_pb2.ParameterSet.FromString(listing).parameters)
        return list(request.parameters)

    def Execute(self, request, context):
        self.executes.append(request)
        g = self.graphs.get(request.executable.hash)
        if g is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"executable {request.executable.hash} not found")
        env: dict[str, torch.Tensor] = {}
        parameters = list(request.parameters)
        if request.HasField("parameter_set"):  # as kilnd: one blob names them
            if parameters:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              "give parameters or parameter_set, not both")
            listing = self.blobs.get(request.parameter_set.hash)
            if listing is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                              f"parameter_set {request.parameter_set.hash} missing")
            parameters = list(executor_pb2.ParameterSet.FromString(listing).parameters)
        if len(parameters) != len(g.parameters):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "wrong number of parameters")
        for p, d in zip(g.parameters, parameters):
            if d.hash not in self.blobs:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"blob {d.hash} missing")
            env[p.value.name] = tensor_from_bytes(self.blobs[d.hash],
                                                  PROTO_TO_DTYPE[p.value.type.dtype],
                                                  p.value.type.shape)
        if len(request.inputs) != len(g.inputs):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"expected {len(g.inputs)} inputs, got {len(request.inputs)}")
        for v, t in zip(g.inputs, request.inputs):
            if list(t.type.shape) != list(v.type.shape) or t.type.dtype != v.type.dtype:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              f"input '{v.name}': expected {list(v.type.shape)}, "
                              f"got {list(t.type.shape)}")
            env[v.name] = self._tensor(t, context)
        for n in g.nodes:
            op = _resolve_op(n.op)
            kwargs: dict = {}
            schema = {a.name: a for a in op._schema.arguments}
            for a in n.arguments:
                if a.WhichOneof("kind") == "value":
                    v = env[a.value]
                    if "[]" in str(schema[a.name].type):
                        kwargs.setdefault(a.name, []).append(v)
                    else:
                        kwargs[a.name] = v
                else:
                    at = a.attribute
                    kind = at.WhichOneof("kind")
                    val = {"i": lambda: at.i, "f": lambda: at.f, "b": lambda: at.b,
                           "s": lambda: at.s, "ints": lambda: list(at.ints.values),
                           "floats": lambda: list(at.floats.values),
                           "dtype": lambda: PROTO_TO_DTYPE[at.dtype],
                           "none": lambda: None}[kind]()
                    kwargs[a.name] = val
            result = op(**kwargs)
            # Kiln values are dense row-major values (layout arguments are not
            # serialised), so materialise every result that way.
            if isinstance(result, torch.Tensor):
                result = result.contiguous()
            else:
                result = [r.contiguous() for r in result]
            if len(n.outputs) == 1 and isinstance(result, torch.Tensor):
                env[n.outputs[0].name] = result
            else:
                for o, r in zip(n.outputs, result):
                    env[o.name] = r
        outs = []
        for name in g.outputs:
            t = env[name]
            outs.append(tensor_pb2.Tensor(
                type=tensor_pb2.TensorType(dtype=[k for k, v in PROTO_TO_DTYPE.items()
                                                  if v == t.dtype][0], shape=list(t.shape)),
                data=tensor_bytes(t)))
        return executor_pb2.ExecuteResponse(outputs=outs, device_id="fake/0")
