"""Generated code runs its parallel loops on the cpu agent's compute threads.

The cpu target outlines the outer parallel loops of matmuls, convolutions and
elementwise ops into tasks for kiln_rt_parallel_for, which the agent backs
with a pool of --compute-threads threads (KILN_AGENT_COMPUTE_THREADS). Each
iteration of an outlined loop is computed the same way whichever thread runs
it, so results must be bitwise equal at any thread count, and match eager.
The daemons here name their thread counts (1 and 3), so the tests mean the
same on any host, whatever its core count.
"""

from __future__ import annotations

import subprocess

import pytest
import torch
from torch import nn

import kiln

# None: the connected agent's CPU; x86-64-v3: a baseline every host here runs.
CPUS = (None, "x86-64-v3")


class ConvBlock(nn.Module):
    """A resnet basic block at 32 channels, with a strided stem."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(32)
        self.conv1 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.bn0(self.stem(x)))
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        x = torch.relu(x + y)
        return self.head(x.mean(dim=(2, 3)))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 512),
                                 nn.GELU(), nn.Linear(512, 256))

    def forward(self, x):
        return self.net(x)


class Batched(nn.Module):
    """A batched matmul and a softmax: batch-parallel loops."""

    def forward(self, q, k):
        return torch.softmax(q @ k.transpose(1, 2) / 8.0, dim=-1)


def models():
    torch.manual_seed(0)
    block = ConvBlock().eval()
    for bn in (block.bn0, block.bn1, block.bn2):  # non-trivial statistics
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    return {
        "conv_block": (block, (torch.randn(2, 3, 64, 64),)),
        "mlp": (Mlp().eval(), (torch.randn(64, 256),)),
        "batched": (Batched(), (torch.randn(8, 128, 64), torch.randn(8, 128, 64))),
    }


@pytest.fixture(scope="module")
def exported():
    return {name: (module, inputs, torch.export.export(module, inputs))
            for name, (module, inputs) in models().items()}


def daemon_with_threads(start_kilnd, threads: int):
    daemon = start_kilnd(name=f"threads{threads}")
    daemon.stop()
    daemon.env["KILN_AGENT_COMPUTE_THREADS"] = str(threads)
    return daemon.start()


def test_parallel_results_match_eager_and_do_not_depend_on_thread_count(
        start_kilnd, exported):
    outputs = {}
    for threads in (1, 3):
        daemon = daemon_with_threads(start_kilnd, threads)
        with kiln.Client(daemon.address, timeout=300) as client:
            (device,) = client.devices("cpu")
            assert device.properties["compute_threads"] == str(threads)
            # The agents' CPU (this host's), and a named baseline that every
            # x86-64 machine of this project's kind runs (AVX2, no AVX-512).
            for cpu in CPUS:
                # Generated code for every op: its loops are what runs on
                # the thread pool (the library's calls bring their own).
                options = {"dump_stages": True, "kernel_library": "none",
                           **({"cpu": cpu} if cpu else {})}
                for name, (module, inputs, ep) in exported.items():
                    compiled = client.compile(ep, options=options)
                    llvm = compiled.stage_dumps()["llvm-dialect"]
                    assert "llvm.call @kiln_rt_parallel_for" in llvm, \
                        f"{name} ({cpu}): no loop was outlined for the thread pool"
                    got = compiled(*inputs)
                    with torch.no_grad():
                        want = module(*inputs)
                    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
                    outputs[(threads, cpu, name)] = got
        daemon.stop()
    for cpu in CPUS:
        for name in exported:
            assert torch.equal(outputs[(1, cpu, name)], outputs[(3, cpu, name)]), \
                f"{name} ({cpu}): 1 and 3 compute threads gave different bits"


def test_small_loops_stay_on_the_calling_thread(client):
    """x + 1 on 4 floats: too little work to wake a thread for."""
    class AddOne(nn.Module):
        def forward(self, x):
            return x + 1

    x = torch.arange(4.0)
    compiled = client.compile(torch.export.export(AddOne(), (x,)),
                              options={"dump_stages": True})
    assert "kiln_rt_parallel_for" not in compiled.stage_dumps()["llvm-dialect"]
    assert torch.equal(compiled(x), x + 1)


@pytest.mark.parametrize("value", ["0", "many", "2000"])
def test_a_bad_compute_thread_count_stops_the_agent_with_its_name(kilnd, value):
    agent = subprocess.run(
        [str(kilnd.bin_dir / "kiln-agent-cpu"), "--daemon", kilnd.address,
         "--compute-threads", value],
        capture_output=True, text=True, timeout=60)
    assert agent.returncode != 0
    assert "--compute-threads" in agent.stderr and value in agent.stderr


@pytest.mark.parametrize("cpu,block", [("x86-64-v3", 8), ("skylake-avx512", 16)])
def test_weight_transposes_are_register_blocks_for_the_cpu(client, exported, cpu, block):
    """nn.Linear weights are transposed in blocks of one vector register per
    row (8 floats with AVX2, 16 with AVX-512): a shuffle of block x block
    elements in the code, and the same numbers as eager. Code for a CPU this
    host lacks is only compiled. (Generated code: with the default kernel
    library the matmul, transposed weight included, goes to oneDNN.)"""
    module, inputs, ep = exported["mlp"]
    compiled = client.compile(ep, options={"cpu": cpu, "dump_stages": True,
                                           "kernel_library": "none"})
    llvm = compiled.stage_dumps()["llvm-dialect"]
    assert f"vector<{block * block}xf32>" in llvm and "llvm.shufflevector" in llvm
    host = set(client.devices("cpu")[0].properties["cpu_features"].split(","))
    needed = {f.lstrip("+") for f in compiled.manifest.features.split(",") if f}
    if needed <= host:
        with torch.no_grad():
            torch.testing.assert_close(compiled(*inputs), module(*inputs),
                                       rtol=1e-4, atol=1e-4)
