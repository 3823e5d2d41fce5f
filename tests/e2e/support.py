"""Starting and stopping a real kilnd for the end-to-end tests.

The binaries come from ``$KILN_BUILD_DIR/bin`` (default ``<repo>/build/bin``);
kilnd spawns its local CPU agent (``kiln-agent-cpu``) from the same folder.
Missing binaries are a test failure with a clear message, never a skip.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import time
import urllib.request

import pytest

import kiln
import kiln.testing
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]
START_TIMEOUT_S = float(os.environ.get("KILN_E2E_START_TIMEOUT", "90"))
STOP_TIMEOUT_S = float(os.environ.get("KILN_E2E_STOP_TIMEOUT", "30"))


def build_dir() -> pathlib.Path:
    d = pathlib.Path(os.environ.get("KILN_BUILD_DIR", "build"))
    return d if d.is_absolute() else REPO / d


def require_binaries() -> pathlib.Path:
    bin_dir = build_dir() / "bin"
    missing = [b for b in ("kilnd", "kiln-agent-cpu") if not os.access(bin_dir / b, os.X_OK)]
    if missing:
        pytest.fail(f"end-to-end tests need {', '.join(missing)} in {bin_dir}: build with "
                    f"scripts/build.sh (or point KILN_BUILD_DIR at a build folder)",
                    pytrace=False)
    return bin_dir


def _tail(path: pathlib.Path, n: int = 80) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as e:
        return f"<no log: {e}>"
    return "\n".join(lines[-n:])


class Kilnd:
    """One kilnd process listening on a loopback port chosen by the kernel."""

    def __init__(self, workdir: pathlib.Path, cache_dir: pathlib.Path, name: str = "kilnd",
                 extra_args: tuple[str, ...] = (), listen: str = "127.0.0.1:0",
                 wait_for_cpu: bool = True, env: dict[str, str] | None = None,
                 client_options: dict | None = None):
        """extra_args go after the standard flags; with wait_for_cpu False
        (e.g. --local-agents none) start() returns once ListDevices answers.
        client_options (tls=, token=) are what the readiness check's client
        needs when kilnd requires TLS or credentials."""
        self.client_options = dict(client_options or {})
        self.bin_dir = require_binaries()
        self.extra_args = list(extra_args)
        self.listen = listen
        self.wait_for_cpu = wait_for_cpu
        # Extra environment for kilnd (and so its local agents: KILN_AGENT_*).
        self.env = {**os.environ, **(env or {})}
        workdir.mkdir(parents=True, exist_ok=True)
        self.cache_dir = cache_dir
        self.port_file = workdir / f"{name}.port"
        self.metrics_port_file = workdir / f"{name}.metrics-port"
        self.metrics_port: int | None = None
        self.log_path = workdir / f"{name}.log"
        self.proc: subprocess.Popen | None = None
        self.address = ""

    def start(self) -> "Kilnd":
        self.port_file.unlink(missing_ok=True)
        self.metrics_port_file.unlink(missing_ok=True)
        # /metrics on a kernel-chosen port as well, never the fixed default.
        cmd = [str(self.bin_dir / "kilnd"), "--listen", self.listen,
               "--port-file", str(self.port_file), "--cache-dir", str(self.cache_dir),
               "--metrics-listen", "127.0.0.1:0",
               "--metrics-port-file", str(self.metrics_port_file),
               *self.extra_args]
        self._log = open(self.log_path, "ab")
        self._log.write(f"$ {' '.join(cmd)}\n".encode())
        self._log.flush()
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True, env=self.env)
        try:
            self._wait_ready()
        except BaseException:
            self._kill()
            raise
        return self

    def _fail(self, why: str) -> None:
        pytest.fail(f"kilnd {why}\n--- {self.log_path} (last lines) ---\n{_tail(self.log_path)}",
                    pytrace=False)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        port = None
        last_error = "no port file yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"exited with code {self.proc.returncode} during startup")
            if port is None:
                try:
                    text = self.port_file.read_text().strip()
                    port = int(text.rsplit(":", 1)[-1]) if text else None
                except (OSError, ValueError):
                    port = None
                if port is not None:
                    self.address = f"127.0.0.1:{port}"
                    # kilnd writes it before the port file.
                    self.metrics_port = int(self.metrics_port_file.read_text().strip())
            if port is not None:
                try:
                    with kiln.Client(self.address, timeout=2, **self.client_options) as client:
                        devices = client.devices()
                    if not self.wait_for_cpu or any(d.kind == "cpu" for d in devices):
                        return
                    last_error = f"ListDevices answered without a cpu device: {devices}"
                except kiln.KilnError as e:
                    last_error = str(e)
            time.sleep(0.05)
        self._fail(f"not ready after {START_TIMEOUT_S:.0f}s (port file {self.port_file}, "
                   f"last: {last_error})")

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._log.close()

    def stop(self) -> int:
        """SIGTERM, wait, and return the exit code (the caller asserts 0)."""
        if self.proc is None or self.proc.returncode is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._kill()
            pytest.fail(f"kilnd did not exit within {STOP_TIMEOUT_S:.0f}s of SIGTERM\n"
                        f"--- {self.log_path} ---\n{_tail(self.log_path)}", pytrace=False)
        self._log.close()
        # Its agents were its children; make sure none outlives the test.
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            pass
        else:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    os.killpg(self.proc.pid, 0)
                except ProcessLookupError:
                    return code
                time.sleep(0.05)
            os.killpg(self.proc.pid, signal.SIGKILL)
            pytest.fail("kilnd exited but processes of its group (its agents) were still "
                        "running 5s later", pytrace=False)
        return code

    def assert_stops_cleanly(self) -> None:
        code = self.stop()
        assert code == 0, (f"kilnd exited with code {code} on SIGTERM\n"
                           f"--- {self.log_path} ---\n{_tail(self.log_path)}")

    def log_tail(self) -> str:
        return _tail(self.log_path)


def metric(daemon: "Kilnd", name: str) -> float:
    """A metric's value on daemon's /metrics, summed over its labels; 0
    before it is first counted (it is not exported until then)."""
    url = f"http://127.0.0.1:{daemon.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as resp:
        return sum(float(line.rsplit(" ", 1)[1]) for line in resp.read().decode().splitlines()
                   if line.startswith((f"{name} ", f"{name}{{")))


def assert_serving(client: kiln.Client) -> None:
    """The daemon still answers: a cpu device is listed and a model compiles and runs."""
    assert any(d.kind == "cpu" for d in client.devices()), client.devices()
    torch.manual_seed(123)
    model = kiln.testing.MLP(d_in=8, d_hidden=8, d_out=4).eval()
    x = torch.randn(2, 8)
    compiled = client.compile(torch.export.export(model, (x,)))
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


WAIT_S = 60.0


def assert_within_range(out, ref, tol: float) -> float:
    """max |out - ref| <= tol * max |ref| (a device computing in a narrower
    type than f32); returns the error."""
    error = (out - ref).abs().max().item()
    scale = ref.abs().max().item()
    assert error <= tol * scale, f"max |kiln - eager| {error:.3g} > {tol} * {scale:.3g}"
    return error


def kilnd_with_local_agents(work: pathlib.Path, name: str, agents: str, kind: str,
                            env: dict[str, str] | None = None) -> "Kilnd":
    """kilnd with local agents `agents` ("cpu,acap"; their KILN_AGENT_*
    settings in `env`), started, once a device of `kind` has registered;
    the test fails with kilnd's log tail if none does within WAIT_S."""
    daemon = Kilnd(work, work / "cache", name=name, extra_args=("--local-agents", agents),
                   env=env).start()
    deadline = time.monotonic() + WAIT_S
    with kiln.Client(daemon.address) as c:
        while not c.devices(kind=kind):
            if time.monotonic() > deadline:
                daemon.stop()
                pytest.fail(f"no {kind} device registered:\n{daemon.log_tail()}",
                            pytrace=False)
            time.sleep(0.1)
    return daemon


def wait_until(condition, what: str, timeout: float = WAIT_S):
    """Polls `condition` (no fixed sleep stands in for synchronisation)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}", pytrace=False)


class Agent:
    """A standalone kiln-agent-<kind> (cpu by default) dialing `address`
    (not kilnd's child)."""

    def __init__(self, kilnd: Kilnd, address: str, workdir, agent_id: str | None,
                 extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None,
                 name: str | None = None, kind: str = "cpu"):
        """agent_id None: the agent picks its own (from --tls-cert, say);
        `name` then names its log and cache."""
        name = name or agent_id
        self.log_path = workdir / f"{name}.log"
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [str(kilnd.bin_dir / f"kiln-agent-{kind}"), "--daemon", address,
             *(["--agent-id", agent_id] if agent_id else []),
             "--cache-dir", str(workdir / name), *extra_args],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **(env or {})})

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()
