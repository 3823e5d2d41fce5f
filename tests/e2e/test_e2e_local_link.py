"""The local link (issue 12, the data path): an agent kilnd starts gets its
tasks over a socketpair, with blob inputs passed as the store's files and
large outputs returned as memfds, so no tensor byte between kilnd and its
local agent crosses gRPC. With --local-link=false the same agent fetches and
uploads through Blobs. Both give eager's numbers; kilnd's blob byte counters
show which path the tensors took."""

from __future__ import annotations

import pytest
import torch

import kiln
from support import Kilnd, metric

N = 16 * 1024 * 1024  # 64 MiB of f32: a blob input and a blob output
MIB64 = N * 4


class Affine(torch.nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


def blob_bytes(daemon: Kilnd, direction: str) -> float:
    return metric(daemon, f"kiln_blob_bytes_{direction}_total")


def run_twice(daemon: Kilnd) -> tuple[float, float]:
    """Blob bytes in and out of kilnd during the second of two calls (the
    first loads the executable), after checking both against eager."""
    x = torch.randn(N, generator=torch.Generator().manual_seed(1))
    model = Affine().eval()
    # Over gRPC: a client on kilnd's machine would use its local socket,
    # which no blob crosses (test_e2e_local_execute.py).
    with kiln.Client(daemon.address, timeout=300, local=False) as client:
        compiled = client.compile(torch.export.export(model, (x,)))
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
        x[0] += 1.0  # a new input blob
        before_in, before_out = blob_bytes(daemon, "in"), blob_bytes(daemon, "out")
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
        return (blob_bytes(daemon, "in") - before_in, blob_bytes(daemon, "out") - before_out)


@pytest.mark.parametrize("local_link", [True, False])
def test_big_tensors_between_kilnd_and_its_agent(tmp_path, local_link):
    name = "linked" if local_link else "unlinked"
    daemon = Kilnd(tmp_path, tmp_path / f"{name}-cache", name=name,
                   extra_args=("--local-link", "true" if local_link else "false")).start()
    try:
        bytes_in, bytes_out = run_twice(daemon)
        log = daemon.log_path.read_text(errors="replace")
        if local_link:
            # Only the client's upload and download go through Blobs.
            assert (bytes_in, bytes_out) == (MIB64, MIB64)
            assert "tasks over its local link" in log
            assert "tasks come over the local link from kilnd" in log
        else:
            # The agent fetches the input and uploads the output as well.
            assert (bytes_in, bytes_out) == (2 * MIB64, 2 * MIB64)
            assert "tasks over its local link" not in log
    finally:
        daemon.assert_stops_cleanly()

