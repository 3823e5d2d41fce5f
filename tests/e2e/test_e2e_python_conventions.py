"""What Python users expect, against a real kilnd: backend="kiln" by name,
kiln --version, a model that survives its daemon's restart on an empty cache,
stage dumps that do not change the executable, and one-line errors whose
hints fit the error."""

import logging
import os
import socket
import subprocess
import sys
import time

import pytest
import torch
import torch.nn as nn

import kiln
from kiln.compiled import PARAMETER_SET_MIN
from kiln.testing import MLP
from lacked_ops import lacked
from support import Kilnd

KILN_CLI = [sys.executable, "-m", "kiln.cli"]


def _model_and_input(seed=0):
    torch.manual_seed(seed)
    return MLP(d_in=16, d_hidden=32, d_out=8).eval(), torch.randn(4, 16)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- backend="kiln" ---------------------------------------------------------------


def test_torch_compile_by_name_with_options(kilnd):
    torch._dynamo.reset()
    model, x = _model_and_input()
    fast = torch.compile(model, backend="kiln",
                         options={"address": kilnd.address, "target": "cpu",
                                  "mode": "execute", "fallback": None})
    with torch.no_grad():
        torch.testing.assert_close(fast(x), model(x), rtol=1e-5, atol=1e-5)


def test_torch_compile_by_name_reads_kiln_address(kilnd, monkeypatch):
    torch._dynamo.reset()
    monkeypatch.setenv("KILN_ADDRESS", kilnd.address)
    model, x = _model_and_input(1)
    fast = torch.compile(model, backend="kiln", options={"fallback": "cpu"})
    with torch.no_grad():
        torch.testing.assert_close(fast(x), model(x), rtol=1e-5, atol=1e-5)


def test_torch_compile_by_name_refuses_unknown_options(kilnd):
    torch._dynamo.reset()
    model, x = _model_and_input()
    fast = torch.compile(model, backend="kiln", options={"adress": kilnd.address})
    with pytest.raises(Exception, match="unknown option\\(s\\) adress"):
        fast(x)


# --- versions -----------------------------------------------------------------------


def test_kiln_version_names_the_client_and_the_daemon(kilnd):
    out = subprocess.run([*KILN_CLI, "--version", "-a", kilnd.address], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert f"kiln {kiln.__version__} (torch {torch.__version__})" in out
    info = kiln.Client(kilnd.address).daemon_info()
    assert info.version == kiln.__version__
    assert f"kilnd {info.version} at {kilnd.address} (compiler {info.compiler_build_id})" in out
    kilnd_out = subprocess.run([str(kilnd.bin_dir / "kilnd"), "--version"], capture_output=True,
                               text=True, timeout=60, check=True).stdout
    assert kilnd_out.strip() == f"kilnd {info.version} (compiler {info.compiler_build_id})"


def test_kiln_version_without_a_daemon():
    out = subprocess.run([*KILN_CLI, "--version", "-a", f"127.0.0.1:{_free_port()}"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.startswith(f"kiln {kiln.__version__}")
    assert "kilnd: no answer at 127.0.0.1:" in out


# --- restarts ---------------------------------------------------------------------


def _deep_model_and_input(seed=0):
    """Twelve parameters: calls name them by one ParameterSet blob."""
    torch.manual_seed(seed)
    layers = [nn.Linear(16, 16) for _ in range(6)]
    return nn.Sequential(*layers).eval(), torch.randn(4, 16)


@pytest.mark.parametrize("make", [_model_and_input, _deep_model_and_input],
                         ids=["parameter-list", "parameter-set"])
def test_a_model_runs_again_after_its_daemon_restarts_on_an_empty_cache(tmp_path, caplog,
                                                                        make):
    """Both a compiled model and a torch.compile'd one: the first call after
    the restart finds the executable gone, recompiles once and runs (the new
    daemon gets the weights, and the parameter set naming them, again)."""
    port = _free_port()
    first = Kilnd(tmp_path / "a", tmp_path / "a" / "cache", listen=f"127.0.0.1:{port}").start()
    model, x = make(2)
    assert (len(list(model.parameters())) >= PARAMETER_SET_MIN) == (make is _deep_model_and_input)
    with torch.no_grad():
        expected = model(x)
    client = kiln.Client(first.address)
    compiled = client.compile(torch.export.export(model, (x,)))
    torch._dynamo.reset()
    fast = torch.compile(model, backend=kiln.backend(client))
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), expected, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(fast(x), expected, rtol=1e-5, atol=1e-5)
    first.stop()
    second = Kilnd(tmp_path / "b", tmp_path / "b" / "cache", listen=f"127.0.0.1:{port}").start()
    try:
        with caplog.at_level(logging.WARNING, logger="kiln"), torch.no_grad():
            torch.testing.assert_close(compiled(x), expected, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(fast(x), expected, rtol=1e-5, atol=1e-5)
        assert compiled.recompiles == 1
        again = [r for r in caplog.records if "compiling it again" in r.getMessage()]
        assert len(again) == 2, [r.getMessage() for r in caplog.records]
        # Once: the next calls run the recompiled executable.
        with torch.no_grad():
            compiled(x)
        assert compiled.recompiles == 1
    finally:
        client.close()
        second.assert_stops_cleanly()


def test_calls_ride_out_a_restart(tmp_path):
    """A call made while kilnd restarts waits for it (wait_for_ready and the
    retry policy) instead of failing UNAVAILABLE."""
    port = _free_port()
    cache = tmp_path / "cache"
    first = Kilnd(tmp_path, cache, listen=f"127.0.0.1:{port}").start()
    client = kiln.Client(first.address, connect_timeout=30)
    assert client.devices()
    first.stop()
    restarted: list[Kilnd] = []

    def restart_soon():
        time.sleep(1.0)
        restarted.append(Kilnd(tmp_path, cache, name="kilnd-again",
                               listen=f"127.0.0.1:{port}").start())

    import threading
    thread = threading.Thread(target=restart_soon)
    thread.start()
    try:
        t0 = time.monotonic()
        assert client.daemon_info().version == kiln.__version__
        assert time.monotonic() - t0 >= 0.5
    finally:
        thread.join()
        client.close()
        for d in restarted:
            d.assert_stops_cleanly()


# --- stage dumps --------------------------------------------------------------------


def test_stage_dumps_do_not_change_the_executable(client):
    model, x = _model_and_input(3)
    ep = torch.export.export(model, (x,))
    plain = client.compile(ep)
    dumped = client.compile(ep, options={"dump_stages": True})
    assert dumped.digest == plain.digest and dumped.cache_hit
    assert list(dumped.stage_dumps()) == ["aten", "linalg", "llvm-dialect", "llvm-ir", "asm"]
    # get_mlir of a model compiled without dumps: the same executable again.
    other, y = _model_and_input(4)
    fresh = client.compile(torch.export.export(other, (y,)), options={"opt_level": 1})
    before = client.cache.stats()
    mlir = kiln.get_mlir(fresh)
    assert "func.func" in mlir["aten"] and mlir["asm"]
    after = client.cache.stats()
    assert after.compile_misses == before.compile_misses, "a dump run is not a compile"
    assert after.executable_count == before.executable_count
    assert kiln.get_mlir(fresh, stage="asm") == mlir["asm"]
    assert client.compile(torch.export.export(other, (y,)),
                          options={"opt_level": 1, "dump_stages": True}).digest == fresh.digest


# --- errors and their hints -----------------------------------------------------------


def _one_line(err: kiln.KilnError) -> str:
    text = str(err)
    assert "\n" not in text, text
    assert f"; hint: {err.hint}" in text
    return err.hint


def test_a_down_daemon_from_python_has_a_hint():
    address = f"127.0.0.1:{_free_port()}"
    with kiln.Client(address, connect_timeout=0.2) as c:
        with pytest.raises(kiln.UnavailableError) as info:
            c.devices()
    assert f"is kilnd running at {address}?" in _one_line(info.value)


def test_a_name_that_does_not_resolve_says_so():
    with kiln.Client("no-such-host.invalid:50051", connect_timeout=0.2) as c:
        with pytest.raises(kiln.UnavailableError) as info:
            c.devices()
    hint = _one_line(info.value)
    assert "'no-such-host.invalid' does not resolve" in hint and "kilnd --listen" not in hint


def test_a_shape_mismatch_hints_at_the_compiled_shapes(client):
    model, x = _model_and_input()
    compiled = client.compile(torch.export.export(model, (x,)))
    with pytest.raises(kiln.InvalidArgumentError) as info:
        compiled(torch.randn(5, 16))
    hint = _one_line(info.value)
    assert "compiled for other inputs" in hint and "kiln devices" not in hint


def test_an_unsupported_op_hints_at_fallback(client):
    from test_e2e_errors import one_op_graph
    with pytest.raises(kiln.UnimplementedError) as info:
        client.compile_graph(one_op_graph("aten.definitely_not_an_op.default"))
    hint = _one_line(info.value)
    assert 'fallback="cpu"' in hint and "upgrade" not in hint


def test_compiling_a_module_says_how_to_export_it(client):
    model, _ = _model_and_input()
    with pytest.raises(kiln.InvalidArgumentError) as info:
        client.compile(model)
    assert "torch.export.export(model, example_args)" in _one_line(info.value)


def test_a_target_no_agent_serves_fails_at_once_with_a_hint(tmp_path):
    # No qemu agent, and the startup grace (--device-wait-s) is over.
    daemon = Kilnd(tmp_path, tmp_path / "cache", extra_args=("--device-wait-s", "1")).start()
    try:
        time.sleep(1.0)
        model, x = _model_and_input()
        with kiln.Client(daemon.address) as c:
            compiled = c.compile(torch.export.export(model, (x,)), target="riscv64")
            t0 = time.monotonic()
            with pytest.raises(kiln.UnavailableError) as info:
                compiled(x)
            assert time.monotonic() - t0 < 5.0
        assert "--local-agents cpu,qemu" in _one_line(info.value)
    finally:
        daemon.assert_stops_cleanly()


def test_cli_unsupported_op_hint_is_not_upgrade_kilnd(kilnd, tmp_path):
    class Unsupported(torch.nn.Module):
        def forward(self, x):
            return lacked(x, x)

    path = tmp_path / "lacked.pt2"
    torch.export.save(torch.export.export(Unsupported(), (torch.randn(4),)), path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [os.path.dirname(__file__), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([*KILN_CLI, "-a", kilnd.address, "compile", str(path),
                          "--import", "lacked_ops"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert lines[0].startswith("kiln: error: [UNIMPLEMENTED]") and len(lines) == 2, run.stderr
    assert 'fallback="cpu"' in lines[1] and "upgrade" not in lines[1]


def test_cli_output_into_a_closed_pipe_is_quiet(kilnd):
    proc = subprocess.Popen([*KILN_CLI, "-a", kilnd.address, "devices"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head` exiting before kiln writes
    _, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err
