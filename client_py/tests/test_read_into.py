"""BlobClient.read_into: a blob streamed straight into a tensor's memory,
with the stream's length checked against the digest both ways."""

from __future__ import annotations

import types

import pytest
import torch

from kiln.blobs import BlobClient, bytes_digest
from kiln.tensors import empty_tensor_for


class ChunkedRpc:
    """Serves Blobs.Read as the given chunks, whatever is asked."""

    def __init__(self, chunks: list[bytes]):
        self.chunks = chunks
        self.blobs = types.SimpleNamespace(Read=None)

    def stream(self, name, method, request, context=None):
        for chunk in self.chunks:
            yield types.SimpleNamespace(data=chunk)


def test_chunks_land_in_the_tensor():
    source = torch.arange(1000, dtype=torch.float32)
    data = source.numpy().tobytes()
    digest = bytes_digest(data)
    out, view = empty_tensor_for(torch.float32, [1000])
    BlobClient(ChunkedRpc([data[:1000], data[1000:2500], data[2500:]])).read_into(digest, view)
    assert torch.equal(out, source)


def test_a_short_stream_is_an_error():
    data = bytes(4000)
    _, view = empty_tensor_for(torch.float32, [1000])
    with pytest.raises(ValueError, match="ended after 3000 of its 4000 bytes"):
        BlobClient(ChunkedRpc([data[:3000]])).read_into(bytes_digest(data), view)


def test_a_long_stream_is_an_error():
    data = bytes(4000)
    _, view = empty_tensor_for(torch.float32, [1000])
    with pytest.raises(ValueError, match="sent more than its 4000 bytes"):
        BlobClient(ChunkedRpc([data, b"x"])).read_into(bytes_digest(data), view)


def test_a_destination_of_another_size_is_refused_before_reading():
    data = bytes(4000)
    _, view = empty_tensor_for(torch.float32, [999])
    with pytest.raises(ValueError, match="the destination holds 3996"):
        BlobClient(ChunkedRpc([data])).read_into(bytes_digest(data), view)
