"""The content-addressed store through the Blobs service."""

import hashlib
import os

import torch

import kiln
import kiln.testing
from kiln.blobs import bytes_digest


def test_64_mib_blob_round_trips(client):
    data = os.urandom(64 * 1024 * 1024)
    digest = bytes_digest(data)
    assert client.blobs.find_missing([digest]) == {digest.hash}
    assert client.blobs.write(digest, data) == len(data)
    assert client.blobs.find_missing([digest]) == set()
    back = client.blobs.read(digest)
    assert hashlib.sha256(back).hexdigest() == digest.hash
    assert len(back) == len(data) and back == data


def test_corrupt_upload_rejected(client):
    data = os.urandom(3 * 1024 * 1024 + 5)
    digest = bytes_digest(data)
    bad = bytearray(data)
    bad[-1] ^= 0xFF
    try:
        client.blobs.write(digest, bytes(bad))
    except kiln.InvalidArgumentError:
        pass
    else:
        raise AssertionError("a blob whose bytes do not match its digest was accepted")
    assert client.blobs.find_missing([digest]) == {digest.hash}


def test_large_input_travels_as_blob(client):
    torch.manual_seed(3)
    model = kiln.testing.MLP(d_in=64, d_hidden=32, d_out=8).eval()
    x = torch.randn(8192, 64)  # 2 MiB: above the 1 MiB inline limit
    compiled = client.compile(torch.export.export(model, (x,)))
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
