"""The trust boundary: no client can make an agent run its own code.

The attack: upload a shared object whose constructor writes a file, upload a
hand-made ExecutableRecord naming it (a copy of a real record with the
artifact swapped), then Execute that record's digest. kilnd must refuse it
(only executables it compiled are executables), and nothing of the object
may run anywhere: the constructor's file must never appear.
"""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
import torch

import kiln
import kiln.testing
from kiln.blobs import bytes_digest
from kiln.v1 import executable_pb2
from support import Agent, wait_until

CONSTRUCTOR = r"""
#include <stdio.h>
__attribute__((constructor)) static void pwned(void) {
  FILE *f = fopen("%(marker)s", "w");
  if (f) { fputs("foreign code ran\n", f); fclose(f); }
}
void kiln_invoke(void **buffers) { (void)buffers; }
"""


@pytest.fixture
def foreign_object(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert cc, "scripts/install_deps.sh installs a C compiler"
    marker = tmp_path / "pwned.txt"
    source = tmp_path / "pwned.c"
    source.write_text(CONSTRUCTOR % {"marker": marker})
    library = tmp_path / "pwned.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library.read_bytes(), marker


def test_an_uploaded_object_with_a_forged_record_never_runs(client, foreign_object):
    so_bytes, marker = foreign_object
    torch.manual_seed(0)
    model = kiln.testing.MLP(d_in=8, d_hidden=4, d_out=2).eval()
    x = torch.randn(1, 8)
    compiled = client.compile(torch.export.export(model, (x,)))

    # A real record, with its artifact swapped for the uploaded object.
    record = executable_pb2.ExecutableRecord()
    record.ParseFromString(client.blobs.read(compiled.executable))
    artifact = bytes_digest(so_bytes)
    client.blobs.write(artifact, so_bytes)
    record.artifact.CopyFrom(artifact)
    forged_bytes = record.SerializeToString()
    forged = bytes_digest(forged_bytes)
    client.blobs.write(forged, forged_bytes)

    # By digest (a CompiledModel would compile itself again instead).
    with pytest.raises(kiln.NotFoundError, match="unknown"):
        client.execute(forged, [x], [p.digest for p in compiled.graph.parameters])
    time.sleep(0.5)  # a task, had one been sent, would have loaded by now
    assert not marker.exists(), "the uploaded object's constructor ran"

    # The real executable still runs.
    real = client.compile(torch.export.export(model, (x,)))
    torch.testing.assert_close(real(x), model(x), rtol=1e-4, atol=1e-5)


def test_a_second_process_cannot_take_over_a_live_agents_id(start_kilnd, tmp_path):
    """Another kiln-agent-cpu registering as kilnd's own local agent is
    refused: that id registers only with the local link kilnd made for the
    process it started (PERMISSION_DENIED; any other live id is
    ALREADY_EXISTS, SchedulerTest). The impostor never gets the devices, nor
    the executables, weights and inputs sent to them."""
    daemon = start_kilnd(name="hijack")
    with kiln.Client(daemon.address, timeout=120) as client:
        (device,) = client.devices("cpu")
        assert device.id == "local-cpu/0"
        impostor = Agent(daemon, daemon.address, tmp_path, "local-cpu")
        try:
            wait_until(lambda: "PERMISSION_DENIED" in impostor.log_path.read_text(),
                       "the impostor's registration to be refused")
            assert "belongs to an agent kilnd started itself" in impostor.log_path.read_text()
            assert [d.id for d in client.devices("cpu")] == ["local-cpu/0"]
            # Work still reaches the genuine agent, and runs.
            torch.manual_seed(1)
            model = kiln.testing.MLP(d_in=8, d_hidden=4, d_out=2).eval()
            x = torch.randn(3, 8)
            compiled = client.compile(torch.export.export(model, (x,)))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
            assert "task " not in impostor.log_path.read_text()
        finally:
            impostor.stop()


def test_local_agents_verify_tasks_with_the_key_file_kilnd_wrote(start_kilnd):
    daemon = start_kilnd(name="keyed")
    public = daemon.cache_dir / "keys" / "task-public-key.pem"
    private = daemon.cache_dir / "keys" / "task-signing-key.pem"
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert private.stat().st_mode & 0o077 == 0, "the private key is readable by others"
    log = daemon.log_path.read_text()
    assert "sent at registration" not in log, "a local agent fell back to the key kilnd sent"
