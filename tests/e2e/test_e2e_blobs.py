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


def test_a_wrong_size_is_invalid_argument_and_deletes_nothing(client):
    """Knowing a digest must not let a client delete someone's executable:
    the same hash with a wrong size_bytes is refused, and the blob stays."""
    torch.manual_seed(4)
    model = kiln.testing.MLP(d_in=16, d_hidden=8, d_out=4).eval()
    x = torch.randn(2, 16)
    compiled = client.compile(torch.export.export(model, (x,)))
    lie = type(compiled.executable)()
    lie.CopyFrom(compiled.executable)
    for wrong in (0, 1, compiled.executable.size_bytes + 7):
        lie.size_bytes = wrong
        try:
            client.blobs.read(lie)
        except kiln.InvalidArgumentError as e:
            assert "size_bytes" in str(e)
        else:
            raise AssertionError(f"size_bytes {wrong} was accepted")
    assert client.blobs.find_missing([compiled.executable]) == set()
    assert len(client.blobs.read(compiled.executable)) == compiled.executable.size_bytes
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
