"""The daemon survives its agent dying: it restarts the local agent and the
next execution runs on it."""

import os
import signal
import subprocess
import time

import torch

import kiln
from kiln.testing import MLP, example_inputs
from support import Kilnd

TOL = dict(rtol=1e-4, atol=1e-5)


def agent_pids(daemon_pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(daemon_pid), "-f", "kiln-agent-cpu"],
                         capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def test_daemon_survives_agent_crash(start_kilnd):
    daemon = start_kilnd()
    model = MLP(d_in=12, d_hidden=20, d_out=6).eval()
    (x,) = example_inputs(model, 5)
    with kiln.Client(daemon.address, timeout=120) as client:
        compiled = client.compile(torch.export.export(model, (x,)), target="cpu")
        torch.testing.assert_close(compiled(x), model(x), **TOL)

        [agent] = agent_pids(daemon.proc.pid)
        os.kill(agent, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            restarted = [p for p in agent_pids(daemon.proc.pid) if p != agent]
            if restarted:
                break
            time.sleep(0.05)
        assert restarted, "kilnd did not restart its local agent within 60 s"

        # The daemon kept serving, and executes on the restarted agent (the
        # scheduler waits for the agent to register again).
        assert daemon.proc.poll() is None
        torch.testing.assert_close(compiled(x), model(x), **TOL)
        assert any(d.kind == "cpu" for d in client.devices())


def test_local_agents_exit_when_their_daemon_dies(tmp_path):
    """kilnd SIGKILLed (itself only): its local agents see their local link
    close and exit instead of lingering as orphans with their devices,
    caches and memory."""
    daemon = Kilnd(tmp_path, tmp_path / "cache", name="dies").start()
    [agent] = agent_pids(daemon.proc.pid)
    os.kill(daemon.proc.pid, signal.SIGKILL)
    daemon.proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(agent, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(agent, signal.SIGKILL)
    raise AssertionError("the local agent outlived its kilnd by 30 s")
