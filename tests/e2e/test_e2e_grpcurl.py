"""The real grpcurl against a real kilnd: reflection lists and describes the
kiln.v1 API, ListDevices and a Compile from JSON work with no .proto files,
and grpc.health.v1 answers SERVING. grpcurl comes from scripts/install_deps.sh
(go install into ~/.cache/kiln/tools/bin; scripts/test.sh puts it on PATH)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

import kiln


def grpcurl() -> str:
    tools = pathlib.Path(os.environ.get("KILN_TOOLS_DIR",
                                        pathlib.Path.home() / ".cache/kiln/tools")) / "bin"
    exe = shutil.which("grpcurl") or shutil.which("grpcurl", path=str(tools))
    if not exe:
        pytest.fail(f"grpcurl is not on PATH nor in {tools}: run scripts/install_deps.sh",
                    pytrace=False)
    return exe


def call(address: str, *args: str, data: object | None = None, flags: tuple = ()) -> str:
    """``grpcurl -plaintext FLAGS [-d @] ADDRESS ARGS...`` with ``data`` as JSON on stdin."""
    cmd = [grpcurl(), "-plaintext", *flags, *(["-d", "@"] if data is not None else []),
           address, *args]
    proc = subprocess.run(cmd, input=json.dumps(data) if data is not None else None,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}"
    return proc.stdout


# One relu over a 2x3 f32 input, written as grpcurl JSON (proto3 JSON mapping).
RELU_REQUEST = {
    "target": "cpu",
    "graph": {
        "name": "relu_from_json",
        "inputs": [{"name": "x", "type": {"dtype": "DTYPE_F32", "shape": ["2", "3"]}}],
        "nodes": [{
            "op": "aten.relu.default",
            "arguments": [{"name": "self", "value": "x"}],
            "outputs": [{"name": "y", "type": {"dtype": "DTYPE_F32", "shape": ["2", "3"]}}],
        }],
        "outputs": ["y"],
    },
}


def test_list_services(kilnd):
    services = set(call(kilnd.address, "list").split())
    for s in ("kiln.v1.Compiler", "kiln.v1.Executor", "kiln.v1.Blobs", "kiln.v1.Devices",
              "kiln.v1.Cache",
              "grpc.health.v1.Health"):
        assert s in services, services
    assert any(s.startswith("grpc.reflection.") for s in services), services


def test_describe_graph_message(kilnd):
    out = call(kilnd.address, "describe", "kiln.v1.Graph")
    assert "message Graph {" in out
    for field in ("repeated .kiln.v1.Value inputs", "repeated .kiln.v1.Node nodes",
                  "repeated string outputs"):
        assert field in out, out


def test_list_devices(kilnd):
    resp = json.loads(call(kilnd.address, "kiln.v1.Devices/ListDevices", data={}))
    kinds = {d["kind"] for d in resp["devices"]}
    assert "cpu" in kinds, resp


def test_daemon_info(kilnd):
    resp = json.loads(call(kilnd.address, "kiln.v1.Daemon/GetInfo", data={}))
    assert resp["version"] == kiln.__version__, resp
    # grpcurl prints the proto field names.
    assert resp["compiler_build_id"].startswith(f"kiln-{kiln.__version__}+"), resp
    assert re.fullmatch(r"[0-9a-f]{32}", resp["daemon_id"]), resp
    assert "cpu" in resp["compile_targets"] and resp["client_protocol_version"] == 3, resp


def test_compile_from_json(kilnd):
    resp = json.loads(call(kilnd.address, "kiln.v1.Compiler/Compile", data=RELU_REQUEST))
    assert re.fullmatch(r"[0-9a-f]{64}", resp["executable"]["hash"]), resp
    assert resp["manifest"]["target"] == "cpu"
    assert [a["name"] for a in resp["manifest"]["inputs"]] == ["x"]


def test_health_check_serving(kilnd):
    # Through reflection alone: kilnd links the grpc.health.v1 descriptor, so
    # grpcurl needs no .proto or protoset for grpc++'s built-in health service.
    described = call(kilnd.address, "describe", "grpc.health.v1.Health")
    assert "rpc Check ( .grpc.health.v1.HealthCheckRequest )" in described, described
    resp = json.loads(call(kilnd.address, "grpc.health.v1.Health/Check", data={}))
    assert resp == {"status": "SERVING"}, resp
