"""The riscv64 target end to end: kilnd compiles for riscv64 (with and without
the V extension) and a real kiln-agent-qemu runs the code under qemu-riscv64.

Numbers are compared with eager PyTorch at the CPU target's tolerances; every
call reports the guest instructions it retired. The torch.compile modes and
the bare-metal bundle (built with riscv64-unknown-elf-gcc + picolibc, run
under qemu-system-riscv64) are checked here too.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest
import urllib.request

import torch

import kiln
import kiln.bundle
from kiln.testing import example_inputs
from support import kilnd_with_local_agents
from test_e2e_models import MODELS, TOL, make  # the CPU target's models and tolerances
VARIANTS = {
    # Explicit: without options the code is for the devices' VLEN (256 here).
    "rv64gcv": {"riscv": {"vlen": 128}},
    "rv64gcv-vlen256": {"riscv": {"vlen": 256}},
    "rv64gc": {"riscv": {"scalar_only": True}},
}


@pytest.fixture(scope="module")
def rv_kilnd(tmp_path_factory):
    """kilnd with its local CPU agent and a qemu agent of two devices at
    VLEN 256 (it runs VLEN 128 code too)."""
    daemon = kilnd_with_local_agents(tmp_path_factory.mktemp("kilnd-riscv64"), "kilnd-rv",
                                     "cpu,qemu", "riscv64",
                                     env={"KILN_AGENT_DEVICES": "2", "KILN_AGENT_VLEN": "256"})
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.fixture
def rv(rv_kilnd):
    with kiln.Client(rv_kilnd.address, timeout=300) as c:
        yield c


def test_qemu_agent_registers_a_simulated_riscv64_device(rv):
    devices = rv.devices(kind="riscv64")
    assert devices and devices[0].state == "DEVICE_STATE_READY"
    props = devices[0].properties
    assert props["simulator"].startswith("qemu-riscv64")
    assert props["isa"] == "rv64gcv" and props["vlen"] == "256"
    assert len(rv.devices(kind="riscv64")) == 2
    assert props["qemu_version"].startswith("qemu-riscv64 version ")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", MODELS)
def test_spine_models_match_eager_on_riscv64(rv, rv_kilnd, name, variant):
    model = make(name)
    inputs = example_inputs(model, 3, seed=7)
    compiled = rv.compile(torch.export.export(model, inputs), target="riscv64",
                          options=VARIANTS[variant])
    m = compiled.manifest
    assert (m.target, m.triple, m.format) == ("riscv64", "riscv64-unknown-linux-gnu",
                                              "elf-shared-object")
    assert ("+v" in m.features.split(",")) == (variant != "rv64gc")
    out = compiled(*inputs)
    torch.testing.assert_close(out, model(*inputs), **TOL)
    assert compiled.last_device_id.startswith("local-qemu/")
    assert compiled.last_counters["instructions"] > 0


def _mlp_executions(rv, options):
    model = make("mlp_gelu_tanh")
    x = example_inputs(model, 8, seed=1)
    compiled = rv.compile(torch.export.export(model, x), target="riscv64", options=options)
    by_device: dict[str, list[int]] = {}
    for _ in range(6):
        torch.testing.assert_close(compiled(*x), model(*x), **TOL)
        by_device.setdefault(compiled.last_device_id, []).append(
            compiled.last_counters["instructions"])
    # A device's first calls also pay one-time costs (glibc's malloc sets up
    # its arena, then its caches; under 2% here); after that every call
    # retires exactly the same instructions.
    warm = [counts for counts in by_device.values() if len(counts) >= 4]
    assert warm, by_device
    for counts in warm:
        assert len(set(counts[-2:])) == 1, by_device
        assert abs(counts[0] - counts[-1]) < 0.05 * counts[-1], by_device
    (steady,) = {counts[-1] for counts in warm}
    return steady


def test_execute_response_counts_instructions_of_an_mlp(rv):
    vector = _mlp_executions(rv, {})
    scalar = _mlp_executions(rv, {"riscv": {"scalar_only": True}})
    # The MLP is 8x32x64 + 8x64x16 = 24576 multiply-accumulates: at least one
    # instruction per vector of four, and fewer with V than without.
    macs = 8 * 32 * 64 + 8 * 64 * 16
    assert vector > macs // 4
    assert scalar > macs // 2
    assert vector < scalar


def test_instruction_metric_counts_simulated_work(rv, rv_kilnd):
    _mlp_executions(rv, {})
    url = f"http://127.0.0.1:{rv_kilnd.metrics_port}/metrics"
    text = urllib.request.urlopen(url).read().decode()
    lines = [l for l in text.splitlines()
             if l.startswith("kiln_device_instructions_total{") and "local-qemu/" in l]
    assert lines and float(lines[0].rsplit(" ", 1)[1]) > 0


def test_bad_riscv_options_are_invalid_argument(rv):
    model = make("mlp_gelu_tanh")
    ep = torch.export.export(model, example_inputs(model, 2))
    with pytest.raises(kiln.InvalidArgumentError, match="options.riscv.vlen"):
        rv.compile(ep, target="riscv64", options={"riscv": {"vlen": 100}})
    with pytest.raises(kiln.InvalidArgumentError, match="riscv64' only"):
        rv.compile(ep, target="cpu", options={"riscv": {"vlen": 256}})
    with pytest.raises(kiln.InvalidArgumentError, match="scalar_only"):
        rv.compile(ep, target="riscv64", options={"riscv": {"vlen": 256, "scalar_only": True}})


def test_default_code_is_for_the_vlen_the_devices_report(rv):
    """The qemu agent reports VLEN 256: a compile that names none gets code
    for 256 (the key of an explicit 256), never the default 128's; 128 spelt
    out is the same key as no riscv options on a kilnd without devices."""
    model = make("mlp_gelu_tanh")
    ep = torch.export.export(model, example_inputs(model, 2))
    default = rv.compile(ep, target="riscv64")
    explicit = rv.compile(ep, target="riscv64", options={"riscv": {"vlen": 256}})
    short = rv.compile(ep, target="riscv64", options={"riscv": {"vlen": 128}})
    assert default.compile_key == explicit.compile_key
    assert default.digest == explicit.digest
    assert short.compile_key != default.compile_key


def test_code_for_a_longer_vlen_than_the_device_is_refused(rv):
    model = make("mlp_gelu_tanh")
    x = example_inputs(model, 2)
    compiled = rv.compile(torch.export.export(model, x), target="riscv64",
                          options={"riscv": {"vlen": 1024}})
    with pytest.raises(kiln.FailedPreconditionError, match="VLEN >= 1024"):
        compiled(*x)


def test_bare_metal_objects_are_exported_not_executed(rv):
    model = make("mlp_gelu_tanh")
    x = example_inputs(model, 2)
    compiled = rv.compile(torch.export.export(model, x), target="riscv64",
                          options=kiln.bundle.bare_metal_options())
    assert compiled.manifest.format == "elf-relocatable-object"
    assert compiled.manifest.triple == "riscv64-unknown-elf"
    with pytest.raises(kiln.FailedPreconditionError, match="bare-metal object"):
        compiled(*x)


# --- the bare-metal bundle ----------------------------------------------------

@pytest.mark.parametrize("vector", [True, False], ids=["rv64gcv", "rv64gc"])
@pytest.mark.parametrize("name", ["mlp_gelu_exact", "encoder_block"])
def test_bundle_builds_runs_under_qemu_system_and_matches_eager(rv, tmp_path, name, vector):
    missing = kiln.bundle.toolchain_missing()
    assert not missing, f"scripts/install_deps.sh installs these: {missing}"
    model = make(name)
    inputs = example_inputs(model, 2, seed=3)
    bundle = kiln.bundle.write_bundle(rv, torch.export.export(model, inputs), inputs,
                                      tmp_path / "bundle", name="model", vector=vector)
    files = sorted(p.name for p in bundle.directory.iterdir())
    assert files == sorted(["Makefile", "model.c", "model.h", "model.ld", "model_model.o",
                            "model_weights.bin", "model_weights.c", "model_inputs.bin"])
    assert "kiln_invoke" in (bundle.directory / "model.h").read_text()
    elf = bundle.build()
    assert elf.read_bytes()[:4] == b"\x7fELF"
    (out,) = bundle.run()
    torch.testing.assert_close(out, model(*inputs), **TOL)


class HalfPrecision(torch.nn.Module):
    """f32 -> f16 and bf16 and back: the runtime routines rv64gc lacks."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (x.half() * 3).float(), (x.to(torch.bfloat16) + 1).float()


@pytest.mark.parametrize("where", ["qemu-agent", "bare-metal"])
def test_half_and_bfloat16_conversions_on_riscv64(rv, tmp_path, where):
    torch.manual_seed(0)
    x = torch.cat([torch.randn(60) * 100, torch.tensor([0.0, -0.0, 1e-6, 7e4])]).reshape(8, 8)
    model = HalfPrecision()
    expected = model(x)
    ep = torch.export.export(model, (x,))
    if where == "qemu-agent":
        out = rv.compile(ep, target="riscv64")(x)
    else:
        bundle = kiln.bundle.write_bundle(rv, ep, (x,), tmp_path / "half", name="half")
        bundle.build()
        out = bundle.run()
    for got, want in zip(out, expected):  # bit for bit: conversions are exact
        assert torch.equal(got.view(torch.int32), want.view(torch.int32))


class Spectrum(torch.nn.Module):
    """A complex64 input and output: a real FFT times complex weights, and
    the spectrum's magnitude."""

    def forward(self, z: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        spectrum = torch.fft.rfft(x)
        return z * spectrum, spectrum.abs()


@pytest.mark.parametrize("where", ["qemu-agent", "bare-metal"])
def test_complex_tensors_on_riscv64(rv, tmp_path, where):
    torch.manual_seed(1)
    z = torch.randn(3, 5, dtype=torch.complex64)
    x = torch.randn(3, 8)
    model = Spectrum()
    expected = model(z, x)
    ep = torch.export.export(model, (z, x))
    if where == "qemu-agent":
        out = rv.compile(ep, target="riscv64")(z, x)
    else:
        bundle = kiln.bundle.write_bundle(rv, ep, (z, x), tmp_path / "spectrum", name="spectrum")
        bundle.build()
        out = bundle.run()
    assert out[0].dtype == torch.complex64 and out[1].dtype == torch.float32
    for got, want in zip(out, expected):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_a_corrupt_model_object_fails_the_build_with_the_linker_output(rv, tmp_path):
    model = make("mlp_gelu_tanh")
    inputs = example_inputs(model, 2)
    bundle = kiln.bundle.write_bundle(rv, torch.export.export(model, inputs), inputs,
                                      tmp_path / "b", name="broken")
    (bundle.directory / "broken_model.o").write_bytes(b"not an object")
    with pytest.raises(kiln.bundle.BundleError, match="building bundle"):
        bundle.build()


# --- torch.compile modes ----------------------------------------------------

def test_mode_simulate_runs_on_the_qemu_device(rv_kilnd):
    model = make("mlp_gelu_exact")
    be = kiln.backend(rv_kilnd.address, mode="simulate")
    x = example_inputs(model, 4)
    torch.testing.assert_close(torch.compile(model, backend=be)(*x), model(*x), **TOL)
    graph = be.compiled_graphs[0]
    assert graph.target == "riscv64"
    assert graph.specializations[0].last_device_id.startswith("local-qemu/")
    assert graph.last_counters["instructions"] > 0


def test_mode_simulate_needs_a_simulator(kilnd):
    with pytest.raises(kiln.UnavailableError, match="no 'riscv64' devices"):
        kiln.backend(kilnd.address, mode="simulate")


def test_mode_execute_runs_on_the_targets_agent(rv_kilnd):
    model = make("batched_matmul")
    be = kiln.backend(rv_kilnd.address, target="riscv64", mode="execute")
    x = example_inputs(model, 3)
    torch.testing.assert_close(torch.compile(model, backend=be)(*x), model(*x), **TOL)
    assert be.compiled_graphs[0].specializations[0].manifest.target == "riscv64"


def test_mode_compile_returns_every_stage_and_runs_eagerly(rv_kilnd):
    model = make("mlp_gelu_tanh")
    be = kiln.backend(rv_kilnd.address, target="riscv64", mode="compile")
    x = example_inputs(model, 2)
    torch.testing.assert_close(torch.compile(model, backend=be)(*x), model(*x))
    mlir = be.compiled_graphs[0].mlir
    assert list(mlir) == ["aten", "linalg", "llvm-dialect", "llvm-ir", "asm"]
    assert "aten.mm" in mlir["aten"] or "aten.addmm" in mlir["aten"]
    assert "linalg." in mlir["linalg"]
    assert "vfmacc" in mlir["asm"] or "vfmadd" in mlir["asm"]


def test_mode_codegen_writes_a_bundle_and_runs_eagerly(rv_kilnd, tmp_path):
    model = make("mlp_gelu_tanh")
    be = kiln.backend(rv_kilnd.address, mode="codegen", codegen_dir=tmp_path)
    x = example_inputs(model, 2)
    torch.testing.assert_close(torch.compile(model, backend=be)(*x), model(*x))
    (bundle,) = be.compiled_graphs[0].bundles
    bundle.build()
    (out,) = bundle.run()
    torch.testing.assert_close(out, model(*x), **TOL)


def test_mode_trace_prints_the_graph_and_runs_eagerly(rv_kilnd, caplog):
    model = make("mlp_gelu_tanh")
    be = kiln.backend(rv_kilnd.address, mode="trace")
    x = example_inputs(model, 2)
    with caplog.at_level("INFO", logger="kiln.backend"):
        torch.testing.assert_close(torch.compile(model, backend=be)(*x), model(*x))
    (code,) = be.compiled_graphs[0].traced
    assert "torch.ops.aten" in code
    assert "traced" in caplog.text
    assert be.compiled_graphs[0].specializations == []


def test_mode_eager_never_contacts_kiln():
    model = make("mlp_gelu_tanh")
    # Nothing listens here: eager mode must not need the daemon.
    be = kiln.backend("127.0.0.1:1", mode="eager")
    x = example_inputs(model, 2)
    torch.testing.assert_close(torch.compile(model, backend=be)(*x), model(*x))


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="mode must be one of"):
        kiln.backend("127.0.0.1:1", mode="simulation")


# --- the kiln CLI -----------------------------------------------------------

def test_cli_runs_on_riscv64_and_prints_the_instruction_count(rv_kilnd, tmp_path):
    model = make("mlp_gelu_tanh")
    x = example_inputs(model, 3)
    torch.export.save(torch.export.export(model, x), tmp_path / "mlp.pt2")
    torch.save(x[0], tmp_path / "x.pt")
    kiln_cli = pathlib.Path(sys.executable).parent / "kiln"
    proc = subprocess.run(
        [str(kiln_cli), "run", str(tmp_path / "mlp.pt2"), "--target", "riscv64", "--input",
         str(tmp_path / "x.pt"), "--compare"], capture_output=True, text=True, timeout=300,
        env=dict(os.environ, KILN_ADDRESS=rv_kilnd.address))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"on local-qemu/\d", proc.stdout), proc.stdout
    count = re.search(r"^simulated instructions: ([\d,]+)$", proc.stdout, re.M)
    assert count and int(count.group(1).replace(",", "")) > 1000, proc.stdout
    assert float(re.search(r"max \|kiln - eager\| = (\S+)", proc.stdout).group(1)) < 1e-4


def test_cpu_fallback_runs_target_segments_on_the_simulator(rv):
    """A graph with ops riscv64 lacks: its target segments run on the qemu
    device (counting instructions), the lacked ops on the host CPU."""
    from test_e2e_placement import LACKED, assert_matches_eager, exported
    model, ep, x = exported()
    compiled = rv.compile(ep, target="riscv64", fallback="cpu")
    assert compiled.partitioned
    assert compiled.placement.target == "riscv64"
    assert {n.op for n in compiled.placement.cpu_nodes} == LACKED
    targets = [s for s in compiled.placement.segments if s.manifest.target]
    assert targets and all(s.manifest.triple.startswith("riscv64") for s in targets)
    assert_matches_eager(model, x, compiled(x))
    assert compiled.last_device_id in {d.id for d in rv.devices(kind="riscv64")}
    assert compiled.last_counters["instructions"] > 4 * 8 * 16
