"""Blobs: SHA-256 digests of tensors and the chunked Blobs service protocol.

Digests are cached per tensor identity (data pointer, version counter, shape,
dtype, strides, device, conjugate and negative bits) so calling a compiled
model again does not rehash its weights. The version counter moves on every
in-place op through autograd-visible tensors; writes through ``tensor.data``
bypass it, so after ``p.data.copy_(...)`` call :func:`clear_digest_cache`.

An Execute input that only passes through is not hashed here: kilnd names
it (:meth:`BlobClient.send_in_transit`), and each BlobClient keeps those
names for itself (one kilnd's answer never names a tensor to another).
"""

from __future__ import annotations

import collections
import hashlib
import re
import threading
import weakref
from typing import Callable, Iterable, Iterator, Sequence

import torch

from kiln._rpc import Rpc
from kiln.errors import FailedPreconditionError, KilnError, ResourceExhaustedError
from kiln.tensors import tensor_view
from kiln.v1 import blobs_pb2, tensor_pb2

__all__ = [
    "CHUNK_BYTES",
    "bytes_digest",
    "cached_digest",
    "tensor_digest",
    "clear_digest_cache",
    "BlobClient",
]

#: Bytes per Write/Read message.
CHUNK_BYTES = 1024 * 1024
_CACHE_ENTRIES = 4096
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")

_count_lock = threading.Lock()
#: How many times a tensor was actually hashed (tests read this).
hash_count = 0


def bytes_digest(data: bytes | memoryview) -> tensor_pb2.Digest:
    """The Digest (lower-case hex SHA-256, size) of some bytes."""
    return tensor_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def _cache_key(t: torch.Tensor) -> tuple:
    # A conjugated or negated view shares its base's memory, strides and
    # version, yet its wire bytes differ: the bits are part of the key.
    return (t.data_ptr(), t._version, tuple(t.shape), t.dtype, tuple(t.stride()),
            t.device, t.is_conj(), t.is_neg())


class _DigestCache:
    """Digests by tensor identity (:func:`_cache_key`), while the tensor
    lives, least recently used dropped past ``_CACHE_ENTRIES``."""

    def __init__(self) -> None:
        self._entries: "collections.OrderedDict[tuple, tuple[weakref.ref, str, int]]" = \
            collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tensor_pb2.Digest | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0]() is None:
                return None
            self._entries.move_to_end(key)
            return tensor_pb2.Digest(hash=hit[1], size_bytes=hit[2])

    def put(self, key: tuple, t: torch.Tensor, digest: tensor_pb2.Digest) -> None:
        with self._lock:
            self._entries[key] = (weakref.ref(t), digest.hash, digest.size_bytes)
            while len(self._entries) > _CACHE_ENTRIES:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: Digests this process computed.
_digests = _DigestCache()


def cached_digest(t: torch.Tensor) -> tensor_pb2.Digest | None:
    """The tensor's Digest when it is cached (the tensor unmodified since),
    else None: nothing is hashed."""
    return _digests.get(_cache_key(t))


def tensor_digest(t: torch.Tensor) -> tensor_pb2.Digest:
    """The Digest of a tensor's wire bytes (dense, row-major, little-endian).

    Cached while the tensor is alive and unmodified.
    """
    global hash_count
    key = _cache_key(t)
    digest = _digests.get(key)
    if digest is not None:
        return digest
    digest = bytes_digest(tensor_view(t))
    with _count_lock:
        hash_count += 1
    # Not kept when the tensor changed while it was hashed.
    if _cache_key(t) == key:
        _digests.put(key, t, digest)
    return digest


def clear_digest_cache() -> None:
    """Forgets every cached tensor digest."""
    _digests.clear()


def _chunks(digest: tensor_pb2.Digest, data: bytes | memoryview, in_transit: bool = False
            ) -> Iterator[blobs_pb2.WriteRequest]:
    view = memoryview(data)
    n = len(view)
    if n == 0:
        yield blobs_pb2.WriteRequest(digest=digest, offset=0, finish_write=True,
                                     in_transit=in_transit)
        return
    for offset in range(0, n, CHUNK_BYTES):
        end = min(offset + CHUNK_BYTES, n)
        req = blobs_pb2.WriteRequest(offset=offset, data=bytes(view[offset:end]),
                                     finish_write=end == n)
        if offset == 0:
            req.digest.CopyFrom(digest)
            req.in_transit = in_transit
        yield req


def _reporting(chunks: Iterator[blobs_pb2.WriteRequest], progress: Callable[[int], None]
               ) -> Iterator[blobs_pb2.WriteRequest]:
    for chunk in chunks:
        yield chunk
        progress(len(chunk.data))


class BlobClient:
    """FindMissing / Write / Read against one daemon.

    Remembers which digests the daemon is known to hold, so weights are
    uploaded (and asked about) once per client.
    """

    def __init__(self, rpc: Rpc):
        self._rpc = rpc
        self._present: set[str] = set()
        self._lock = threading.Lock()
        #: Names kilnd gave tensors this client sent (send_in_transit).
        self._names = _DigestCache()

    def forget(self) -> None:
        """Forgets what the daemon holds (e.g. after it lost its store)."""
        with self._lock:
            self._present.clear()

    def find_missing(self, digests: Iterable[tensor_pb2.Digest]) -> set[str]:
        """Hashes, of those given, that the store lacks."""
        digests = list(digests)
        if not digests:
            return set()
        resp = self._rpc.call("kiln.v1.Blobs/FindMissing", self._rpc.blobs.FindMissing,
                              blobs_pb2.FindMissingRequest(digests=digests))
        return {d.hash for d in resp.missing_digests}

    def write(self, digest: tensor_pb2.Digest, data: bytes | memoryview,
              progress: Callable[[int], None] | None = None,
              in_transit: bool = False) -> int:
        """Uploads one blob in 1 MiB chunks; returns the committed size.

        ``progress(n)`` is called with the size of each chunk as it is sent.
        ``in_transit`` marks an Execute input that only passes through: the
        daemon verifies it but does not fsync it.
        """
        chunks = _chunks(digest, data, in_transit)
        if progress is not None:
            chunks = _reporting(chunks, progress)
        resp = self._rpc.call("kiln.v1.Blobs/Write", self._rpc.blobs.Write,
                              chunks, context={"digest": digest.hash})
        with self._lock:
            self._present.add(digest.hash)
        return resp.committed_size

    def read(self, digest: tensor_pb2.Digest) -> bytes:
        """Downloads one blob."""
        parts = [r.data for r in self._rpc.stream(
            "kiln.v1.Blobs/Read", self._rpc.blobs.Read,
            blobs_pb2.ReadRequest(digest=digest), context={"digest": digest.hash})]
        return b"".join(parts)

    def read_into(self, digest: tensor_pb2.Digest, into: memoryview,
                  handed_out: bool = False) -> None:
        """Downloads one blob straight into ``into`` (exactly its size), chunk
        by chunk: no joined copy. ValueError when the sizes differ.

        ``handed_out`` marks the read of an Execute output this client will
        not read again: once every client it was handed to has read it,
        kilnd lets go of it."""
        if len(into) != digest.size_bytes:
            raise ValueError(f"blob {digest.hash} has {digest.size_bytes} bytes; "
                             f"the destination holds {len(into)}")
        at = 0
        for r in self._rpc.stream("kiln.v1.Blobs/Read", self._rpc.blobs.Read,
                                  blobs_pb2.ReadRequest(digest=digest,
                                                        handed_out=handed_out),
                                  context={"digest": digest.hash}):
            end = at + len(r.data)
            if end > len(into):
                raise ValueError(f"blob {digest.hash} sent more than its "
                                 f"{digest.size_bytes} bytes")
            into[at:end] = r.data
            at = end
        if at != len(into):
            raise ValueError(f"blob {digest.hash} ended after {at} of its "
                             f"{digest.size_bytes} bytes")

    def send_in_transit(self, t: torch.Tensor) -> tensor_pb2.Digest:
        """Uploads an Execute input that only passes through; returns its
        digest.

        kilnd hashes the bytes as they arrive and names the blob
        (``WriteResponse.digest``): the client does not hash a tensor it
        sends once (a 256 MiB SHA-256 costs ~0.15 s). This client keeps the
        name with the tensor, so a tensor sent again unmodified is not
        uploaded while kilnd holds it (asked with FindMissing once this
        client no longer knows). When kilnd will not name it (no room in
        its memory, or the caller's quota, which a blob kilnd holds does not
        touch), or it is empty, it goes by its digest (:meth:`ensure_tensors`)."""
        key = _cache_key(t)
        known = self._names.get(key) or _digests.get(key)
        if known is not None:
            with self._lock:
                if known.hash in self._present:
                    return known
            if not self.find_missing([known]):
                with self._lock:
                    self._present.add(known.hash)
                return known
        def by_digest() -> tensor_pb2.Digest:
            return self.ensure_tensors([t], in_transit=True)[0][0]

        data = tensor_view(t)
        if len(data) == 0:
            return by_digest()
        unnamed = tensor_pb2.Digest(size_bytes=len(data))
        try:
            resp = self._rpc.call("kiln.v1.Blobs/Write", self._rpc.blobs.Write,
                                  _chunks(unnamed, data, in_transit=True),
                                  context={"bytes": len(data)})
        except FailedPreconditionError as e:
            if "by its digest" not in e.details:
                raise
            return by_digest()
        except ResourceExhaustedError:
            return by_digest()
        digest = tensor_pb2.Digest(hash=resp.digest.hash, size_bytes=resp.digest.size_bytes)
        if digest.size_bytes != len(data) or not _SHA256_HEX.fullmatch(digest.hash):
            raise KilnError(f"kilnd named an upload of {len(data)} bytes "
                            f"{digest.hash!r} ({digest.size_bytes} bytes): not a "
                            "SHA-256 digest of that size")
        # Not kept when the tensor changed while it was sent.
        if _cache_key(t) == key:
            self._names.put(key, t, digest)
        with self._lock:
            self._present.add(digest.hash)
        return digest

    def ensure_tensors(self, tensors: Sequence[torch.Tensor],
                       progress: Callable[[int, int], None] | None = None,
                       in_transit: bool = False
                       ) -> tuple[list[tensor_pb2.Digest], int]:
        """Makes sure the store holds each tensor's bytes.

        Returns the digests (in order) and how many bytes were uploaded. Each
        distinct blob is asked about once and uploaded at most once.
        ``progress(sent, total)`` is called once the missing bytes are known
        (sent=0) and after every chunk (the CLI's upload bar).
        """
        digests = [tensor_digest(t) for t in tensors]
        with self._lock:
            unknown = {}
            for t, d in zip(tensors, digests):
                if d.hash not in self._present and d.hash not in unknown:
                    unknown[d.hash] = (t, d)
        if not unknown:
            return digests, 0
        missing = self.find_missing(d for _, d in unknown.values())
        total = sum(d.size_bytes for h, (_, d) in unknown.items() if h in missing)
        uploaded = 0
        on_chunk = None
        if progress is not None:
            progress(0, total)

            def on_chunk(n: int) -> None:
                nonlocal uploaded
                uploaded += n
                progress(uploaded, total)
        sent = 0
        for h, (t, d) in unknown.items():
            if h in missing:
                data = tensor_view(t)
                self.write(d, data, progress=on_chunk, in_transit=in_transit)
                sent += len(data)
        uploaded = sent
        with self._lock:
            self._present.update(unknown)
        return digests, uploaded
