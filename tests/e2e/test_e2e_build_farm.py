"""The build farm (issue 16): kilnd replicas sharing a compile cache through a
real bazel-remote over REAPI v2. Every process is real: bazel-remote, two or
three kilnd replicas with their own cache dirs, their local CPU agents."""

from __future__ import annotations

import concurrent.futures
import time
import urllib.request

import pytest
import torch

import kiln
from bazel_remote import BazelRemote
from kiln.export import serialize_model
from kiln.testing import MLP, example_inputs
from support import Agent, Kilnd, wait_until
from test_e2e_metrics import sample

TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture
def remote(tmp_path):
    server = BazelRemote(tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def replica(tmp_path, remote):
    """Starts kilnd replica NAME on a cache dir of its own, sharing `remote`."""
    def start(name: str, agent_cpu: str = ""):
        daemon = Kilnd(tmp_path, tmp_path / f"cache-{name}", name=name,
                       extra_args=("--remote-cache", remote.url, "--remote-timeout-ms", "2000"),
                       env={"KILN_AGENT_CPU": agent_cpu} if agent_cpu else None)
        started.append(daemon)
        return daemon.start()

    started: list[Kilnd] = []
    yield start
    for daemon in started:
        daemon.assert_stops_cleanly()


def model_and_inputs(hidden: int, seed: int = 3):
    torch.manual_seed(seed)
    model = MLP(d_in=12, d_hidden=hidden, d_out=5).eval()
    return model, example_inputs(model, 4)


def compile_on(daemon, model, inputs):
    with kiln.Client(daemon.address, timeout=300) as client:
        compiled = client.compile(torch.export.export(model, inputs))
        out = compiled(*inputs)
    torch.testing.assert_close(out, model(*inputs), **TOL)
    return compiled


def metrics(daemon) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{daemon.metrics_port}/metrics",
                                timeout=10) as resp:
        return resp.read().decode()


def test_replica_b_hits_what_replica_a_compiled_and_runs_it(replica):
    a, b = replica("a"), replica("b")
    model, inputs = model_and_inputs(hidden=40)
    first = compile_on(a, model, inputs)
    assert not first.cache_hit
    with kiln.Client(b.address, timeout=300) as client:
        fetched = client.compile(torch.export.export(model, inputs))
    # B took the weights from the shared tier too: its client uploaded none.
    assert (sample(metrics(b), "kiln_blob_bytes_in_total") or 0) == 0  # no series: none
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    assert sample(metrics(b), "kiln_remote_cache_bytes_total", direction="read") >= weights
    assert fetched.remote_cache_hit
    second = compile_on(b, model, inputs)  # runs on B's own agent, checked against eager
    assert second.cache_hit
    assert second.digest == first.digest == fetched.digest
    assert fetched.timings["server_compile"] == 0
    text = metrics(b)
    assert sample(text, "kiln_remote_cache_up") == 1
    assert sample(text, "kiln_remote_cache_lookups_total", outcome="hit") == 1
    assert sample(text, "kiln_remote_cache_bytes_total", direction="read") > 0
    assert sample(text, "kiln_cache_misses_total") == 0
    assert not second.remote_cache_hit     # B has it on its own disk now
    third = compile_on(b, model, inputs)
    assert third.cache_hit and not third.remote_cache_hit


def test_remote_killed_mid_run_then_back(replica, remote):
    a = replica("a")
    model, inputs = model_and_inputs(hidden=44)
    compile_on(a, model, inputs)
    remote.stop()
    # Compiles (hits and misses) and executes go on from the local tier.
    compile_on(a, model, inputs)
    offline_model, offline_inputs = model_and_inputs(hidden=48)
    offline = compile_on(a, offline_model, offline_inputs)
    assert not offline.cache_hit
    assert sample(metrics(a), "kiln_remote_cache_up") == 0
    assert "serving from the local tier only" in a.log_path.read_text()
    remote.start()
    # Writes resume: the next use of what was compiled while the remote was
    # down publishes it (after the backoff), and a new replica hits it.
    for _ in range(40):
        compile_on(a, offline_model, offline_inputs)
        if sample(metrics(a), "kiln_remote_cache_up") == 1:
            break
        time.sleep(0.5)
    else:
        pytest.fail("replica a never found the remote up again")
    b = replica("b")
    again = compile_on(b, offline_model, offline_inputs)
    assert again.remote_cache_hit and again.digest == offline.digest


def test_tampered_remote_blob_is_never_served(replica, remote):
    a = replica("a")
    model, inputs = model_and_inputs(hidden=52)
    first = compile_on(a, model, inputs)
    record = first.digest
    path = remote.cas_file(record)
    assert path is not None, "the executable record is not in bazel-remote's CAS"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    b = replica("b")
    second = compile_on(b, model, inputs)  # compiled on B, and correct
    assert not second.cache_hit and not second.remote_cache_hit
    assert sample(metrics(b), "kiln_remote_cache_corrupt_total") >= 1
    assert "is unusable" in b.log_path.read_text()


def test_concurrent_compiles_on_two_replicas_leave_one_executable(replica):
    a, b = replica("a"), replica("b")
    model, inputs = model_and_inputs(hidden=56)
    # Serialized once: torch's decompositions are not thread-safe.
    serialized, out_spec, in_spec = serialize_model(torch.export.export(model, inputs))

    def compile_once(daemon):
        with kiln.Client(daemon.address, timeout=300) as client:
            return client.compile_serialized(serialized, out_spec=out_spec,
                                             in_spec=in_spec).digest

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        digests = list(pool.map(compile_once, [a, b] * 4))
    assert len(set(digests)) == 1, digests
    # And it was compiled once: the other replica waited on the lease.
    compiles = sum(sample(metrics(d), "kiln_cache_misses_total") or 0 for d in (a, b))
    assert compiles == 1, compiles
    # And the shared tier names that one: a third replica hits it.
    c = replica("c")
    third = compile_on(c, model, inputs)
    assert third.remote_cache_hit and third.digest == digests[0]


def test_agents_cpu_features_are_in_the_key_across_replicas(replica):
    """A shared tier across hosts of different CPUs never serves code built for
    another: replicas whose agents report other features key (and compile)
    apart; the same features give the same key, and a remote hit."""
    v3, v2, v3_again = replica("v3", "x86-64-v3"), replica("v2", "x86-64-v2"), \
        replica("v3b", "x86-64-v3")
    model, inputs = model_and_inputs(hidden=60)
    on_v3 = compile_on(v3, model, inputs)
    on_v2 = compile_on(v2, model, inputs)
    assert on_v2.compile_key != on_v3.compile_key
    assert not on_v2.cache_hit and on_v2.digest != on_v3.digest
    same = compile_on(v3_again, model, inputs)
    assert same.compile_key == on_v3.compile_key
    assert same.remote_cache_hit and same.digest == on_v3.digest


def test_one_agent_serves_two_replicas_and_outlives_one(tmp_path, remote):
    """kiln-agent-cpu --daemon A,B registers with both replicas and runs
    either's tasks; killing A leaves B served by the same agent process."""
    def daemon(name):
        return Kilnd(tmp_path, tmp_path / f"cache-{name}", name=name, wait_for_cpu=False,
                     extra_args=("--local-agents", "none", "--remote-cache", remote.url)).start()

    a, b = daemon("a"), daemon("b")
    agent = Agent(a, f"{a.address},{b.address}", tmp_path, "shared-cpu")
    try:
        for d in (a, b):
            with kiln.Client(d.address) as client:
                wait_until(lambda: any(dev.agent_id == "shared-cpu"
                                       for dev in client.devices(kind="cpu")),
                           f"the agent on replica {d.log_path.stem}")
        model, inputs = model_and_inputs(hidden=64)
        on_a = compile_on(a, model, inputs)
        assert on_a.last_device_id.startswith("shared-cpu/")
        on_b = compile_on(b, model, inputs)   # a remote hit, run by the same agent
        assert on_b.remote_cache_hit and on_b.last_device_id.startswith("shared-cpu/")

        a._kill()                              # replica A dies (SIGKILL)
        later, later_inputs = model_and_inputs(hidden=68)
        after = compile_on(b, later, later_inputs)
        assert after.last_device_id.startswith("shared-cpu/")
        assert agent.proc.poll() is None, agent.log()
        for d in (a, b):
            assert f"registered with {d.address} as shared-cpu" in agent.log(), agent.log()
    finally:
        agent.stop()
        b.assert_stops_cleanly()


def test_an_agent_follows_a_service_name_to_its_replicas(tmp_path):
    """--daemon-service NAME:PORT (what the chart gives agents when kilnd has
    several replicas behind a headless Service): the agent serves every
    address NAME resolves to; here localhost, one replica."""
    d = Kilnd(tmp_path, tmp_path / "cache", name="svc", wait_for_cpu=False,
              extra_args=("--local-agents", "none")).start()
    port = d.address.rsplit(":", 1)[1]
    agent = Agent(d, "unused", tmp_path, "svc-cpu",
                  extra_args=("--daemon-service", f"localhost:{port}"))
    try:
        # Agent passes --daemon; a service replaces it.
        assert agent.proc.wait(timeout=30) == 2
        assert "--daemon or --daemon-service, not both" in agent.log()
        agent = Agent(d, "", tmp_path, "svc-cpu2",
                      extra_args=("--daemon-service", f"localhost:{port}"))
        with kiln.Client(d.address) as client:
            wait_until(lambda: any(dev.agent_id == "svc-cpu2"
                                   for dev in client.devices(kind="cpu")),
                       "the agent found through the service name")
        model, inputs = model_and_inputs(hidden=72)
        assert compile_on(d, model, inputs).last_device_id.startswith("svc-cpu2/")
        assert f"--daemon-service localhost:{port}: 1 replica(s)" in agent.log()
    finally:
        agent.stop()
        d.assert_stops_cleanly()


def test_the_shared_tier_over_mutual_tls(tmp_path):
    """grpcs:// with --remote-tls-ca/-cert/-key against bazel-remote serving
    TLS and asking for client certificates: a replica with a certificate
    shares, one without is refused by the remote and serves locally."""
    from tls_material import Pki
    pki = Pki(tmp_path / "pki")
    server, client = pki.server(), pki.issue("kilnd-client", "/CN=kilnd")
    remote = BazelRemote(tmp_path, extra_args=(
        f"--tls_cert_file={server.cert}", f"--tls_key_file={server.key}",
        f"--tls_ca_file={pki.ca.cert}")).start()
    started = []
    try:
        def replica(name, *tls):
            d = Kilnd(tmp_path, tmp_path / f"cache-{name}", name=name,
                      extra_args=("--remote-cache", remote.url, "--remote-tls-ca",
                                  str(pki.ca.cert), *tls)).start()
            started.append(d)
            return d

        cert = ("--remote-tls-cert", str(client.cert), "--remote-tls-key", str(client.key))
        a = replica("a", *cert)
        model, inputs = model_and_inputs(hidden=76)
        first = compile_on(a, model, inputs)
        assert sample(metrics(a), "kiln_remote_cache_up") == 1
        assert sample(metrics(a), "kiln_remote_cache_bytes_total", direction="written") > 0

        anonymous = replica("anonymous")            # no client certificate
        alone = compile_on(anonymous, model, inputs)
        assert not alone.remote_cache_hit and not alone.cache_hit
        assert sample(metrics(anonymous), "kiln_remote_cache_up") == 0

        b = replica("b", *cert)
        hit = compile_on(b, model, inputs)
        assert hit.remote_cache_hit and hit.digest == first.digest
    finally:
        for d in started:
            d.assert_stops_cleanly()
        remote.stop()
