"""The daemon survives its agent dying: it restarts the local agent and the
next execution runs on it."""

import os
import signal
import subprocess
import time

import pytest
import torch

import kiln
from kiln.testing import MLP, example_inputs
from support import Agent, Kilnd, wait_until

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


class AddThree(torch.nn.Module):
    def forward(self, a, b, c):
        return a + b + c


def test_an_agent_that_stops_reading_costs_calls_their_deadlines(start_kilnd):
    """An agent that stops reading its link (stopped here with SIGSTOP): a
    task frame bigger than the socket holds used to block kilnd in its send
    past the call's deadline, and every call behind it. Now each call ends
    at its deadline with kilnd's DEADLINE_EXCEEDED; the cut frame is sent
    on in the background, so that the agent, once it runs again, reads a
    whole stream and serves the next call."""
    daemon = start_kilnd(extra_args=("--execute-timeout-s", "2"))
    xs = [torch.randn(1 << 18, generator=torch.Generator().manual_seed(i)) for i in range(3)]
    want = xs[0] + xs[1] + xs[2]
    # 1 MiB each, inline over gRPC: one task frame of 3 MiB.
    with kiln.Client(daemon.address, timeout=None, local=False) as client:
        compiled = client.compile(torch.export.export(AddThree(), tuple(xs)), target="cpu")
        torch.testing.assert_close(compiled(*xs), want, rtol=0, atol=0)
        [agent] = agent_pids(daemon.proc.pid)
        os.kill(agent, signal.SIGSTOP)
        try:
            for why in ("before the deadline", "did not take task"):
                # No client deadline: kilnd's own 2 s. The first call's frame
                # goes in part and is finished in the background; the second
                # finds the link still busy with it.
                started = time.monotonic()
                with pytest.raises(kiln.DeadlineExceededError, match=why):
                    compiled(*xs)
                assert time.monotonic() - started < 30
        finally:
            os.kill(agent, signal.SIGCONT)
        torch.testing.assert_close(compiled(*xs), want, rtol=0, atol=0)
        assert agent_pids(daemon.proc.pid) == [agent], "the agent was not kept"


def test_a_remote_agent_that_stops_reading_costs_calls_their_deadlines(tmp_path):
    """The same for an agent that gets its tasks on its Connect stream (a
    remote agent): gRPC's Write blocks once the stream's flow-control window
    is full, and had no deadline, so with the agent stopped a call hung in
    kilnd until the agent ran again, and every call behind it. Now kilnd's
    writer thread writes, each call waits for its task until its deadline
    (a task not begun is withdrawn), and the agent, once it runs again,
    serves the next call. Heartbeats are slow here so that the stopped
    agent stays the device every call goes to."""
    daemon = Kilnd(tmp_path, tmp_path / "cache", wait_for_cpu=False,
                   extra_args=("--local-agents", "none", "--execute-timeout-s", "2",
                               "--heartbeat-ms", "60000")).start()
    agent = Agent(daemon, daemon.address, tmp_path, "remote-cpu")
    xs = [torch.randn(1 << 18, generator=torch.Generator().manual_seed(i)) for i in range(3)]
    want = xs[0] + xs[1] + xs[2]
    try:
        with kiln.Client(daemon.address, timeout=None, local=False) as client:
            wait_until(lambda: any(d.agent_id == "remote-cpu" for d in client.devices(kind="cpu")),
                       "the remote agent's registration")
            compiled = client.compile(torch.export.export(AddThree(), tuple(xs)), target="cpu")
            torch.testing.assert_close(compiled(*xs), want, rtol=0, atol=0)
            assert compiled.last_device_id.startswith("remote-cpu/")
            os.kill(agent.proc.pid, signal.SIGSTOP)
            try:
                # 3 MiB tasks, inline: the stream's window and the sockets
                # fill within a few; every call still ends at kilnd's 2 s,
                # the later ones with their task withdrawn, never written.
                messages = []
                for _ in range(8):
                    started = time.monotonic()
                    with pytest.raises(kiln.DeadlineExceededError) as missed:
                        compiled(*xs)
                    assert time.monotonic() - started < 10
                    messages.append(str(missed.value))
                assert any("did not take task" in m and "still writing an earlier task" in m
                           for m in messages), messages
            finally:
                os.kill(agent.proc.pid, signal.SIGCONT)
            torch.testing.assert_close(compiled(*xs), want, rtol=0, atol=0)
            assert compiled.last_device_id.startswith("remote-cpu/")
    finally:
        agent.stop()
        daemon.assert_stops_cleanly()
