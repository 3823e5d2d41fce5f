"""kiln/exchange.py: where tensors go in a direct channel's exchange
buffer, and their bytes there and back for every kind of tensor a call
passes (dtypes without a numpy twin, strided views, 0-d)."""

from __future__ import annotations

import mmap
import os

import pytest
import torch

from kiln.exchange import MAX_BYTES, ExchangeBuffer, aligned, packed_end, wanted_bytes


def test_tensors_start_at_aligned_offsets_and_empty_ones_take_none():
    assert [aligned(n) for n in (0, 1, 64, 65)] == [0, 64, 64, 128]
    assert packed_end([16, 0, 100, 1]) == 64 + 100 + 28 + 1  # 0, skipped, 64, 192
    assert wanted_bytes([]) == 0 and wanted_bytes([0, 0]) == 0
    assert wanted_bytes([16, 16]) == mmap.PAGESIZE
    assert wanted_bytes([MAX_BYTES, 1]) == MAX_BYTES  # capped


def _buffer(size: int = 1 << 16) -> ExchangeBuffer:
    fd = os.memfd_create("exchange-test")
    os.ftruncate(fd, size)
    return ExchangeBuffer(fd, size)


@pytest.mark.parametrize("t", [
    torch.randn(3, 5),
    torch.randn(4, 6)[:, ::2],  # strided
    torch.tensor(2.5, dtype=torch.float64),  # 0-d
    torch.randn(7).to(torch.bfloat16),
    torch.tensor([True, False, True]),
    torch.arange(9, dtype=torch.int64).reshape(3, 3).t(),
    torch.randn(2, 3, dtype=torch.complex64),
    torch.randn(3, requires_grad=True),
])
def test_a_tensor_placed_reads_back_the_same(t):
    buffer = _buffer()
    offset = buffer.place(t, 1)
    assert offset == 64
    back = buffer.read(offset, t.dtype, t.shape)
    assert back.dtype == t.dtype and back.shape == t.shape
    torch.testing.assert_close(back, t.detach(), rtol=0, atol=0)
    buffer.close()


def test_what_does_not_fit_is_not_written_and_reads_past_the_end_fail():
    buffer = _buffer(4096)
    assert buffer.place(torch.zeros(1024), 64) is None  # 4096 bytes from 64
    assert buffer.place(torch.zeros(0), 0) is None
    assert buffer.place(torch.ones(1024), 0) == 0
    with pytest.raises(ValueError, match="not inside"):
        buffer.read(64, torch.float32, [1024])
    with pytest.raises(ValueError, match="not inside"):
        buffer.read(-64, torch.float32, [1])
    buffer.close()


def test_a_buffer_whose_size_differs_from_the_answer_is_refused():
    fd = os.memfd_create("exchange-test")
    os.ftruncate(fd, 4096)
    with pytest.raises(ValueError, match="holds 4096 bytes"):
        ExchangeBuffer(fd, 8192)
