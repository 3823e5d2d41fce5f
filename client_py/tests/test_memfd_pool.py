"""MemfdPool: sealed input memfds whose pages were allocated ahead.

What kilnd accepts (sealed, exactly the tensor's size, its bytes) is checked
for spares and fresh memfds alike; a spare is used once, and the pool keeps
to its size limits."""

from __future__ import annotations

import fcntl
import mmap
import os

import pytest

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
