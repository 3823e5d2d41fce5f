"""SIGTERM drains kilnd, and standalone agents follow a restarted daemon.

On SIGTERM kilnd turns new Compile/Execute calls away with UNAVAILABLE, lets
those in flight finish (up to --drain-timeout-s), then exits 0. An agent whose
daemon goes away keeps redialing and registers with the next daemon on the
same address.
"""

from __future__ import annotations

import concurrent.futures
import signal
import urllib.error
import urllib.request
import time

import grpc
import pytest
import torch

import kiln
import kiln.testing
from kiln.v1 import cache_pb2, cache_pb2_grpc, compiler_pb2, compiler_pb2_grpc
from kiln.v1 import executor_pb2, executor_pb2_grpc
from support import WAIT_S, Agent, Kilnd, _tail, wait_until

def has_device(address: str, agent_id: str) -> bool:
    try:
        with kiln.Client(address, timeout=2) as c:
            return any(d.id.startswith(agent_id + "/") for d in c.devices())
    except kiln.KilnError:
        return False


def pinned_bytes(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        stats = cache_pb2_grpc.CacheStub(channel).GetCacheStats(
            cache_pb2.GetCacheStatsRequest(), timeout=5)
    return stats.pinned_bytes


def refused_code(address: str) -> grpc.StatusCode:
    """What an (empty) Compile gets: INVALID_ARGUMENT while serving,
    UNAVAILABLE once draining."""
    with grpc.insecure_channel(address) as channel:
        try:
            compiler_pb2_grpc.CompilerStub(channel).Compile(
                compiler_pb2.CompileRequest(), timeout=5)
        except grpc.RpcError as e:
            return e.code()
    return grpc.StatusCode.OK


def healthz(daemon: Kilnd) -> tuple[int, str]:
    """GET /healthz on kilnd's metrics port: (status, body)."""
    try:
        with urllib.request.urlopen(
                f"http://127.0.0.1:{daemon.metrics_port}/healthz", timeout=10) as answer:
            return answer.status, answer.read().decode().strip()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode().strip()


def test_sigterm_drains_in_flight_work_and_refuses_new_work(tmp_path):
    daemon = Kilnd(tmp_path, tmp_path / "cache", extra_args=(
        "--local-agents", "none", "--device-wait-s", "300", "--drain-timeout-s", "120"),
        wait_for_cpu=False).start()
    agent = None
    try:
        torch.manual_seed(7)
        model = kiln.testing.MLP(d_in=8, d_hidden=16, d_out=4).eval()
        x = torch.randn(3, 8)
        with kiln.Client(daemon.address, timeout=300) as client, \
                concurrent.futures.ThreadPoolExecutor(1) as pool:
            compiled = client.compile(torch.export.export(model, (x,)))
            # No agent yet: this Execute waits in the daemon for a device.
            in_flight = pool.submit(compiled, x)
            wait_until(lambda: pinned_bytes(daemon.address) > 0,
                       "the Execute to be in flight (its blobs pinned)")
            assert refused_code(daemon.address) == grpc.StatusCode.INVALID_ARGUMENT
            assert healthz(daemon) == (200, "SERVING")

            daemon.proc.send_signal(signal.SIGTERM)
            wait_until(lambda: refused_code(daemon.address) == grpc.StatusCode.UNAVAILABLE,
                       "kilnd to refuse new compiles after SIGTERM")
            with grpc.insecure_channel(daemon.address) as channel:
                with pytest.raises(grpc.RpcError) as refused:
                    executor_pb2_grpc.ExecutorStub(channel).Execute(
                        executor_pb2.ExecuteRequest(), timeout=5)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
                assert "kilnd is shutting down" in refused.value.details()
            # The plain-HTTP probe (for TLS ports, which kubelet's gRPC
            # probes cannot reach) says so too.
            assert healthz(daemon) == (503, "NOT_SERVING (draining)")
            assert not in_flight.done(), "the in-flight Execute must still be waiting"
            assert daemon.proc.poll() is None, "kilnd must wait for in-flight work"

            # A device arrives; the drained request completes normally.
            agent = Agent(daemon, daemon.address, tmp_path, "late-agent")
            torch.testing.assert_close(in_flight.result(timeout=WAIT_S), model(x),
                                       rtol=1e-4, atol=1e-5)
        assert daemon.proc.wait(timeout=WAIT_S) == 0, daemon.log_tail()
        assert "drained; shutting down" in daemon.log_tail()
    finally:
        daemon.stop()
        if agent:
            agent.stop()


def test_drain_timeout_bounds_the_wait(tmp_path):
    daemon = Kilnd(tmp_path, tmp_path / "cache", extra_args=(
        "--local-agents", "none", "--device-wait-s", "300", "--drain-timeout-s", "1"),
        wait_for_cpu=False).start()
    try:
        torch.manual_seed(7)
        model = kiln.testing.MLP(d_in=8, d_hidden=8, d_out=4).eval()
        x = torch.randn(2, 8)
        with kiln.Client(daemon.address, timeout=300) as client, \
                concurrent.futures.ThreadPoolExecutor(1) as pool:
            compiled = client.compile(torch.export.export(model, (x,)))
            in_flight = pool.submit(compiled, x)
            wait_until(lambda: pinned_bytes(daemon.address) > 0, "the Execute to be in flight")
            started = time.monotonic()
            daemon.proc.send_signal(signal.SIGTERM)
            assert daemon.proc.wait(timeout=WAIT_S) == 0, daemon.log_tail()
            assert time.monotonic() - started < 30
            with pytest.raises(kiln.KilnError):
                in_flight.result(timeout=WAIT_S)
        assert "drain-timeout-s 1 passed" in daemon.log_tail()
    finally:
        daemon.stop()


def test_standalone_agent_registers_with_a_restarted_daemon(tmp_path):
    first = Kilnd(tmp_path, tmp_path / "cache", name="first",
                  extra_args=("--local-agents", "none"), wait_for_cpu=False).start()
    port = first.address.rsplit(":", 1)[1]
    agent = Agent(first, first.address, tmp_path, "roaming")
    second = None
    try:
        wait_until(lambda: has_device(first.address, "roaming"),
                   "the agent to register with the first daemon")
        first.assert_stops_cleanly()
        assert agent.proc.poll() is None, "the agent must outlive its daemon"

        second = Kilnd(tmp_path, tmp_path / "cache", name="second",
                       listen=f"127.0.0.1:{port}",
                       extra_args=("--local-agents", "none"), wait_for_cpu=False).start()
        assert second.address == first.address
        wait_until(lambda: has_device(second.address, "roaming"),
                   "the agent to register with the restarted daemon")
        torch.manual_seed(3)
        model = kiln.testing.MLP(d_in=4, d_hidden=8, d_out=2).eval()
        x = torch.randn(2, 4)
        with kiln.Client(second.address, timeout=300) as client:
            compiled = client.compile(torch.export.export(model, (x,)))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
        second.assert_stops_cleanly()
    finally:
        first.stop()
        if second:
            second.stop()
        agent.stop()
        if agent.proc.returncode not in (0, None):
            print(_tail(agent.log_path))
