"""A real bazel-remote (v2.6.2, built by scripts/install_deps.sh into
$KILN_TOOLS_DIR/bin) on loopback, for the shared-cache-tier tests."""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import time

import pytest


def bazel_remote_binary() -> str:
    tools = pathlib.Path(os.environ.get("KILN_TOOLS_DIR",
                                        pathlib.Path.home() / ".cache/kiln/tools")) / "bin"
    exe = os.environ.get("KILN_BAZEL_REMOTE") or shutil.which("bazel-remote", path=str(tools))
    if not exe:
        pytest.fail(f"bazel-remote is not in {tools}: run scripts/install_deps.sh", pytrace=False)
    return exe


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BazelRemote:
    """bazel-remote with uncompressed storage in `workdir`/cas-root, so tests
    can reach its blob files; stop() kills it (SIGKILL), start() again reuses
    its disk."""

    def __init__(self, workdir: pathlib.Path, extra_args: tuple[str, ...] = ()):
        """extra_args go to bazel-remote as they are (e.g. its --tls_* flags)."""
        self.extra_args = list(extra_args)
        self.dir = workdir / "bazel-remote"
        self.log_path = workdir / "bazel-remote.log"
        self.grpc_port, self.http_port = free_port(), free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        scheme = "grpcs" if any(a.startswith("--tls_cert_file") for a in self.extra_args) \
            else "grpc"
        host = "localhost" if scheme == "grpcs" else "127.0.0.1"
        return f"{scheme}://{host}:{self.grpc_port}"

    def start(self) -> "BazelRemote":
        cmd = [bazel_remote_binary(), "--dir", str(self.dir), "--max_size", "2",
               "--storage_mode", "uncompressed",
               "--grpc_address", f"127.0.0.1:{self.grpc_port}",
               "--http_address", f"127.0.0.1:{self.http_port}", *self.extra_args]
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"bazel-remote exited ({self.proc.returncode}):\n"
                            f"{self.log_path.read_text()[-2000:]}", pytrace=False)
            try:
                socket.create_connection(("127.0.0.1", self.grpc_port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        pytest.fail("bazel-remote did not listen within 30 s", pytrace=False)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.proc = None

    def cas_file(self, hex_hash: str) -> pathlib.Path | None:
        shard = self.dir / "cas.v2" / hex_hash[:2]
        if not shard.is_dir():
            return None
        return next((p for p in shard.iterdir() if p.name.startswith(hex_hash)), None)
