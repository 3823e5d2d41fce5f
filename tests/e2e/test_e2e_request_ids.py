"""Request ids: the client sends one per call (kiln-request-id metadata), the
daemon ends error messages with it and logs it, and typed errors expose it."""

import json

import pytest
import torch

import kiln
from kiln import _rpc
from kiln.testing import MLP
from kiln.v1 import compiler_pb2, graph_pb2, tensor_pb2
from support import Kilnd, wait_until

F32 = tensor_pb2.DTYPE_F32


def relu_graph() -> graph_pb2.Graph:
    g = graph_pb2.Graph(name="relu")
    x = g.inputs.add(name="x", type=tensor_pb2.TensorType(dtype=F32, shape=[4]))
    n = g.nodes.add(op="aten.relu.default")
    n.arguments.add(name="self", value="x")
    n.outputs.add(name="y", type=x.type)
    g.outputs.append("y")
    return g


def test_error_carries_the_id_the_client_sent_and_the_log_has_it(kilnd, client):
    with pytest.raises(kiln.InvalidArgumentError) as info:
        client.compile_graph(relu_graph(), target="no-such-target")
    rid = info.value.request_id
    assert rid and len(rid) == 32 and int(rid, 16) >= 0, rid
    assert info.value.details.endswith(f"(request {rid})"), info.value.details
    wait_until(lambda: rid in kilnd.log_path.read_text(errors="replace"),
               f"request id {rid} in {kilnd.log_path}")
    line = next(l for l in kilnd.log_path.read_text().splitlines() if rid in l)
    assert "no-such-target" in line, line


def test_caller_chosen_request_id_is_used(kilnd, client):
    rpc = client._rpc
    request = compiler_pb2.CompileRequest(graph=relu_graph(), target="no-such-target")
    with pytest.raises(kiln.InvalidArgumentError) as info:
        rpc.call("kiln.v1.Compiler/Compile", rpc.compiler.Compile, request,
                 request_id="my-trace-0042")
    assert info.value.request_id == "my-trace-0042"
    assert info.value.details.endswith("(request my-trace-0042)")


def test_every_call_gets_a_fresh_id(client):
    ids = set()
    for _ in range(3):
        with pytest.raises(kiln.InvalidArgumentError) as info:
            client.compile_graph(relu_graph(), target="no-such-target")
        ids.add(info.value.request_id)
    assert len(ids) == 3, ids


def test_json_logs_carry_request_id_down_to_the_agent(tmp_path):
    """--log-format json: every line is one JSON object; the Execute that fails
    on the agent is logged by kilnd and by the agent under the same id."""
    d = Kilnd(tmp_path, tmp_path / "cache", extra_args=("--log-format", "json"))
    d.start()
    try:
        with kiln.Client(d.address, timeout=120) as client:
            with pytest.raises(kiln.InvalidArgumentError) as info:
                client.compile_graph(relu_graph(), target="no-such-target")
            rid = info.value.request_id
            torch.manual_seed(0)
            model = MLP(d_in=8, d_hidden=8, d_out=4).eval()
            x = torch.randn(2, 8)
            compiled = client.compile(torch.export.export(model, (x,)))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)

        def records():
            out = []
            for line in d.log_path.read_text(errors="replace").splitlines():
                if line.startswith("{"):
                    out.append(json.loads(line))  # must parse: one object per line
            return out

        wait_until(lambda: any(r.get("request_id") == rid for r in records()),
                   f"a JSON record with request_id {rid}")
        for r in records():
            assert {"time", "level", "logger", "msg"} <= r.keys(), r
        mine = [r for r in records() if r.get("request_id") == rid]
        assert any("no-such-target" in r["msg"] and r["logger"] == "kilnd" for r in mine), mine
        # The agent logs in JSON too (kilnd passes its --log-format on).
        assert any(r["logger"] == "agent-cpu" for r in records())
    finally:
        d.assert_stops_cleanly()
