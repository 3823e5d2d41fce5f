"""A direct channel's exchange buffer: tensors without socket bytes or files.

On a direct channel (see :mod:`kiln.local_execute`) the client may ask the
agent for an exchange buffer (``kiln.v1.LocalExchange``): a memfd the agent
makes, seals against growing and shrinking, and passes back. Both sides map
it shared. A call then copies its inputs into the buffer and names where
(``LocalExecute.exchange_inputs``), and gives the agent the rest of the
buffer for outputs (``exchange_output_offset``/``_bytes``); the agent copies
the inputs out before the call runs and writes the outputs it can fit there
(``LocalReply.exchange_outputs``), which the client copies out before the
channel takes its next call.

Against a frame's inline bytes this saves the socket's copies and the
protobuf copies on both sides; against a sealed memfd per input, the file's
creation, its page allocation and the agent's mapping and page faults. A
mobilenet input (588 KiB) took ~127 us to write into a fresh memfd and ~18
us to copy into a mapped buffer (Intel Xeon VM, docs/architecture.md).
"""

from __future__ import annotations

import ctypes
import mmap
import os
from typing import Sequence

import torch

from kiln.tensors import payload_size, tensor_view

__all__ = ["ALIGNMENT", "MAX_BYTES", "MAX_TENSOR_BYTES", "ExchangeBuffer", "aligned", "packed_end",
           "wanted_bytes"]

#: Where tensors start in the buffer (the agent's AlignedBuffer alignment).
ALIGNMENT = 64
#: The largest buffer an agent makes (ExchangeBuffer::kMaxBytes).
MAX_BYTES = 16 << 20
#: Tensors from this size travel in sealed memfds even on a channel with a
#: buffer (ExchangeBuffer::kMaxTensorBytes): half of MAX_BYTES, so that an
#: input and an output of nearly this size fit one buffer. Under it, a copy
#: on each side into pages every call reuses beats a memfd, whose fresh
#: pages each call faults in on both sides (measured on an AMD EPYC VM:
#: 1 MiB in and out ~0.2 ms through the buffer against ~1.0-1.5 ms in
#: memfds; docs/architecture.md).
MAX_TENSOR_BYTES = MAX_BYTES // 2


def aligned(offset: int) -> int:
    """``offset`` rounded up to :data:`ALIGNMENT`."""
    return -(-offset // ALIGNMENT) * ALIGNMENT


def packed_end(sizes: Sequence[int]) -> int:
    """Where tensors of ``sizes`` bytes end when each non-empty one starts
    at the first aligned offset after the one before."""
    end = 0
    for size in sizes:
        if size > 0:
            end = aligned(end) + size
    return end


def wanted_bytes(sizes: Sequence[int]) -> int:
    """The buffer a call with tensors of ``sizes`` bytes (inputs, then
    outputs) fills: :func:`packed_end` page-rounded, at most
    :data:`MAX_BYTES`; 0 when there are no bytes to place."""
    end = packed_end(sizes)
    if end == 0:
        return 0
    return min(-(-end // mmap.PAGESIZE) * mmap.PAGESIZE, MAX_BYTES)


class ExchangeBuffer:
    """The client's mapping of one channel's exchange buffer (the agent's
    memfd ``fd``, owned from now on). One call uses it at a time: the
    channel's."""

    def __init__(self, fd: int, size: int):
        try:
            actual = os.fstat(fd).st_size
            if size <= 0 or actual != size:
                raise ValueError(f"the agent's exchange buffer holds {actual} bytes, "
                                 f"its answer says {size}")
            self._mapping = mmap.mmap(fd, size, flags=mmap.MAP_SHARED,
                                      prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self.size = size
        # Copies are memcpy on this thread (memoryviews, ctypes.memmove): a
        # torch copy_ of this size would wake torch's intra-op threads,
        # whose spinning takes the cores the agent computes on.
        self._view = memoryview(self._mapping)
        # The mapping's address, for put() and read(); the anchor holds an
        # export of the mapping (released by close()).
        self._anchor: ctypes.c_char | None = ctypes.c_char.from_buffer(self._mapping)
        self._address = ctypes.addressof(self._anchor)

    def close(self) -> None:
        self._view.release()
        self._anchor = None
        try:
            self._mapping.close()
        except BufferError:
            pass  # a view still exists; the mapping goes with it

    def fits(self, nbytes: int, cursor: int) -> bool:
        """Whether ``nbytes`` fit at the first aligned offset from ``cursor``."""
        return aligned(cursor) + nbytes <= self.size

    def place(self, t: torch.Tensor, cursor: int) -> int | None:
        """Copies ``t``'s bytes (Kiln's wire format) to the first aligned
        offset from ``cursor`` where they fit; that offset, or None (nothing
        written) when they do not."""
        nbytes = t.numel() * t.element_size()
        offset = aligned(cursor)
        if nbytes == 0 or offset + nbytes > self.size:
            return None
        self._view[offset:offset + nbytes] = tensor_view(t)
        return offset

    def _check_inside(self, offset: int, nbytes: int) -> None:
        if offset < 0 or offset + nbytes > self.size:
            raise ValueError(f"{nbytes} bytes at offset {offset} are not inside the "
                             f"channel's exchange buffer of {self.size} bytes")

    def put(self, t: torch.Tensor, offset: int) -> None:
        """Copies the memory of ``t``, a tensor whose memory is its wire
        bytes (:func:`kiln.tensors.is_wire_dense`), to ``offset``: what
        place() writes, without the views place() makes to find the bytes.
        ValueError when they would not be inside the buffer."""
        nbytes = t.numel() * t.element_size()
        self._check_inside(offset, nbytes)
        ctypes.memmove(self._address + offset, t.data_ptr(), nbytes)

    def read(self, offset: int, dtype: torch.dtype, shape: Sequence[int]) -> torch.Tensor:
        """A new tensor (a copy) of the bytes the agent wrote at ``offset``;
        ValueError when they are not inside the buffer."""
        shape = shape[:]  # a list of a message's repeated field in one call
        nbytes = payload_size(dtype, shape)
        self._check_inside(offset, nbytes)
        out = torch.empty(shape, dtype=dtype)  # contiguous: nbytes from data_ptr()
        if nbytes:
            ctypes.memmove(out.data_ptr(), self._address + offset, nbytes)
        return out
