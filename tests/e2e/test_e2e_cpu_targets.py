"""The cpu target compiles for a named CPU, and its artifacts are self-contained.

Every dtype is compiled for x86-64-v2, x86-64-v3 and the host ("native")
through a real kilnd. Each artifact may need only libc and libm: its
undefined symbols must all be exported by the host's libc.so.6 or libm.so.6,
and it may record no other library. Those the host's CPU can run are run and
checked against eager; the rest must be refused with FAILED_PRECONDITION.
The tests name their CPUs, so they mean the same on any x86-64 host.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest
import torch

import kiln
from kiln.v1 import executable_pb2
from support import Agent, wait_until

CPUS = ("x86-64-v2", "x86-64-v3", "native")
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
          torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)
LIBRARIES = ("libc.so.6", "libm.so.6")


def llvm_tool(name: str) -> str:
    for candidate in (f"/usr/lib/llvm-19/bin/{name}", shutil.which(f"{name}-19"),
                      shutil.which(name)):
        if candidate and pathlib.Path(candidate).exists():
            return candidate
    pytest.fail(f"{name} (llvm-19) not found: scripts/install_deps.sh installs it")


def host_library(name: str) -> pathlib.Path:
    for folder in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"):
        path = pathlib.Path(folder) / name
        if path.exists():
            return path
    pytest.fail(f"{name} not found on this host")


@pytest.fixture(scope="module")
def allowed_symbols() -> set[str]:
    """Everything the host's libc and libm export."""
    nm = llvm_tool("llvm-nm")
    symbols: set[str] = set()
    for name in LIBRARIES:
        out = subprocess.run([nm, "-D", "--defined-only", "--format=just-symbols",
                              str(host_library(name))],
                             check=True, capture_output=True, text=True).stdout
        symbols.update(s.split("@")[0] for s in out.split())
    return symbols


class Mix(torch.nn.Module):
    """Arithmetic in the dtype, and conversions to and from f32 and f64 (where
    half and bfloat16 need their runtime routines), plus a matmul."""

    def __init__(self, dtype: torch.dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, x, y):
        same = x * y + x if self.dtype != torch.bool else (x & y) | x
        narrowed = x.to(torch.float32).sin().to(self.dtype)
        from_double = (x.to(torch.float64) * 0.75).to(self.dtype)
        product = x.to(torch.float32) @ y.to(torch.float32).T
        return same, narrowed, from_double, product


def inputs_for(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(11)
    if dtype == torch.bool:
        return (torch.rand(4, 8, generator=g) > 0.5, torch.rand(4, 8, generator=g) > 0.5)
    if dtype.is_floating_point:
        return (torch.randn(4, 8, generator=g).to(dtype), torch.randn(4, 8, generator=g).to(dtype))
    low = 0 if dtype == torch.uint8 else -5
    return (torch.randint(low, 6, (4, 8), generator=g).to(dtype),
            torch.randint(low, 6, (4, 8), generator=g).to(dtype))


def tolerance(dtype: torch.dtype) -> dict:
    # sin runs through Kiln's approximations; 16-bit results round once more.
    if dtype in (torch.float16, torch.bfloat16):
        return dict(rtol=1e-2, atol=1e-2)
    return dict(rtol=1e-4, atol=1e-5)


def artifact_of(client: kiln.Client, compiled) -> bytes:
    record = executable_pb2.ExecutableRecord.FromString(client.blobs.read(compiled.executable))
    return client.blobs.read(record.artifact)


def dynamic_dependencies(path: pathlib.Path) -> tuple[set[str], list[str]]:
    """(undefined dynamic symbols, DT_NEEDED libraries) of a shared object."""
    nm = subprocess.run([llvm_tool("llvm-nm"), "-D", "--undefined-only",
                         "--format=just-symbols", str(path)],
                        check=True, capture_output=True, text=True).stdout
    undefined = {s.split("@")[0] for s in nm.split()}
    dynamic = subprocess.run([llvm_tool("llvm-readelf"), "-d", str(path)],
                             check=True, capture_output=True, text=True).stdout
    needed = [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines()
              if "(NEEDED)" in line]
    return undefined, needed


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_every_dtype_is_self_contained_for_every_cpu(client, dtype, allowed_symbols,
                                                     tmp_path):
    host = client.devices("cpu")[0].properties
    host_features = set(host["cpu_features"].split(","))
    model = Mix(dtype).eval()
    x, y = inputs_for(dtype)
    expected = model(x, y)
    ep = torch.export.export(model, (x, y))
    for cpu in CPUS:
        compiled = client.compile(ep, options={"cpu": cpu})
        manifest = compiled.manifest
        assert manifest.cpu == (host["cpu"] if cpu == "native" else cpu)
        path = tmp_path / f"{cpu}.so"
        path.write_bytes(artifact_of(client, compiled))
        undefined, needed = dynamic_dependencies(path)
        foreign = sorted(undefined - allowed_symbols)
        assert not foreign, (f"{dtype} for {cpu}: symbols outside libc/libm: {foreign}")
        assert set(needed) <= set(LIBRARIES), f"{dtype} for {cpu} needs {needed}"
        required = {f.lstrip("+") for f in manifest.features.split(",") if f}
        if required <= host_features:
            got = compiled(x, y)
            for g, e in zip(got, expected):
                assert g.dtype == e.dtype
                torch.testing.assert_close(g, e, **tolerance(dtype))
        else:
            with pytest.raises(kiln.FailedPreconditionError) as err:
                compiled(x, y)
            missing = sorted(required - host_features)
            assert missing[0] in str(err.value)


def test_cpu_is_part_of_the_compile_key(client):
    model = Mix(torch.float32).eval()
    ep = torch.export.export(model, inputs_for(torch.float32))
    v2 = client.compile(ep, options={"cpu": "x86-64-v2"})
    v3 = client.compile(ep, options={"cpu": "x86-64-v3"})
    again = client.compile(ep, options={"cpu": "x86-64-v3", "cpu_features": "+avx2"})
    assert v2.compile_key != v3.compile_key and v2.digest != v3.digest
    # +avx2 is part of x86-64-v3 already: the same machine, the same key.
    assert again.compile_key == v3.compile_key and again.cache_hit
    assert "+avx2" in v3.manifest.features and "+avx2" not in v2.manifest.features


def test_bad_cpu_options_are_invalid_argument(client):
    ep = torch.export.export(Mix(torch.float32).eval(), inputs_for(torch.float32))
    with pytest.raises(kiln.InvalidArgumentError, match="unknown CPU 'pentium-9000'"):
        client.compile(ep, options={"cpu": "pentium-9000"})
    with pytest.raises(kiln.InvalidArgumentError, match="unknown CPU feature 'warp-drive'"):
        client.compile(ep, options={"cpu": "x86-64-v3", "cpu_features": "+warp-drive"})
    with pytest.raises(kiln.InvalidArgumentError, match="apply to target 'cpu' only"):
        client.compile(ep, target="riscv64", options={"cpu": "x86-64-v3"})


def test_default_cpu_is_the_agents_and_code_for_more_is_refused(start_kilnd, tmp_path):
    """An agent pinned to x86-64-v2 (KILN_AGENT_CPU, as a Helm value would set
    it): compiles that name no CPU target it, and code for a CPU with more
    features is refused with FAILED_PRECONDITION naming them, not run."""
    daemon = start_kilnd(name="pinned")
    daemon.stop()
    daemon.env["KILN_AGENT_CPU"] = "x86-64-v2"
    daemon.start()
    model = Mix(torch.float32).eval()
    x, y = inputs_for(torch.float32)
    ep = torch.export.export(model, (x, y))
    with kiln.Client(daemon.address, timeout=300) as client:
        (device,) = client.devices("cpu")
        assert device.properties["cpu"] == "x86-64-v2"
        assert "avx" not in device.properties["cpu_features"].split(",")
        compiled = client.compile(ep)
        assert compiled.manifest.cpu == "x86-64-v2"
        assert "+avx" not in compiled.manifest.features.split(",")
        for got, want in zip(compiled(x, y), model(x, y)):
            torch.testing.assert_close(got, want, **tolerance(torch.float32))

        wider = client.compile(ep, options={"cpu": "x86-64-v3"})
        with pytest.raises(kiln.FailedPreconditionError, match="avx2"):
            wider(x, y)
        assert client.devices("cpu")[0].state == "DEVICE_STATE_READY"

        # A second agent with more features: the default becomes what both
        # share, so the executable still runs on either.
        agent = Agent(daemon, daemon.address, tmp_path, "wide-agent",
                      extra_args=("--cpu", "x86-64-v3"))
        try:
            wait_until(lambda: len(client.devices("cpu")) == 2, "the second agent")
            shared = client.compile(ep)
            assert shared.manifest.features == compiled.manifest.features
            assert shared.digest == compiled.digest
            # Code for x86-64-v3 now has a device that runs it.
            for got, want in zip(wider(x, y), model(x, y)):
                torch.testing.assert_close(got, want, **tolerance(torch.float32))
        finally:
            agent.stop()


def test_the_torch_compile_backend_takes_the_cpu(client):
    model = Mix(torch.float32).eval()
    x, y = inputs_for(torch.float32)
    be = kiln.backend(client, options={"cpu": "x86-64-v2"})
    compiled = torch.compile(model, backend=be)
    for got, want in zip(compiled(x, y), model(x, y)):
        torch.testing.assert_close(got, want, **tolerance(torch.float32))
    specializations = [c for g in be.compiled_graphs for c in g.specializations]
    assert specializations
    assert all(c.manifest.cpu == "x86-64-v2" for c in specializations)
