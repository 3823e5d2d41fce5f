"""The acap target end to end on the simulated AI Engine array.

kilnd compiles graphs for target ``acap`` into xclbins: host code plus an AI
Engine plan for the convolutions and matrix products (with the batch norms,
residual adds and activations after them) and the elementwise chains. A real
``kiln-agent-acap --simulate`` reads them with XRT, runs the host code on
this machine and the plan's calls in Kiln's functional model of an AIE-ML
array (not AMD's aiesimulator; no Versal board or AI Engine toolchain is
here), in the array's type: bf16 operands, f32 accumulation (chains in f32). Results are
compared with eager PyTorch at the tolerance that type allows:

    max |kiln - eager| <= BF16_TOL * max |eager|   (BF16_TOL = 2^-5)

Every Execute reports the error against f32 and the plan's estimated cycles.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import torch
import torch.nn as nn
import torchvision

import kiln
from kiln.errors import FailedPreconditionError
from support import Agent, assert_within_range, build_dir, kilnd_with_local_agents
from test_e2e_cli import run_kiln

#: bfloat16 keeps 8 bits of each operand (2^-9 relative rounding); with f32
#: accumulation the error grows with depth, not with k. resnet18 (21 layers)
#: stays under 1 % of the output's range here; the bound leaves 3x margin.
BF16_TOL = 2.0 ** -5


@pytest.fixture(scope="module")
def acap_kilnd(tmp_path_factory):
    """kilnd with its local CPU agent and a simulated AI Engine array."""
    daemon = kilnd_with_local_agents(tmp_path_factory.mktemp("kilnd-acap"), "kilnd-acap",
                                     "cpu,acap", "acap", env={"KILN_AGENT_SIMULATE": "true"})
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.fixture
def client(acap_kilnd):
    with kiln.Client(acap_kilnd.address, timeout=600) as c:
        yield c


class SmallCnn(nn.Module):
    """Convolutions (grouped, strided, with batch norm, relu and a residual),
    a pooling the host runs, an elementwise chain, and two linear layers
    (with a GELU)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1, groups=4, bias=False)
        self.conv3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = y + self.conv2(y)
        y = nn.functional.max_pool2d(self.conv3(y), 2)
        y = torch.clamp(y * 0.5 - 0.25, min=-1.0, max=1.0)
        y = nn.functional.gelu(self.fc1(torch.flatten(y, 1)))
        return self.fc2(y)


#: The ops of SmallCnn's elementwise chain, one call on the array.
CHAIN_OPS = ("aten.mul.Tensor", "aten.sub.Tensor", "aten.clamp.default")


def assert_close_in_bf16(out: torch.Tensor, ref: torch.Tensor) -> float:
    return assert_within_range(out, ref, BF16_TOL)


def op_units(compiled) -> dict[str, set[str]]:
    """What runs each ATen op of a compiled graph, from its op report."""
    units: dict[str, set[str]] = {}
    for layer in compiled.op_report:
        units.setdefault(layer.op, set()).add(layer.unit)
    return units


def test_the_simulated_array_registers_as_simulated(client, acap_kilnd):
    (device,) = client.devices(kind="acap")
    assert device.simulated
    p = device.properties
    assert p["simulated"] == "true" and "not AMD's" in p["simulator"]
    assert (p["array"], p["tiles"], p["numeric_type"]) == ("aie-ml-304", "304", "bf16*bf16+f32")
    assert p["host_cpu"].startswith("x86-64")
    rows = [r.split() for r in run_kiln("devices", address=acap_kilnd.address).stdout.splitlines()]
    assert any(r[1:3] == ["acap", "simulated"] for r in rows), rows


def test_small_cnn_matches_eager_and_reports_error_and_cycles(client):
    torch.manual_seed(0)
    model = SmallCnn().eval()
    with torch.no_grad():  # statistics that are not the identity
        model.bn1.running_mean.uniform_(-0.2, 0.2)
        model.bn1.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 16, 16)
    compiled = client.compile(torch.export.export(model, (x,)), target="acap")
    m = compiled.manifest
    assert (m.target, m.format, m.kernel_library, m.entry_symbol) == (
        "acap", "xclbin", "aie", "kiln_invoke")
    # kilnd compiled the host part for the machine simulating the array.
    assert m.triple.startswith("x86_64") and m.cpu.startswith("x86-64")
    assert not compiled.placement.partitioned
    # The op report names what the array runs and what the host part does:
    # the relu in conv1's epilogue, the chain after the pooling as a call of
    # its own; the pooling and the reshapes are host code.
    units = op_units(compiled)
    for op in ("aten.convolution.default", "aten.addmm.default",
               "aten._native_batch_norm_legit_no_training.default", "aten.relu.default",
               *CHAIN_OPS):
        assert units[op] == {"aie"}, (op, units)
    pools = [op for op in units if op.startswith("aten.max_pool2d")]
    for op in ["aten.view.default", *pools]:
        assert units[op] == {"generated"}, (op, units)
    assert pools, units
    # The placement report names the same unit per node: the ops the host
    # part runs (on a board, the Versal's Arm cores) are the "generated" ones.
    placed = {n.op: set() for n in compiled.placement.nodes}
    for n in compiled.placement.nodes:
        placed[n.op].add(n.unit)
    assert placed == units
    assert set(compiled.placement.units()) == {"aie", "generated"}
    out = compiled(x)
    ref = model(x)
    error = assert_close_in_bf16(out, ref)
    counters = compiled.last_counters
    assert counters["estimated_cycles"] > 0
    e = counters["numeric_error"]
    assert e["numeric_type"] == "bf16*bf16+f32"
    # The device compares with the same host code computing in f32: that
    # agrees with the error against eager up to f32 rounding.
    assert e["max_abs_error"] == pytest.approx(error, abs=1e-4 * ref.abs().max().item())
    assert e["max_abs_error"] > 0  # something was rounded
    # Same cycles on every call: the plan's, once per call site.
    first = counters["estimated_cycles"]
    compiled(x)
    assert compiled.last_counters["estimated_cycles"] == first


@pytest.mark.parametrize("side", [64, 224])
def test_resnet18_matches_eager_in_bf16(client, side):
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, side, side)
    compiled = client.compile(torch.export.export(model, (x,)), target="acap")
    out = compiled(x)
    assert_close_in_bf16(out, model(x))
    c = compiled.last_counters
    assert c["estimated_cycles"] > 1_000_000
    assert 0 < c["numeric_error"]["max_abs_error"] <= BF16_TOL * c["numeric_error"]["max_abs_reference"]


def test_torch_compile_with_target_acap(acap_kilnd):
    """Seed 001's shape of use: name the device, run the model."""
    torch.manual_seed(2)
    model = SmallCnn().eval()
    x = torch.randn(1, 3, 16, 16)
    fast = torch.compile(model, backend="kiln",
                         options={"address": acap_kilnd.address, "target": "acap"})
    with torch.no_grad():
        assert_close_in_bf16(fast(x), model(x))


def test_a_plan_that_does_not_fit_is_failed_precondition(client):
    model = SmallCnn().eval()
    x = torch.randn(1, 3, 16, 16)
    with pytest.raises(FailedPreconditionError,
                       match="has 5 kernel call sites and each needs a tile of its own"):
        client.compile(torch.export.export(model, (x,)), target="acap",
                       options={"acap": {"tiles": 4}})


def test_chains_take_only_the_tiles_the_products_leave(client):
    """With a tile per product and none to spare, the chain stays host code
    (the plan still fits) and the result is the same."""
    torch.manual_seed(3)
    model = SmallCnn().eval()
    x = torch.randn(1, 3, 16, 16)
    compiled = client.compile(torch.export.export(model, (x,)), target="acap",
                              options={"acap": {"tiles": 5}})
    units = op_units(compiled)
    for op in CHAIN_OPS:
        assert units[op] == {"generated"}, (op, units)
    for op in ("aten.convolution.default", "aten.addmm.default", "aten.relu.default"):
        assert units[op] == {"aie"}, (op, units)
    assert_close_in_bf16(compiled(x), model(x))


def test_host_code_for_the_board_is_refused_with_the_option_to_use(client):
    model = nn.Linear(8, 4).eval()
    x = torch.randn(2, 8)
    compiled = client.compile(torch.export.export(model, (x,)), target="acap",
                              options={"acap": {"host_cpu": "cortex-a72"}})
    assert compiled.manifest.triple == "aarch64-unknown-linux-gnu"
    with pytest.raises(FailedPreconditionError, match="compile with options.acap.host_cpu"):
        compiled(x)


def test_an_agent_without_a_board_and_without_simulate_registers_nothing_and_says_why(
        acap_kilnd, tmp_path):
    agent = Agent(acap_kilnd, acap_kilnd.address, tmp_path, "acap-no-board", kind="acap")
    try:
        assert agent.proc.wait(timeout=60) == 1
    finally:
        agent.stop()
    log = agent.log()
    assert "XRT found no Versal board" in log and "--simulate" in log, log
    with kiln.Client(acap_kilnd.address) as c:
        assert all(d.agent_id != "acap-no-board" for d in c.devices())


def test_xclbinutil_reads_the_artifact(tmp_path):
    """`xclbinutil --info` on Kiln's xclbin, where a working xclbinutil is
    installed. Debian 12's libxrt-utils ships /usr/bin/xclbinutil as a
    wrapper around a program it does not include, so this skips here; XRT's
    own parser reads the artifact in AcapTest and in the agent."""
    tool = shutil.which("xclbinutil")
    # Debian's wrapper exits 0 after failing to run the missing program, so
    # the version text is what tells a working xclbinutil.
    version = (subprocess.run([tool, "--version"], capture_output=True, text=True)
               if tool else None)
    if version is None or "Version" not in version.stdout:
        pytest.skip("no working xclbinutil (Debian 12's is a wrapper without the program)")
    graph = build_dir().parent / "compiler" / "test" / "Analysis" / "op-report-conv.textproto"
    xclbin = tmp_path / "conv.xclbin"
    subprocess.run([str(build_dir() / "bin" / "kiln-compile"), str(graph), "--target", "acap",
                    "-o", str(xclbin)], check=True)
    info = subprocess.run([tool, "--info", "--input", str(xclbin)], capture_output=True,
                          text=True, check=True).stdout
    assert "kiln_host" in info and "kiln_aie_plan" in info
