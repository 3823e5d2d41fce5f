"""kiln.v1.Cache against a real kilnd: stats, garbage collection that evicts
only unpinned least-recently-used blobs, and a salt change turning a cache hit
into a miss. Raw gRPC stubs (what `kiln cache` and grpcurl call)."""

from __future__ import annotations

import concurrent.futures
import hashlib

import grpc
import pytest
import torch

import kiln
import kiln.testing
from kiln.v1 import blobs_pb2, blobs_pb2_grpc, cache_pb2, cache_pb2_grpc, executable_pb2, tensor_pb2
from support import WAIT_S, Agent, Kilnd, wait_until


def digest_of(data: bytes) -> tensor_pb2.Digest:
    return tensor_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


class Stubs:
    def __init__(self, address: str):
        self.channel = grpc.insecure_channel(address)
        self.cache = cache_pb2_grpc.CacheStub(self.channel)
        self.blobs = blobs_pb2_grpc.BlobsStub(self.channel)

    def stats(self) -> cache_pb2.GetCacheStatsResponse:
        return self.cache.GetCacheStats(cache_pb2.GetCacheStatsRequest(), timeout=10)

    def gc(self, target: int) -> cache_pb2.CollectGarbageResponse:
        return self.cache.CollectGarbage(
            cache_pb2.CollectGarbageRequest(target_bytes=target), timeout=10)

    def write(self, data: bytes) -> tensor_pb2.Digest:
        digest = digest_of(data)
        self.blobs.Write(iter([blobs_pb2.WriteRequest(digest=digest, offset=0, data=data,
                                                      finish_write=True)]), timeout=10)
        return digest

    def read(self, digest: tensor_pb2.Digest) -> bytes:
        return b"".join(r.data for r in self.blobs.Read(
            blobs_pb2.ReadRequest(digest=digest), timeout=10))

    def present(self, digest: tensor_pb2.Digest) -> bool:
        missing = self.blobs.FindMissing(
            blobs_pb2.FindMissingRequest(digests=[digest]), timeout=10).missing_digests
        return len(missing) == 0


@pytest.fixture
def daemon(tmp_path):
    # No local agent: an Execute stays in flight (pinning its blobs) until
    # the test starts one.
    d = Kilnd(tmp_path, tmp_path / "cache", extra_args=(
        "--local-agents", "none", "--device-wait-s", "300"), wait_for_cpu=False).start()
    yield d
    d.assert_stops_cleanly()


def test_stats_and_gc_evict_least_recently_used_blobs_first(daemon):
    stubs = Stubs(daemon.address)
    stats = stubs.stats()
    assert (stats.blob_count, stats.blob_bytes, stats.pinned_bytes) == (0, 0, 0)
    assert stats.capacity_bytes == 20 << 30, "the documented default"
    assert stats.salt == ""

    blobs = [stubs.write(bytes([i]) * 4096) for i in range(3)]
    assert stubs.read(blobs[0]) == bytes([0]) * 4096  # blob 1 is now the LRU one
    stats = stubs.stats()
    assert (stats.blob_count, stats.blob_bytes) == (3, 3 * 4096)

    done = stubs.gc(3 * 4096 - 1)
    assert (done.evicted_blobs, done.evicted_bytes, done.remaining_bytes) == (1, 4096, 2 * 4096)
    assert [stubs.present(d) for d in blobs] == [True, False, True]
    stats = stubs.stats()
    assert (stats.evicted_blobs, stats.evicted_bytes) == (1, 4096)

    with pytest.raises(grpc.RpcError) as bad:
        stubs.gc(-1)
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_gc_never_evicts_what_an_execution_in_flight_uses(daemon, tmp_path):
    stubs = Stubs(daemon.address)
    torch.manual_seed(11)
    model = kiln.testing.MLP(d_in=8, d_hidden=16, d_out=4).eval()
    x = torch.randn(2, 8)
    agent = None
    with kiln.Client(daemon.address, timeout=300) as client, \
            concurrent.futures.ThreadPoolExecutor(1) as pool:
        compiled = client.compile(torch.export.export(model, (x,)))
        record = executable_pb2.ExecutableRecord.FromString(stubs.read(compiled.executable))
        # What the execution pins: record, artifact and weights (x is inline).
        uses = {d.hash: d.size_bytes for d in
                [compiled.executable, record.artifact,
                 *(p.digest for p in compiled.graph.parameters)]}
        pinned = sum(uses.values())
        bystanders = [stubs.write(bytes([100 + i]) * 1000) for i in range(2)]
        in_flight = pool.submit(compiled, x)
        try:
            wait_until(lambda: stubs.stats().pinned_bytes == pinned,
                       f"the Execute to pin its {len(uses)} blobs ({pinned} bytes)")
            done = stubs.gc(1)  # as low as it goes
            assert done.remaining_bytes == pinned, "exactly the pinned bytes remain"
            assert done.evicted_blobs >= 2
            assert not any(stubs.present(d) for d in bystanders)
            assert stubs.present(compiled.executable)
            # The pinned executable, artifact and weights were kept: the
            # execution completes once a device arrives.
            agent = Agent(daemon, daemon.address, tmp_path, "gc-agent")
            torch.testing.assert_close(in_flight.result(timeout=WAIT_S), model(x),
                                       rtol=1e-4, atol=1e-5)
            assert stubs.stats().pinned_bytes == 0
        finally:
            if agent is None:  # a check failed: let the Execute finish anyway
                agent = Agent(daemon, daemon.address, tmp_path, "gc-agent")
                concurrent.futures.wait([in_flight], timeout=WAIT_S)
            agent.stop()


def test_salt_change_turns_a_hit_into_a_miss(daemon):
    stubs = Stubs(daemon.address)
    torch.manual_seed(5)
    model = kiln.testing.MLP(d_in=8, d_hidden=8, d_out=4).eval()
    exported = torch.export.export(model, (torch.randn(2, 8),))
    with kiln.Client(daemon.address, timeout=300) as client:
        first = client.compile(exported)
        assert client.compile(exported).cache_hit
        before = stubs.stats()
        assert before.compile_hits >= 1 and before.executable_count == 1

        answer = stubs.cache.SetCacheSalt(cache_pb2.SetCacheSaltRequest(salt="rotated-1"))
        assert answer.previous_salt == ""
        salted = client.compile(exported)
        assert not salted.cache_hit, "a new salt must not serve old executables"
        assert salted.compile_key != first.compile_key
        assert client.compile(exported).cache_hit

        after = stubs.stats()
        assert after.salt == "rotated-1"
        assert after.compile_misses == before.compile_misses + 1
        assert after.executable_count == 2
        assert (daemon.cache_dir / "salt").read_text() == "rotated-1\n"

        with pytest.raises(grpc.RpcError) as bad:
            stubs.cache.SetCacheSalt(cache_pb2.SetCacheSaltRequest(salt="two\nlines"))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
