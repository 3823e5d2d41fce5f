"""kiln.v1.Cache from Python: the daemon's store and compile cache.

``Client(...).cache.stats()``, ``.collect_garbage(target_bytes)`` and
``.set_salt(salt)``; what ``kiln cache stats|gc|salt`` calls.
"""

from __future__ import annotations

import dataclasses

from kiln._rpc import Rpc
from kiln.v1 import cache_pb2

__all__ = ["CacheStats", "GarbageCollection", "CacheClient"]


@dataclasses.dataclass(frozen=True)
class CacheStats:
    """GetCacheStats' answer (counters are since the daemon started)."""

    blob_count: int
    blob_bytes: int
    capacity_bytes: int       # 0: unlimited
    pinned_bytes: int
    executable_count: int
    compile_hits: int
    compile_misses: int
    evicted_blobs: int
    evicted_bytes: int
    salt: str

    @classmethod
    def from_proto(cls, msg: cache_pb2.GetCacheStatsResponse) -> "CacheStats":
        return cls(**{f.name: getattr(msg, f.name) for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class GarbageCollection:
    """CollectGarbage's answer."""

    evicted_blobs: int
    evicted_bytes: int
    remaining_bytes: int


class CacheClient:
    """The Cache service of one daemon."""

    def __init__(self, rpc: Rpc):
        self._rpc = rpc

    def stats(self) -> CacheStats:
        resp = self._rpc.call("kiln.v1.Cache/GetCacheStats", self._rpc.cache.GetCacheStats,
                              cache_pb2.GetCacheStatsRequest())
        return CacheStats.from_proto(resp)

    def collect_garbage(self, target_bytes: int = 0) -> GarbageCollection:
        """Evicts unpinned blobs, least recently used first, until the store
        holds at most ``target_bytes`` (0: down to the configured capacity)."""
        if target_bytes < 0:
            raise ValueError("target_bytes must be >= 0")
        resp = self._rpc.call("kiln.v1.Cache/CollectGarbage", self._rpc.cache.CollectGarbage,
                              cache_pb2.CollectGarbageRequest(target_bytes=target_bytes),
                              context={"target_bytes": target_bytes})
        return GarbageCollection(resp.evicted_blobs, resp.evicted_bytes, resp.remaining_bytes)

    def set_salt(self, salt: str) -> str:
        """Sets the compile-key salt; returns the previous one."""
        resp = self._rpc.call("kiln.v1.Cache/SetCacheSalt", self._rpc.cache.SetCacheSalt,
                              cache_pb2.SetCacheSaltRequest(salt=salt))
        return resp.previous_salt
