"""MemfdPool: sealed input memfds whose pages were allocated ahead.

What kilnd accepts (sealed, exactly the tensor's size, its bytes) is checked
for spares and fresh memfds alike; a spare is used once, and the pool keeps
to its size limits."""

from __future__ import annotations

import errno
import fcntl
import mmap
import os

import pytest

from kiln import memfd_pool
from kiln.memfd_pool import SEALS, MemfdPool, sealed_memfd


def contents(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
        return bytes(m)


def inode(fd: int) -> int:
    return os.fstat(fd).st_ino


@pytest.fixture
def pool():
    p = MemfdPool(max_bytes=1 << 20, budget_bytes=3 << 16)
    yield p
    p.close()


def test_a_copy_is_sealed_and_holds_the_bytes(pool):
    data = os.urandom(5000)
    for fd in (sealed_memfd(memoryview(data)), pool.sealed_copy(memoryview(data))):
        try:
            assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) & SEALS == SEALS
            assert contents(fd) == data
            with pytest.raises(OSError):
                os.write(fd, b"x")
        finally:
            os.close(fd)


def test_a_spare_of_the_size_is_used_once(pool):
    pool.refill([4096])
    spare = pool._spares[4096][0]
    spare_inode = inode(spare)
    first = pool.sealed_copy(memoryview(b"a" * 4096))
    second = pool.sealed_copy(memoryview(b"b" * 4096))
    try:
        assert inode(first) == spare_inode  # the spare, filled
        assert inode(second) != spare_inode  # none left: a fresh one
        assert contents(first) == b"a" * 4096 and contents(second) == b"b" * 4096
    finally:
        os.close(first)
        os.close(second)


def test_a_spare_of_another_size_is_not_used(pool):
    pool.refill([8192])
    fd = pool.sealed_copy(memoryview(b"c" * 4096))
    try:
        assert os.fstat(fd).st_size == 4096 and contents(fd) == b"c" * 4096
        assert len(pool._spares[8192]) == 1
    finally:
        os.close(fd)


def test_refill_makes_one_spare_per_input_of_a_size(pool):
    pool.refill([4096, 4096, 100])
    assert len(pool._spares[4096]) == 2 and len(pool._spares[100]) == 1
    pool.refill([4096, 4096, 100])  # already there: nothing more
    assert len(pool._spares[4096]) == 2 and pool._held_bytes == 2 * 4096 + 100


def test_the_pool_keeps_to_its_limits(pool):
    pool.refill([2 << 20])  # over max_bytes: no spare
    assert pool._spares == {} and pool._held_bytes == 0
    pool.refill([1 << 16] * 5)  # the budget holds three
    assert len(pool._spares[1 << 16]) == 3 and pool._held_bytes == 3 << 16


def test_spares_of_sizes_no_longer_used_make_room(pool):
    pool.refill([1 << 16, 1 << 16])
    pool.refill([3 << 15, 3 << 15])  # needs the room the others hold
    assert (1 << 16) not in pool._spares
    assert len(pool._spares[3 << 15]) == 2 and pool._held_bytes == 3 << 16


def test_without_fallocate_the_pool_makes_fresh_memfds(pool, monkeypatch):
    def refuse(fd, offset, length):
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(os, "posix_fallocate", refuse)
    pool.refill([4096])
    assert pool._spares == {} and pool._held_bytes == 0
    fd = pool.sealed_copy(memoryview(b"d" * 4096))
    try:
        assert contents(fd) == b"d" * 4096
    finally:
        os.close(fd)
    monkeypatch.undo()
    pool.refill([4096])  # disabled from then on
    assert pool._spares == {}


def test_close_closes_the_spares(pool):
    pool.refill([4096])
    spare = pool._spares[4096][0]
    pool.close()
    with pytest.raises(OSError):
        os.fstat(spare)


class FlakySeal:
    """fcntl.fcntl that answers F_ADD_SEALS with EBUSY ``busy`` times first."""

    def __init__(self, busy: int):
        self.busy = busy
        self.seal_calls = 0
        self.real = fcntl.fcntl

    def __call__(self, fd, cmd, arg=0):
        if cmd == fcntl.F_ADD_SEALS:
            self.seal_calls += 1
            if self.busy > 0:
                self.busy -= 1
                raise OSError(errno.EBUSY, "Device or resource busy")
        return self.real(fd, cmd, arg)


@pytest.fixture
def no_pauses(monkeypatch):
    monkeypatch.setattr(memfd_pool, "SEAL_RETRY_PAUSES_S", (0.0,) * 5)


@pytest.mark.parametrize("copy", ["fresh", "spare"])
def test_a_seal_the_kernel_refuses_as_busy_is_retried(monkeypatch, no_pauses, pool, copy):
    data = os.urandom(4096)
    spare_inode = None
    if copy == "spare":
        pool.refill([len(data)])
        spare_inode = inode(pool._spares[len(data)][0])
    flaky = FlakySeal(busy=2)
    monkeypatch.setattr(memfd_pool.fcntl, "fcntl", flaky)
    fd = sealed_memfd(memoryview(data)) if copy == "fresh" else pool.sealed_copy(memoryview(data))
    try:
        if spare_inode is not None:
            assert inode(fd) == spare_inode  # the spare was the one sealed
        assert flaky.seal_calls == 3
        assert flaky.real(fd, fcntl.F_GET_SEALS) & SEALS == SEALS
        assert contents(fd) == data
    finally:
        os.close(fd)


def test_a_seal_busy_through_every_retry_fails_naming_it(monkeypatch, no_pauses):
    flaky = FlakySeal(busy=100)
    monkeypatch.setattr(memfd_pool.fcntl, "fcntl", flaky)
    open_before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError, match="could not seal an input memfd.*6 tries") as info:
        sealed_memfd(memoryview(b"x" * 64))
    assert info.value.errno == errno.EBUSY
    assert flaky.seal_calls == 6
    assert set(os.listdir("/proc/self/fd")) <= open_before  # the memfd was closed


def test_a_seal_failing_otherwise_is_not_retried(monkeypatch, no_pauses):
    calls = []

    def refuse(fd, cmd, arg=0):
        calls.append(cmd)
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(memfd_pool.fcntl, "fcntl", refuse)
    with pytest.raises(OSError) as info:
        sealed_memfd(memoryview(b"x" * 64))
    assert info.value.errno == errno.EPERM
    assert calls == [fcntl.F_ADD_SEALS]
