"""Writes the fuzz targets' seed corpora into tests/fuzz/corpus/<target>/
(checked in; rerun after a proto change): real graphs from the client's
exporter, the requests the client sends, records and tasks shaped like
kilnd's, the mdla artifacts (ONNX models) build/bin/kiln-compile makes of
the graphs the mdla target runs, the acap artifacts (xclbins) of them all,
and the frames a client sends on a direct channel. Run with the client venv's python from the repository root after a
build."""

from __future__ import annotations

import hashlib
import pathlib
import subprocess
import tempfile

import torch

import kiln.testing
from kiln.export import serialize_exported
from kiln.v1 import (agent_pb2, blobs_pb2, cache_pb2, compiler_pb2, devices_pb2,
                     executable_pb2, executor_pb2, tensor_pb2)

ROOT = pathlib.Path(__file__).parent / "corpus"
KILN_COMPILE = str(pathlib.Path(__file__).parents[2] / "build" / "bin" / "kiln-compile")
# The RPC fuzzer's method numbers (RpcRequestFuzzer.cpp).
COMPILE, EXECUTE, FIND_MISSING, WRITE, READ, LIST_DEVICES, STATS, GC, SALT, CONNECT = range(10)


class Conv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2).flatten(1)


def graphs():
    torch.manual_seed(0)
    models = [
        (kiln.testing.MLP(d_in=8, d_hidden=16, d_out=4).eval(), (torch.randn(2, 8),)),
        (Conv().eval(), (torch.randn(1, 3, 8, 8),)),
        (kiln.testing.EncoderBlock(d_model=16, n_heads=2, d_ff=32).eval(),
         (torch.randn(1, 4, 16),)),
    ]
    for i, (model, args) in enumerate(models):
        serialized, _, _ = serialize_exported(torch.export.export(model, args), f"g{i}")
        yield serialized.graph


def digest(data: bytes) -> tensor_pb2.Digest:
    return tensor_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def write(target: str, name: str, data: bytes) -> None:
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def record_for(graph) -> executable_pb2.ExecutableRecord:
    manifest = executable_pb2.ExecutableManifest(
        entry_symbol="kiln_invoke", target="cpu", triple="x86_64-unknown-linux-gnu",
        format="elf-shared-object", features="+avx2,+fma,-avx512f")
    for p in graph.parameters:
        manifest.parameters.add(name=p.value.name, type=p.value.type)
    for v in graph.inputs:
        manifest.inputs.add(name=v.name, type=v.type)
    return executable_pb2.ExecutableRecord(artifact=digest(b"artifact"), manifest=manifest)


def direct_channel_frames() -> None:
    """What a client sends on a direct channel (DirectChannelFrameFuzzer.cpp's
    manifest: f32 [16], i64 [4], f32 [2, 8]): an exchange request, and calls
    with their inputs in the buffer, in a mix, and inline."""
    write("fuzz_direct_channel", "exchange",
          executor_pb2.LocalClientFrame(
              exchange=executor_pb2.LocalExchange(size_bytes=65536)).SerializeToString())
    types = [tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_F32, shape=[16]),
             tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_I64, shape=[4]),
             tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_F32, shape=[2, 8])]
    for name, placed in (("all-in-buffer", [0, 1, 2]), ("mixed", [1]), ("inline", [])):
        call = executor_pb2.LocalExecute(request_id="r")
        offset = 0
        for i, t in enumerate(types):
            tensor = call.request.inputs.add(type=t)
            if i in placed:
                call.exchange_inputs.add(index=i, offset=offset)
                offset += 64
            else:
                tensor.data = b"\0" * (64 if i != 1 else 32)
        call.exchange_output_offset = offset
        call.exchange_output_bytes = 65536 - offset
        write("fuzz_direct_channel", name,
              executor_pb2.LocalClientFrame(execute=call).SerializeToString())
    # Three inputs of 21 KiB side by side in the 64 KiB buffer: one larger
    # extent from slices that overlap (what the agent must refuse).
    call = executor_pb2.LocalExecute(request_id="r")
    for i in range(3):
        call.request.inputs.add(
            type=tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_F32, shape=[5376]))
        call.exchange_inputs.add(index=i, offset=i * 21504)
    write("fuzz_direct_channel", "buffer-full",
          executor_pb2.LocalClientFrame(execute=call).SerializeToString())


def main() -> None:
    direct_channel_frames()
    all_graphs = list(graphs())
    for i, graph in enumerate(all_graphs):
        write("fuzz_graph_import", f"graph-{i}", graph.SerializeToString())
        record = record_for(graph)
        write("fuzz_executable_record", f"record-{i}", record.SerializeToString())
        task = agent_pb2.Task(task_id=f"t{i}", device_id="local-cpu/0",
                              executable=digest(record.SerializeToString()), record=record,
                              request_id="r", signature=b"\0" * 64)
        for p in record.manifest.parameters:
            n = 4
            for d in p.type.shape:
                n *= d
            task.parameters.add(hash="ab" * 32, size_bytes=n)
        for v in record.manifest.inputs:
            task.inputs.add(type=v.type, data=b"\0" * 16)
        write("fuzz_agent_task", f"task-{i}",
              agent_pb2.DaemonMessage(task=task).SerializeToString())
        with tempfile.TemporaryDirectory() as tmp:
            source, model = pathlib.Path(tmp) / "graph.pb", pathlib.Path(tmp) / "model.onnx"
            source.write_bytes(graph.SerializeToString())
            compiled = subprocess.run([KILN_COMPILE, str(source), "--target", "mdla", "-o",
                                       str(model)], capture_output=True)
            if compiled.returncode == 0:  # graphs with ops the MDLA lacks have none
                write("fuzz_mdla_model", f"model-{i}", model.read_bytes())
            xclbin = pathlib.Path(tmp) / "model.xclbin"
            compiled = subprocess.run([KILN_COMPILE, str(source), "--target", "acap",
                                       "--acap-host-cpu", "x86-64-v2", "-o", str(xclbin)],
                                      capture_output=True)
            if compiled.returncode == 0:
                write("fuzz_acap_artifact", f"xclbin-{i}", xclbin.read_bytes())
        request = compiler_pb2.CompileRequest(graph=graph, target="cpu")
        write("fuzz_rpc_requests", f"compile-{i}",
              bytes([COMPILE]) + request.SerializeToString())
    rpc = {
        "execute": (EXECUTE, executor_pb2.ExecuteRequest(executable=digest(b"x"))),
        "find-missing": (FIND_MISSING, blobs_pb2.FindMissingRequest(digests=[digest(b"x")])),
        "write": (WRITE, blobs_pb2.WriteRequest(digest=digest(b"hello"), data=b"hello",
                                                finish_write=True)),
        "write-short": (WRITE, blobs_pb2.WriteRequest(digest=digest(b"hello"), data=b"hel")),
        "read": (READ, blobs_pb2.ReadRequest(digest=digest(b"hello"))),
        "list-devices": (LIST_DEVICES, devices_pb2.ListDevicesRequest(kind="cpu")),
        "stats": (STATS, cache_pb2.GetCacheStatsRequest()),
        "gc": (GC, cache_pb2.CollectGarbageRequest(target_bytes=1 << 20)),
        "salt": (SALT, cache_pb2.SetCacheSaltRequest(salt="s1")),
        "connect": (CONNECT, agent_pb2.AgentMessage(register=agent_pb2.RegisterAgent(
            agent_id="a", protocol_version=2,
            devices=[devices_pb2.Device(kind="cpu", properties={"cpu": "x86-64-v3"})]))),
    }
    for name, (method, message) in rpc.items():
        write("fuzz_rpc_requests", name, bytes([method]) + message.SerializeToString())


if __name__ == "__main__":
    main()
