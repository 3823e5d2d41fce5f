"""In-transit blobs in memory (issue 12, the data path): over gRPC, an Execute
input uploaded in transit and the output on its way back stay in kilnd's
memory as sealed memfds, never in the disk store, with eager's numbers, on
the local link and without it. With a small --transit-memory-bytes, blobs
leave memory for room without being lost: an output its client has read
and an input its Execute ran with are dropped (a client sending that input
again uploads it again), an unused one is written to the disk store first."""

from __future__ import annotations

import pathlib

import pytest
import torch

import kiln
from support import Kilnd, metric

N = 16 * 1024 * 1024  # 64 MiB of f32: a blob input and a blob output
MIB64 = N * 4


class Affine(torch.nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


def stored_tensor_files(cache_dir: pathlib.Path) -> list[pathlib.Path]:
    """Blob files in kilnd's disk store of the tensors' size."""
    return [p for p in (cache_dir / "cas").rglob("*")
            if p.is_file() and p.stat().st_size == MIB64]


@pytest.mark.parametrize("local_link", [True, False])
def test_grpc_inputs_and_outputs_stay_in_memory(tmp_path, local_link):
    cache = tmp_path / "cache"
    daemon = Kilnd(tmp_path, cache, extra_args=(
        "--local-link", "true" if local_link else "false")).start()
    try:
        model = Affine().eval()
        x = torch.randn(N, generator=torch.Generator().manual_seed(1))
        with kiln.Client(daemon.address, timeout=300, local=False) as client:
            compiled = client.compile(torch.export.export(model, (x,)))
            for step in range(3):
                x[0] = float(step)  # a new input blob each call
                torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
                assert compiled.last_transport == "grpc"
        # Without the local link the agent fetched the input and uploaded the
        # output through Blobs as well: those were in transit too.
        assert stored_tensor_files(cache) == []
        assert metric(daemon, "kiln_transit_blob_bytes") >= MIB64
    finally:
        daemon.assert_stops_cleanly()


def test_blobs_leave_memory_for_room_without_being_lost(tmp_path):
    # Room for two 64 MiB blobs. Each output, read by its client, is dropped
    # at once. Call 2's output takes the room of call 1's input, spent
    # (its Execute ran): dropped, not written to disk. Call 3 sends x1 by
    # digest again: kilnd names it as missing, and the client uploads it
    # once more. A blob nobody has used (uploaded, never run) is written
    # to the disk store before it leaves memory, and stays readable.
    cache = tmp_path / "cache"
    daemon = Kilnd(tmp_path, cache, extra_args=("--transit-memory-bytes", "136MiB")).start()
    try:
        model = Affine().eval()
        gen = torch.Generator().manual_seed(2)
        x1, x2 = torch.randn(N, generator=gen), torch.randn(N, generator=gen)
        with kiln.Client(daemon.address, timeout=300, local=False) as client:
            compiled = client.compile(torch.export.export(model, (x1,)))
            torch.testing.assert_close(compiled(x1), model(x1), rtol=0, atol=0)
            torch.testing.assert_close(compiled(x2), model(x2), rtol=0, atol=0)
            assert metric(daemon, "kiln_transit_blobs_dropped_total") == 3
            assert metric(daemon, "kiln_transit_blobs_spilled_total") == 0
            assert stored_tensor_files(cache) == []
            before = metric(daemon, "kiln_blob_bytes_in_total")
            torch.testing.assert_close(compiled(x1), model(x1), rtol=0, atol=0)
            assert metric(daemon, "kiln_blob_bytes_in_total") == before + MIB64

            unused = torch.randn(N, generator=gen)
            data = kiln.blobs.tensor_view(unused)
            digest = kiln.blobs.bytes_digest(data)
            client.blobs.write(digest, data, in_transit=True)
            torch.testing.assert_close(compiled(x2), model(x2), rtol=0, atol=0)
            assert metric(daemon, "kiln_transit_blobs_spilled_total") == 1
            assert len(stored_tensor_files(cache)) == 1
            assert client.blobs.read(digest) == bytes(data)
        assert metric(daemon, "kiln_transit_blob_bytes") <= 136 * 2**20
    finally:
        daemon.assert_stops_cleanly()
