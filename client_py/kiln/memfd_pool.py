"""Sealed memfds for the local socket's inputs, with pages allocated ahead.

Writing a tensor into a fresh memfd allocates its pages as it goes: for a
600 KB input that is ~200 us on a Zen 4 VM, of which the copy is ~80. A
:class:`MemfdPool` keeps, per input size it has seen, a memfd whose pages
are already allocated (``posix_fallocate``), made while the previous call
waited for its reply (:meth:`MemfdPool.refill`). The next call of the same
shape then pays the copy alone.

A memfd leaves the pool sealed against writing, growing and shrinking (what
kilnd accepts), so it is never written again: a spare is used once. Spares
are only kept for inputs up to :data:`SPARE_MAX_BYTES`, and
:data:`SPARE_BUDGET_BYTES` in all; bigger inputs get fresh memfds, where the
copy dominates anyway.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections import Counter
from typing import Iterable

__all__ = ["MemfdPool", "SEALS", "SPARE_BUDGET_BYTES", "SPARE_MAX_BYTES", "sealed_memfd"]

#: The seals kilnd requires of an input's memfd.
SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
#: Inputs larger than this get no spare.
SPARE_MAX_BYTES = 16 << 20
#: Bytes of spare memfds one pool holds at most.
SPARE_BUDGET_BYTES = 64 << 20

_FLAGS = os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING

#: Pauses before each retry of a seal the kernel refused with EBUSY.
#: Adding F_SEAL_WRITE fails while some page of the memfd is still
#: referenced (kdamond, kcompactd and page migration take such references
#: for a moment); the kernel waits ~0.1 s itself before giving up, so a few
#: longer pauses (~0.3 s in all) outlast any transient holder.
SEAL_RETRY_PAUSES_S = (0.01, 0.02, 0.04, 0.08, 0.16)


def _bytes_of(view: memoryview) -> memoryview:
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def _write_and_seal(fd: int, data: memoryview) -> None:
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], written)
    _add_seals(fd)


def _add_seals(fd: int) -> None:
    """Seals ``fd`` with :data:`SEALS`, retrying while the kernel says EBUSY."""
    for pause in (*SEAL_RETRY_PAUSES_S, None):
        try:
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
            return
        except OSError as e:
            if e.errno != errno.EBUSY:
                raise
            if pause is None:
                raise OSError(errno.EBUSY, "could not seal an input memfd against writing: "
                              f"its pages stayed busy through {len(SEAL_RETRY_PAUSES_S) + 1} "
                              "tries") from e
        time.sleep(pause)


def sealed_memfd(view: memoryview, name: str = "kiln-input") -> int:
    """A fresh memfd holding ``view``'s bytes, sealed (:data:`SEALS`). The
    caller owns the descriptor."""
    fd = os.memfd_create(name, _FLAGS)
    try:
        _write_and_seal(fd, _bytes_of(view))
        return fd
    except BaseException:
        os.close(fd)
        raise


class MemfdPool:
    """Spare memfds by size, for :meth:`sealed_copy`. Thread-safe."""

    def __init__(self, max_bytes: int = SPARE_MAX_BYTES,
                 budget_bytes: int = SPARE_BUDGET_BYTES):
        self._max_bytes = max_bytes
        self._budget_bytes = budget_bytes
        self._lock = threading.Lock()
        self._spares: dict[int, list[int]] = {}
        self._held_bytes = 0
        # Allocation fails on some filesystems' memfds (no fallocate):
        # then the pool only makes fresh memfds.
        self._disabled = False

    def sealed_copy(self, view: memoryview) -> int:
        """A sealed memfd holding ``view``'s bytes: a spare of its size when
        the pool has one, else a fresh one. The caller owns the descriptor."""
        data = _bytes_of(view)
        fd = self._take(len(data))
        if fd is None:
            return sealed_memfd(data)
        try:
            _write_and_seal(fd, data)
            return fd
        except BaseException:
            os.close(fd)
            raise

    def refill(self, sizes: Iterable[int]) -> None:
        """Makes spares so that a call with inputs of ``sizes`` (bytes, one
        per memfd input) finds one for each, within the budget. Spares of
        other sizes go first when the budget is short."""
        if self._disabled:
            return
        wanted = Counter(n for n in sizes if 0 < n <= self._max_bytes)
        if not wanted:
            return
        self._evict_others(wanted)
        for size, count in wanted.items():
            while True:
                with self._lock:
                    have = len(self._spares.get(size, ()))
                    if have >= count or self._held_bytes + size > self._budget_bytes:
                        break
                    self._held_bytes += size  # reserved while it is made
                fd = self._make(size)
                with self._lock:
                    if fd is None:
                        self._held_bytes -= size
                        return
                    self._spares.setdefault(size, []).append(fd)

    def close(self) -> None:
        with self._lock:
            spares, self._spares, self._held_bytes = self._spares, {}, 0
        for fds in spares.values():
            for fd in fds:
                os.close(fd)

    def _take(self, size: int) -> int | None:
        with self._lock:
            fds = self._spares.get(size)
            if not fds:
                return None
            self._held_bytes -= size
            return fds.pop()

    def _evict_others(self, wanted: Counter) -> None:
        need = sum(size * count for size, count in wanted.items())
        closing: list[int] = []
        with self._lock:
            for size in [s for s in self._spares if s not in wanted]:
                if self._held_bytes + need <= self._budget_bytes:
                    break
                fds = self._spares.pop(size)
                self._held_bytes -= size * len(fds)
                closing.extend(fds)
        for fd in closing:
            os.close(fd)

    def _make(self, size: int) -> int | None:
        """A memfd of ``size`` bytes with its pages allocated; None (and no
        spares from then on) when that fails: out of descriptors or memory,
        or a kernel whose memfds take no fallocate."""
        try:
            fd = os.memfd_create("kiln-input", _FLAGS)
        except OSError:
            return None
        try:
            os.posix_fallocate(fd, 0, size)
            return fd
        except OSError:
            os.close(fd)
            self._disabled = True
            return None
