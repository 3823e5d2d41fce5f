"""The mdla target end to end on the simulated MDLA.

kilnd compiles graphs for target ``mdla`` into ONNX models, and a real
``kiln-agent-mdla --simulate`` runs them in Kiln's 16-bit fixed-point model
of the device (not Micron's; no MDLA hardware or SDK is here). Results are
compared with eager PyTorch at the tolerance that numeric type allows:

    max |kiln - eager| <= Q16_TOL * max |eager|   (Q16_TOL = 2^-8)

Every Execute reports the error against f32 and an estimated cycle count;
ops the MDLA lacks run on the CPU, and the placement report names each.
"""

from __future__ import annotations

import logging
import subprocess

import pytest
import torch
import torch.nn as nn
import torchvision

import kiln
from kiln.errors import UnimplementedError
from support import (Agent, Kilnd, assert_within_range, build_dir, kilnd_with_local_agents,
                     wait_until)
from test_e2e_cli import run_kiln

#: 16-bit fixed point with a power-of-two scale per layer keeps about 2^-15
#: of each layer's range; errors compound over layers (resnet18 has 21
#: quantized layers), so the bound is 2^-8 of the output's range.
Q16_TOL = 2.0 ** -8


@pytest.fixture(scope="module")
def mdla_kilnd(tmp_path_factory):
    """kilnd with its local CPU agent and a simulated MDLA."""
    daemon = kilnd_with_local_agents(tmp_path_factory.mktemp("kilnd-mdla"), "kilnd-mdla",
                                     "cpu,mdla", "mdla", env={"KILN_AGENT_SIMULATE": "true"})
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.fixture
def client(mdla_kilnd):
    with kiln.Client(mdla_kilnd.address, timeout=600) as c:
        yield c


class SmallCnn(nn.Module):
    """Every op family the MDLA runs: conv (with and without batch norm),
    relu/tanh/sigmoid, max and average pooling, add/sub/mul, cat, a
    flatten and a linear layer."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.conv3 = nn.Conv1d(4, 4, 3)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = nn.functional.max_pool2d(y, 2)
        z = torch.tanh(self.conv2(y)) * 0.5 - torch.sigmoid(y)
        y = torch.cat([y, z + y], dim=1)
        y = nn.functional.avg_pool2d(y, 2)
        return self.fc(torch.flatten(y, 1))


def assert_close_in_q16(out: torch.Tensor, ref: torch.Tensor) -> float:
    return assert_within_range(out, ref, Q16_TOL)


def test_the_simulated_mdla_registers_as_simulated(client, mdla_kilnd):
    (device,) = client.devices(kind="mdla")
    assert device.simulated
    assert device.properties["simulated"] == "true"
    assert "not Micron's" in device.properties["simulator"]
    rows = [r.split() for r in run_kiln("devices", address=mdla_kilnd.address).stdout.splitlines()]
    assert any(r[1:3] == ["mdla", "simulated"] for r in rows), rows
    assert any(r[1:3] == ["cpu", "hardware"] for r in rows), rows


def test_small_cnn_matches_eager_and_reports_error_and_cycles(client):
    torch.manual_seed(0)
    model = SmallCnn().eval()
    with torch.no_grad():  # statistics that are not the identity
        model.bn1.running_mean.uniform_(-0.2, 0.2)
        model.bn1.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 16, 16)
    compiled = client.compile(torch.export.export(model, (x,)), target="mdla")
    m = compiled.manifest
    assert (m.target, m.triple, m.format, m.entry_symbol) == (
        "mdla", "mdla", "onnx-model", "kiln_main")
    out = compiled(x)
    ref = model(x)
    error = assert_close_in_q16(out, ref)
    counters = compiled.last_counters
    assert counters["estimated_cycles"] > 0
    e = counters["numeric_error"]
    assert e["numeric_type"] == "q16"
    # The device's own comparison is against an f32 evaluation of the same
    # graph: it agrees with the error against eager up to f32 rounding.
    assert e["max_abs_error"] == pytest.approx(error, abs=1e-4 * ref.abs().max().item())
    assert e["max_abs_error"] > 0  # something was quantized


def test_resnet18_matches_eager_in_q16(client):
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 64, 64)
    compiled = client.compile(torch.export.export(model, (x,)), target="mdla")
    assert not compiled.placement.partitioned
    out = compiled(x)
    assert_close_in_q16(out, model(x))
    c = compiled.last_counters
    assert c["estimated_cycles"] > 100_000
    assert 0 < c["numeric_error"]["max_abs_error"] <= Q16_TOL * c["numeric_error"]["max_abs_reference"]


class WithGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        y = nn.functional.gelu(self.conv(x))  # the MDLA has no gelu
        return torch.sigmoid(self.fc(torch.flatten(y, 1)))


def test_ops_the_mdla_lacks_run_on_the_cpu_and_the_report_names_them(client, caplog):
    torch.manual_seed(1)
    model = WithGelu().eval()
    x = torch.randn(2, 3, 8, 8)
    ep = torch.export.export(model, (x,))
    with pytest.raises(UnimplementedError, match="target 'mdla' does not run aten.gelu"):
        client.compile(ep, target="mdla")
    with caplog.at_level(logging.WARNING, logger="kiln.placement"):
        compiled = client.compile(ep, target="mdla", fallback="cpu")
    report = compiled.placement
    assert report.partitioned
    on_cpu = [n for n in report.nodes if n.placement == "cpu"]
    assert [n.op for n in on_cpu] == ["aten.gelu.default"]
    assert "does not run aten.gelu" in on_cpu[0].reason
    assert "gelu" in caplog.text
    assert all(n.placement == "target" for n in report.nodes if n.op != "aten.gelu.default")
    # What runs each node: the MDLA, or PyTorch on the CPU.
    assert report.units() == {"mdla": [n.name for n in report.nodes if n.unit == "mdla"],
                              "pytorch": [on_cpu[0].name]}
    assert len(report.units()["mdla"]) == len(report.nodes) - 1
    out = compiled(x)
    assert_close_in_q16(out, model(x))
    assert compiled.last_counters["estimated_cycles"] > 0
    assert compiled.last_counters["numeric_error"]["numeric_type"] == "q16"


def test_torch_compile_with_target_mdla(mdla_kilnd):
    """Seed 001's shape of use: enable the device, run the model."""
    torch.manual_seed(2)
    model = SmallCnn().eval()
    x = torch.randn(1, 3, 16, 16)
    fast = torch.compile(model, backend="kiln",
                         options={"address": mdla_kilnd.address, "target": "mdla"})
    with torch.no_grad():
        assert_close_in_q16(fast(x), model(x))


@pytest.mark.parametrize("name", ["small_cnn", "resnet18"])
def test_the_onnx_model_is_valid_and_computes_what_eager_does(name, tmp_path):
    """The artifact, checked by ONNX's own checker (with shape inference) and
    run by ONNX's reference evaluator in f32 with the weights as inputs: an
    oracle independent of Kiln's simulator. f32 tolerance, not q16's."""
    import numpy as np
    import onnx
    import onnx.reference
    from kiln.export import serialize_exported

    torch.manual_seed(3)
    model = SmallCnn().eval() if name == "small_cnn" else torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 16, 16) if name == "small_cnn" else torch.randn(1, 3, 32, 32)
    serialized = serialize_exported(torch.export.export(model, (x,)), name)[0]
    graph_file = tmp_path / "graph.pb"
    graph_file.write_bytes(serialized.graph.SerializeToString())
    subprocess.run([str(build_dir() / "bin" / "kiln-compile"), str(graph_file), "--target",
                    "mdla", "-o", str(tmp_path / "model.onnx")], check=True)
    onnx_model = onnx.load(tmp_path / "model.onnx")
    onnx.checker.check_model(onnx_model, full_check=True)
    assert [(o.domain, o.version) for o in onnx_model.opset_import] == [("", 13)]
    # onnx 1.19's reference BatchNormalization at opset 9..14 does not give
    # (x - mean) / sqrt(var + eps) * scale + bias (0.04 off on randn input
    # with unit statistics); version 15, whose inference semantics are the
    # same, does. Evaluate as opset 15; the artifact stays at 13.
    onnx_model.opset_import[0].version = 15
    feeds = {n: t.detach().numpy() for n, t in serialized.parameters.items()}
    feeds[serialized.graph.inputs[0].name] = x.numpy()
    wanted = {i.name for i in onnx_model.graph.input}
    (out,) = onnx.reference.ReferenceEvaluator(onnx_model).run(
        None, {k: v for k, v in feeds.items() if k in wanted})
    np.testing.assert_allclose(out, model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_an_agent_without_the_sdk_and_without_simulate_registers_nothing_and_says_why(
        mdla_kilnd, tmp_path):
    agent = Agent(mdla_kilnd, mdla_kilnd.address, tmp_path, "mdla-no-sdk", kind="mdla",
                  extra_args=("--library", "/nonexistent/libmicrondla.so"))
    try:
        assert agent.proc.wait(timeout=60) == 1
    finally:
        agent.stop()
    log = agent.log()
    assert "the mdla backend found no devices to offer: no Micron DLA SDK" in log, log
    assert "/nonexistent/libmicrondla.so" in log and "--simulate" in log
    with kiln.Client(mdla_kilnd.address) as c:
        assert all(d.agent_id != "mdla-no-sdk" for d in c.devices())


def test_the_hardware_path_through_kilnd_on_the_sdk_test_double(tmp_path):
    """kiln-agent-mdla on libmicrondla-testdouble.so, a TEST DOUBLE of Micron's
    library (not an MDLA): the driver path end to end, ie_compile once per set
    of weights with the .bin kept, then ie_init and ie_run."""
    library = build_dir() / "lib" / "libmicrondla-testdouble.so"
    daemon = Kilnd(tmp_path, tmp_path / "cache", name="kilnd-mdla-sdk",
                   extra_args=("--local-agents", "cpu")).start()
    agent = Agent(daemon, daemon.address, tmp_path, "mdla-sdk", kind="mdla",
                  extra_args=("--library", str(library),
                              "--bin-cache", str(tmp_path / "bins")))
    try:
        with kiln.Client(daemon.address, timeout=300) as c:
            wait_until(lambda: c.devices(kind="mdla"), "the mdla agent on the test double")
            (device,) = c.devices(kind="mdla")
            assert not device.simulated and device.properties["simulated"] == "false"
            assert "Kiln test double" in device.properties["sdk_version"]
            torch.manual_seed(4)
            model = SmallCnn().eval()
            x = torch.randn(1, 3, 16, 16)
            compiled = c.compile(torch.export.export(model, (x,)), target="mdla")
            for _ in range(2):
                assert_close_in_q16(compiled(x), model(x))
            # The card's own arithmetic, compared with f32 on the host.
            assert compiled.last_counters["numeric_error"]["numeric_type"] == "mdla-fixed16"
            assert compiled.last_counters["estimated_cycles"] > 0
            assert len(list((tmp_path / "bins").glob("*.bin"))) == 1
    finally:
        agent.stop()
        daemon.stop()
