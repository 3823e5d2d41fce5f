"""Digests, digest caching and the chunked Blobs protocol."""

import hashlib

import torch

import kiln
from kiln import blobs
from kiln.tensors import tensor_bytes, tensor_from_bytes
from kiln.v1 import tensor_pb2


def test_digest_is_sha256_of_contiguous_le_bytes():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    d = blobs.tensor_digest(t.t())  # non-contiguous view
    expected = t.t().contiguous().numpy().astype("<f4").tobytes()
    assert d.hash == hashlib.sha256(expected).hexdigest()
    assert d.size_bytes == 48


def test_digest_is_cached_until_modified():
    blobs.clear_digest_cache()
    t = torch.randn(64, 64)
    before = blobs.hash_count
    d1 = blobs.tensor_digest(t)
    d2 = blobs.tensor_digest(t)
    assert d1 == d2
    assert blobs.hash_count == before + 1
    t.add_(1)  # bumps t._version
    d3 = blobs.tensor_digest(t)
    assert blobs.hash_count == before + 2
    assert d3.hash != d1.hash


def test_conjugated_and_negated_views_have_their_own_digests():
    # They share their base's memory, strides and version (the rest of the
    # cache key): a cached digest of the base would name other bytes.
    blobs.clear_digest_cache()
    z = torch.randn(8, 8, dtype=torch.complex64)
    for base, view in ((z, z.conj()), (z.imag, z.conj().imag)):
        blobs.tensor_digest(base)
        got = blobs.tensor_digest(view)
        values = torch.tensor(view.tolist(), dtype=view.dtype)
        assert got.hash == hashlib.sha256(tensor_bytes(values)).hexdigest()


def test_parameters_digest_once_across_calls():
    blobs.clear_digest_cache()
    p = torch.nn.Parameter(torch.randn(16))
    before = blobs.hash_count
    for _ in range(5):
        blobs.tensor_digest(p)
    assert blobs.hash_count == before + 1


def test_roundtrip_bytes_all_dtypes():
    for dtype in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                  torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool]:
        t = (torch.randn(3, 5) * 10).to(dtype)
        back = tensor_from_bytes(tensor_bytes(t), dtype, [3, 5])
        assert torch.equal(back, t), dtype
    empty = tensor_from_bytes(b"", torch.float32, [0, 4])
    assert empty.shape == (0, 4)
    scalar = torch.tensor(3.5)
    assert tensor_from_bytes(tensor_bytes(scalar), torch.float32, []).item() == 3.5


def test_write_chunks_and_uploads_once(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    t = torch.randn(700_000)  # 2.8 MB -> 3 chunks
    (d,), uploaded = client.blobs.ensure_tensors([t])
    assert uploaded == t.numel() * 4
    assert fake_daemon.writes == [(d.hash, [1 << 20, 1 << 20, 2_800_000 - (2 << 20)])]
    # Second time: known present, not even asked about.
    (d2,), uploaded2 = client.blobs.ensure_tensors([t, t][:1])
    assert uploaded2 == 0 and d2 == d and len(fake_daemon.writes) == 1
    # A fresh client asks (FindMissing) but does not upload again.
    other = kiln.Client(fake_daemon.address, timeout=30)
    _, uploaded3 = other.blobs.ensure_tensors([t])
    assert uploaded3 == 0 and len(fake_daemon.writes) == 1
    assert other.blobs.read(d) == tensor_bytes(t)


def test_empty_blob(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    d = blobs.bytes_digest(b"")
    assert client.blobs.write(d, b"") == 0
    assert client.blobs.read(d) == b""


def test_read_missing_blob_is_not_found(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    try:
        client.blobs.read(tensor_pb2.Digest(hash="0" * 64, size_bytes=1))
    except kiln.NotFoundError as e:
        assert "0" * 64 in str(e)
    else:
        raise AssertionError("expected NotFoundError")
