"""kiln.v1.Cache from Python: the daemon's store and compile cache.

``Client(...).cache.stats()``, ``.collect_garbage(target_bytes)``,
``.set_salt(salt)`` and ``.explain_miss(graph, target, options)``; what
``kiln cache stats|gc|salt|why`` calls.
"""

from __future__ import annotations

import dataclasses

from typing import Any, Mapping

from kiln._rpc import Rpc
from kiln.options import compile_options
from kiln.v1 import cache_pb2, compiler_pb2, graph_pb2

__all__ = ["CacheStats", "GarbageCollection", "KeyDifference", "MissCandidate",
           "MissExplanation", "CacheClient"]


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


@dataclasses.dataclass(frozen=True)
class KeyDifference:
    """One component of the compile key that differs from a cached key."""

    component: str            # "graph", "target", "options", "target_features", "compiler", "salt"
    detail: str               # one line: what differs, here and cached


@dataclasses.dataclass(frozen=True)
class MissCandidate:
    """A cached key of a graph with the same name, and how it differs."""

    compile_key: str
    executable: str           # hex digest ("" for a partitioned graph's placement)
    differences: tuple[KeyDifference, ...]


@dataclasses.dataclass(frozen=True)
class MissExplanation:
    """ExplainMiss' answer: the key a compile would use, whether it is cached,
    and the nearest cached keys of the same graph name (nearest first)."""

    compile_key: str
    cached: bool
    graph_name: str
    candidates: tuple[MissCandidate, ...]

    @classmethod
    def from_proto(cls, msg: cache_pb2.ExplainMissResponse) -> "MissExplanation":
        def component(c: int) -> str:
            return cache_pb2.KeyComponent.Name(c).removeprefix("KEY_COMPONENT_").lower()
        return cls(msg.compile_key, msg.cached, msg.graph_name, tuple(
            MissCandidate(c.compile_key, c.executable.hash, tuple(
                KeyDifference(component(d.component), d.detail) for d in c.differences))
            for c in msg.candidates))


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

    def explain_miss(self, graph: graph_pb2.Graph, target: str = "cpu",
                     options: compiler_pb2.CompileOptions | Mapping[str, Any] | None = None,
                     max_candidates: int = 3) -> MissExplanation:
        """Why compiling ``graph`` for ``target`` with ``options`` would miss:
        the key, whether it is cached, and the nearest cached keys of a graph
        with the same name with the components that differ."""
        request = cache_pb2.ExplainMissRequest(graph=graph, target=target,
                                               options=compile_options(options),
                                               max_candidates=max_candidates)
        resp = self._rpc.call("kiln.v1.Cache/ExplainMiss", self._rpc.cache.ExplainMiss, request,
                              context={"graph": graph.name, "target": target})
        return MissExplanation.from_proto(resp)
