"""/metrics: kilnd's Prometheus endpoint passes `promtool check metrics` and a
real Prometheus server scrapes it and sees what the test did."""

from __future__ import annotations

import json
import shutil
import re
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
import torch

import kiln
from kiln.testing import MLP
from support import Kilnd, wait_until

PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def fetch(url: str, timeout: float = 10) -> tuple[int, dict, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample `name{labels}` in exposition text, if present
    (labels in any order, as the format allows)."""
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and m.group(1) == name and dict(_LABEL.findall(m.group(2) or "")) == labels:
            return float(m.group(3))
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def daemon(tmp_path):
    d = Kilnd(tmp_path, tmp_path / "cache").start()
    yield d
    d.assert_stops_cleanly()


@pytest.fixture
def compiled_twice_and_run(daemon):
    """One miss, one hit, one execution, on a fresh daemon."""
    torch.manual_seed(0)
    model = MLP(d_in=8, d_hidden=8, d_out=4).eval()
    x = torch.randn(2, 8)
    with kiln.Client(daemon.address, timeout=300) as client:
        first = client.compile(torch.export.export(model, (x,)))
        second = client.compile(torch.export.export(model, (x,)))
        assert (first.cache_hit, second.cache_hit) == (False, True)
        torch.testing.assert_close(second(x), model(x), rtol=1e-4, atol=1e-5)
    return daemon


def test_metrics_endpoint_counts_and_passes_promtool(compiled_twice_and_run, tmp_path):
    d = compiled_twice_and_run
    base = f"http://127.0.0.1:{d.metrics_port}"
    status, headers, text = fetch(base + "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert sample(text, "kiln_compiles_total", target="cpu", outcome="miss") == 1
    # What this kilnd is, and the process metrics every Prometheus client has.
    with kiln.Client(d.address) as client:
        info = client.daemon_info()
    build = [line for line in text.splitlines() if line.startswith("kiln_build_info{")]
    assert len(build) == 1 and build[0].endswith(" 1"), build
    assert f'version="{kiln.__version__}"' in build[0]
    assert f'compiler_build_id="{info.compiler_build_id}"' in build[0]
    assert sample(text, "process_resident_memory_bytes") > 1e6
    assert sample(text, "process_open_fds") >= 3
    assert sample(text, "process_start_time_seconds") > time.time() - 3600
    assert sample(text, "process_cpu_seconds_total") > 0
    assert sample(text, "kiln_compiles_total", target="cpu", outcome="hit") == 1
    assert sample(text, "kiln_compile_duration_seconds_count", target="cpu") == 2
    assert sample(text, "kiln_cache_misses_total") == 1
    assert sample(text, "kiln_cache_hits_total") == 1
    assert sample(text, "kiln_cache_bytes") > 0
    assert sample(text, "kiln_blob_bytes_in_total") > 0
    assert sample(text, "kiln_blob_bytes_out_total") > 0  # the agent fetched the artifact
    assert sample(text, "kiln_agents_connected") == 1
    assert sample(text, "kiln_queue_depth", target="cpu") == 0
    assert sample(text, "kiln_queue_wait_seconds_count", target="cpu") == 1
    assert sample(text, "kiln_executions_total", device="local-cpu/0", outcome="ok") == 1
    assert sample(text, "kiln_execute_duration_seconds_count", device="local-cpu/0") == 1
    assert 'kiln_execute_duration_seconds_bucket{device="local-cpu/0",le="+Inf"} 1' in text

    (tmp_path / "metrics.txt").write_text(text)
    check = subprocess.run([PROMTOOL, "check", "metrics"], input=text, text=True,
                           capture_output=True, timeout=60)
    assert check.returncode == 0, f"promtool:\n{check.stdout}{check.stderr}\n---\n{text}"

    # Anything but GET /metrics is 404; garbage gets an answer, not a hang.
    assert fetch(base + "/")[0] == 404
    with socket.create_connection(("127.0.0.1", d.metrics_port), timeout=10) as s:
        s.sendall(b"\x00\xffnot http at all\r\n\r\n")
        assert s.recv(64).startswith(b"HTTP/1.1 400")
    assert fetch(base + "/metrics")[0] == 200


def test_real_prometheus_scrapes_kilnd(compiled_twice_and_run, tmp_path):
    d = compiled_twice_and_run
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{
            "job_name": "kilnd",
            "static_configs": [{"targets": [f"127.0.0.1:{d.metrics_port}"]}],
        }],
    }))
    log = open(tmp_path / "prometheus.log", "wb")
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    api = f"http://127.0.0.1:{port}/api/v1/query?"

    def query(expr: str):
        try:
            status, _, body = fetch(api + urllib.parse.urlencode({"query": expr}), timeout=5)
        except OSError:
            return None  # not listening yet
        if proc.poll() is not None:
            pytest.fail(f"prometheus exited with {proc.returncode}:\n"
                        f"{(tmp_path / 'prometheus.log').read_text()[-3000:]}")
        if status != 200:
            return None
        return json.loads(body)["data"]["result"] or None

    try:
        result = wait_until(lambda: query('kiln_compiles_total{outcome="miss"}'),
                            "Prometheus to scrape kiln_compiles_total", timeout=60)
        assert len(result) == 1, result
        assert result[0]["metric"]["job"] == "kilnd"
        assert result[0]["metric"]["target"] == "cpu"
        assert float(result[0]["value"][1]) == 1
        up = wait_until(lambda: query('up{job="kilnd"}'), "up{job=kilnd}")
        assert float(up[0]["value"][1]) == 1
        total = wait_until(lambda: query("sum(kiln_compiles_total)"), "sum")
        assert float(total[0]["value"][1]) == 2
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
