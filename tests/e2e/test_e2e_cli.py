"""The installed `kiln` executable against a real kilnd: devices, compile a
saved .pt2 (with --dump), run it on saved inputs, cache subcommands, and the
one-line errors for a missing file and an unreachable daemon."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys

import pytest
import torch

from kiln.testing import MLP
from lacked_ops import LACKED_OP

HEX64 = re.compile(r"\b[0-9a-f]{64}\b")


def kiln_exe() -> str:
    exe = pathlib.Path(sys.executable).with_name("kiln")
    if exe.exists():
        return str(exe)
    found = shutil.which("kiln")
    if not found:
        pytest.fail("the `kiln` console script is not installed: run client_py/setup_venv.sh",
                    pytrace=False)
    return found


#: The CLI's option that registers the custom op the mixed model calls
#: (lacked_ops, found through PYTHONPATH: see run_kiln).
IMPORT_LACKED = ("--import", "lacked_ops")


def run_kiln(*args: str, address: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, KILN_ADDRESS=address,
               PYTHONPATH=os.pathsep.join(filter(None, [str(pathlib.Path(__file__).parent),
                                                        os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([kiln_exe(), *args], capture_output=True, text=True, env=env,
                          timeout=300)
    if check:
        assert proc.returncode == 0, f"kiln {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_model")
    torch.manual_seed(7)
    model = MLP(d_in=8, d_hidden=16, d_out=4).eval()
    x = torch.randn(3, 8)
    torch.export.save(torch.export.export(model, (x,)), d / "mlp.pt2")
    torch.save(x, d / "x.pt")
    return d, model, x


def test_devices_lists_the_cpu_agent(kilnd):
    out = run_kiln("devices", address=kilnd.address).stdout
    header, *rows = out.splitlines()
    assert header.split()[:5] == ["ID", "KIND", "DEVICE", "STATE", "QUEUE"]
    assert any(r.split()[1:4] == ["cpu", "hardware", "READY"] for r in rows), out


def test_address_flag_wins_over_env(kilnd):
    proc = subprocess.run([kiln_exe(), "--address", kilnd.address, "devices"], capture_output=True,
                          text=True, env=dict(os.environ, KILN_ADDRESS="127.0.0.1:1"), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "cpu" in proc.stdout


def test_compile_prints_digest_and_dumps(kilnd, saved_model, tmp_path):
    d, _, _ = saved_model
    dump = tmp_path / "dump"
    out = run_kiln("compile", str(d / "mlp.pt2"), "--target", "cpu", "--dump", str(dump),
                   address=kilnd.address).stdout
    digest = re.search(r"^executable\s+([0-9a-f]{64})$", out, re.M)
    assert digest, out
    assert re.search(r"^inputs\s+\S+: float32\[3, 8\]$", out, re.M), out
    # How many nodes each unit runs: the products and their folded gelu in
    # oneDNN.
    units = re.search(r"^units\s+(.+)$", out, re.M)
    assert units and re.search(r"\bonednn [1-9]", units.group(1)), out
    assert (dump / "graph.pb").stat().st_size > 0
    assert "entry_symbol" in (dump / "manifest.textproto").read_text()
    assert digest.group(1) in (dump / "compile.json").read_text()
    # The module after every stage of the daemon's compile.
    stages = {p.name: p.read_text() for p in dump.iterdir() if p.name[0].isdigit()}
    assert sorted(stages) == ["0-aten.mlir", "1-linalg.mlir", "2-llvm-dialect.mlir",
                              "3-llvm-ir.ll", "4-asm.s"], sorted(stages)
    assert "aten.addmm" in stages["0-aten.mlir"]
    # nn.Linear's matmul is a call into the agent's oneDNN (the default
    # kernel library), with its gelu folded in as the call's epilogue.
    assert "call @kiln_rt_matmul_f32" in stages["1-linalg.mlir"]
    assert "aten.gelu" in stages["0-aten.mlir"]
    assert "math.erf" not in stages["1-linalg.mlir"]
    assert "llvm.func @kiln_invoke" in stages["2-llvm-dialect.mlir"]
    assert "define void @kiln_invoke" in stages["3-llvm-ir.ll"]
    assert "kiln_invoke:" in stages["4-asm.s"]
    # A cache hit still has its dumps (they live in the executable's record).
    dump2 = tmp_path / "dump2"
    again = run_kiln("compile", str(d / "mlp.pt2"), "--dump", str(dump2),
                     address=kilnd.address).stdout
    assert re.search(r"^cache hit\s+yes$", again, re.M), again
    assert (dump2 / "1-linalg.mlir").read_text() == stages["1-linalg.mlir"]
    assert digest.group(1) in again


def test_run_matches_eager_and_saves_outputs(kilnd, saved_model, tmp_path):
    d, model, x = saved_model
    out_file = tmp_path / "y.pt"
    out = run_kiln("run", str(d / "mlp.pt2"), "--input", str(d / "x.pt"), "--output",
                   str(out_file), "--compare", address=kilnd.address).stdout
    assert re.search(r"^output 0: float32\[3, 4\]", out, re.M), out
    y = torch.load(out_file, weights_only=True)
    torch.testing.assert_close(y, model(x).detach(), rtol=1e-4, atol=1e-5)
    diff = float(re.search(r"max \|kiln - eager\| = (\S+)", out).group(1))
    assert diff < 1e-4, out


def test_run_with_wrong_input_count_is_one_line(kilnd, saved_model):
    d, _, _ = saved_model
    proc = run_kiln("run", str(d / "mlp.pt2"), address=kilnd.address, check=False)
    assert proc.returncode == 1
    assert "takes 1 input(s)" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_model_file_is_one_line(kilnd, tmp_path):
    proc = run_kiln("compile", str(tmp_path / "nope.pt2"), address=kilnd.address, check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("kiln: error: no such model file:"), proc.stderr
    assert "hint: " in proc.stderr and "Traceback" not in proc.stderr


def test_unreachable_daemon_is_one_line_with_hint():
    with socket.socket() as s:      # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = run_kiln("--timeout", "10", "devices", address=f"127.0.0.1:{port}", check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("kiln: error: [UNAVAILABLE]"), proc.stderr
    assert lines[1].startswith(f"hint: is kilnd running at 127.0.0.1:{port}?"), proc.stderr
    assert "Traceback" not in proc.stderr


def test_cache_stats_gc_and_salt(start_kilnd, saved_model, tmp_path):
    daemon = start_kilnd(cache_dir=tmp_path / "cli-cache")
    d, _, _ = saved_model
    run_kiln("compile", str(d / "mlp.pt2"), address=daemon.address)
    stats = run_kiln("cache", "stats", address=daemon.address)
    assert re.search(r"^executables\s+[1-9]", stats.stdout, re.M), stats.stdout
    assert re.search(r"^salt\s+\(none\)$", stats.stdout, re.M), stats.stdout
    salt = run_kiln("cache", "salt", "rotated-1", address=daemon.address).stdout
    assert "'rotated-1'" in salt and "was ''" in salt
    again = run_kiln("compile", str(d / "mlp.pt2"), address=daemon.address).stdout
    assert re.search(r"^cache hit\s+no$", again, re.M), "a new salt must not serve old executables"
    gc = run_kiln("cache", "gc", "--target-bytes", "1", address=daemon.address).stdout
    m = re.match(r"evicted (\d+) blobs \(.*\); .* left", gc)
    assert m and int(m.group(1)) > 0, gc    # nothing is pinned between requests
    stats2 = run_kiln("cache", "stats", address=daemon.address).stdout
    assert "'rotated-1'" in stats2


def test_cache_why_names_what_differs(start_kilnd, saved_model, tmp_path):
    """`kiln cache why` in the four cases a user meets: another graph under
    the same name, other options, another CPU, and a new salt."""
    daemon = start_kilnd(cache_dir=tmp_path / "why-cache")
    d, _, x = saved_model
    model = str(d / "mlp.pt2")
    run_kiln("compile", model, address=daemon.address)
    hit = run_kiln("cache", "why", model, address=daemon.address).stdout
    assert re.search(r"^cached\s+yes", hit, re.M), hit

    # The same name, another graph: tanh-approximated GELU (same shapes).
    other = tmp_path / "v2" / "mlp.pt2"
    other.parent.mkdir()
    torch.manual_seed(7)
    torch.export.save(torch.export.export(MLP(d_in=8, d_hidden=16, d_out=4,
                                              approximate="tanh").eval(), (x,)), other)
    graph = run_kiln("cache", "why", str(other), address=daemon.address).stdout
    assert re.search(r"^\s+graph\s+node \d+ '.*' \(aten\.gelu\.default\): other arguments",
                     graph, re.M), graph

    options = run_kiln("cache", "why", model, "--opt-level", "3", address=daemon.address).stdout
    assert re.search(r"^\s+options\s+options \(cached -> here\): .*opt_level: 2 -> 3",
                     options, re.M), options

    features = run_kiln("cache", "why", model, "--cpu", "x86-64-v2",
                        address=daemon.address).stdout
    assert re.search(r"^\s+target_features\s+cpu 'x86-64-v2'", features, re.M), features

    run_kiln("cache", "salt", "rotated-2", address=daemon.address)
    salt = run_kiln("cache", "why", model, address=daemon.address).stdout
    assert re.search(r"^\s+salt\s+salt 'rotated-2' here, \(none\) cached$", salt, re.M), salt
    # Nothing but the salt differs from the nearest key.
    nearest = salt.split("\n\n")[1]
    assert len([l for l in nearest.splitlines() if l.startswith("    ")]) == 1, salt


@pytest.fixture(scope="module")
def saved_mixed(tmp_path_factory):
    """A model with ops the cpu target lacks (test_e2e_placement.Mixed)."""
    from test_e2e_placement import exported
    d = tmp_path_factory.mktemp("cli_mixed")
    model, ep, x = exported()
    torch.export.save(ep, d / "mixed.pt2")
    torch.save(x, d / "x.pt")
    return d, model, x


def test_compile_with_cpu_fallback_prints_the_placement(kilnd, saved_mixed):
    d, _, _ = saved_mixed
    # Without --import the archive's custom op cannot be resolved: the hint
    # says what to do.
    proc = run_kiln("compile", str(d / "mixed.pt2"), address=kilnd.address, check=False)
    assert proc.returncode == 1 and "--import the module" in proc.stderr, proc.stderr
    proc = run_kiln("compile", str(d / "mixed.pt2"), *IMPORT_LACKED, address=kilnd.address,
                    check=False)
    assert proc.returncode == 1
    assert "cannot compile 3 of" in proc.stderr and "Traceback" not in proc.stderr
    out = run_kiln("compile", str(d / "mixed.pt2"), *IMPORT_LACKED, "--fallback", "cpu",
                   address=kilnd.address).stdout
    assert re.search(r"^executable\s+partitioned: \d+ segments$", out, re.M), out
    assert len(re.findall(rf"^  cpu  node \d+ '\S+' \({re.escape(LACKED_OP)}\): unsupported op",
                          out, re.M)) == 3, out
    proc = run_kiln("compile", str(d / "mixed.pt2"), *IMPORT_LACKED,
                    "--max-fallback-fraction", "0.5", address=kilnd.address, check=False)
    assert proc.returncode == 1 and "--fallback cpu" in proc.stderr, proc.stderr


def test_run_with_cpu_fallback_matches_eager(kilnd, saved_mixed):
    d, _, _ = saved_mixed
    out = run_kiln("run", str(d / "mixed.pt2"), *IMPORT_LACKED, "--input", str(d / "x.pt"),
                   "--fallback", "cpu", "--compare", address=kilnd.address).stdout
    assert re.search(r"^executable partitioned \(\d+ segments, 3 ops on the host CPU\)", out,
                     re.M), out
    diffs = [float(v) for v in re.findall(r"max \|kiln - eager\| = (\S+)", out)]
    assert len(diffs) == 2 and max(diffs) < 1e-4, out
    assert "host cpu" in out
