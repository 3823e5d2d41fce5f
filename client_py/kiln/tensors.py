"""Conversions between torch tensors and kiln.v1 tensor messages.

Kiln's wire format for a tensor is its elements in row-major (C-contiguous)
order, little-endian, with no padding; :func:`tensor_bytes` produces exactly
that and :func:`tensor_from_bytes` reads it back.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import sys
from typing import Sequence

import torch

from kiln.v1 import tensor_pb2

__all__ = [
    "HeldTensor",
    "DTYPE_TO_PROTO",
    "PROTO_TO_DTYPE",
    "dtype_to_proto",
    "tensor_type",
    "set_tensor_type",
    "tensor_bytes",
    "tensor_view",
    "is_wire_dense",
    "tensor_from_bytes",
    "empty_tensor_for",
    "payload_size",
]

DTYPE_TO_PROTO: dict[torch.dtype, int] = {
    torch.float32: tensor_pb2.DTYPE_F32,
    torch.float64: tensor_pb2.DTYPE_F64,
    torch.float16: tensor_pb2.DTYPE_F16,
    torch.bfloat16: tensor_pb2.DTYPE_BF16,
    torch.int8: tensor_pb2.DTYPE_I8,
    torch.int16: tensor_pb2.DTYPE_I16,
    torch.int32: tensor_pb2.DTYPE_I32,
    torch.int64: tensor_pb2.DTYPE_I64,
    torch.uint8: tensor_pb2.DTYPE_U8,
    torch.bool: tensor_pb2.DTYPE_BOOL,
    # (real, imaginary) pairs, interleaved as torch stores them.
    torch.complex64: tensor_pb2.DTYPE_C64,
    torch.complex128: tensor_pb2.DTYPE_C128,
}
PROTO_TO_DTYPE: dict[int, torch.dtype] = {v: k for k, v in DTYPE_TO_PROTO.items()}

if sys.byteorder != "little":  # pragma: no cover - every supported host is LE
    raise ImportError("kiln: big-endian hosts are not supported (the wire format is little-endian)")


def dtype_to_proto(dtype: torch.dtype) -> int | None:
    """The kiln.v1.DType of a torch dtype, or None when Kiln has none."""
    return DTYPE_TO_PROTO.get(dtype)


def tensor_type(dtype: torch.dtype, shape: Sequence[int]) -> tensor_pb2.TensorType:
    """A TensorType message. Raises ValueError for dtypes Kiln lacks."""
    message = tensor_pb2.TensorType()
    set_tensor_type(message, dtype, [int(d) for d in shape])
    return message


def set_tensor_type(message: tensor_pb2.TensorType, dtype: torch.dtype,
                    shape: Sequence[int]) -> None:
    """Fills an (empty) TensorType in place, e.g. a request input's
    ``type``. Raises ValueError for dtypes Kiln lacks."""
    code = DTYPE_TO_PROTO.get(dtype)
    if code is None:
        raise ValueError(f"dtype {dtype} is not supported by Kiln "
                         f"(supported: {', '.join(str(d) for d in DTYPE_TO_PROTO)})")
    message.dtype = code
    message.shape.extend(shape)


def tensor_view(t: torch.Tensor) -> memoryview:
    """The tensor's elements in Kiln's wire format (dense, row-major, LE) as a
    read-only byte view: no copy when ``t`` is a contiguous CPU tensor. The
    view keeps the tensor alive (so its memory, unless the tensor is resized
    or given other storage while the view is in use). A lazily conjugated or negated
    view (``z.conj()``, ``z.conj().imag``) is resolved first: its memory
    holds the values before the conjugation or negation."""
    if t.requires_grad:
        t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.dim() != 1:
        t = t.reshape(-1)
    if t.numel() == 0:
        return memoryview(b"")
    return _bytes_of(t).toreadonly()


def _bytes_of(t: torch.Tensor) -> memoryview:
    """A writable byte view of a 1-d contiguous CPU tensor's memory, keeping
    it alive (the ctypes array the view exports holds the tensor). Not
    through ``Tensor.numpy()``: that marks the storage shared with numpy,
    and the caller's tensor could no longer be resized (``resize_`` fails,
    also on Kiln's own write-back of a resized input); nor numpy's DLPack
    import, read-only for the capsules torch 2.5 makes."""
    memory = (ctypes.c_ubyte * t.nbytes).from_address(t.data_ptr())
    memory._tensor = t  # type: ignore[attr-defined]
    return memoryview(memory).cast("B")


def is_wire_dense(t: torch.Tensor) -> bool:
    """Whether ``t`` is a plain CPU tensor whose memory, from
    ``t.data_ptr()`` on for ``t.nbytes``, is its wire format: strided and
    contiguous, with no lazy conjugation or negation (what
    :func:`tensor_view` shows without copying)."""
    return (type(t) is torch.Tensor and t.is_cpu and t.layout is torch.strided
            and t.is_contiguous() and not t.is_conj() and not t.is_neg())


def tensor_bytes(t: torch.Tensor) -> bytes:
    """The tensor's elements as Kiln's wire format, copied into bytes."""
    return tensor_view(t).tobytes()


def payload_size(dtype: torch.dtype, shape: Sequence[int]) -> int:
    """Wire bytes of a tensor of ``dtype`` and ``shape`` (ValueError for a
    negative extent)."""
    if shape and min(shape) < 0:
        raise ValueError(f"negative extent in shape {list(shape)}")
    return math.prod(shape) * dtype.itemsize


def empty_tensor_for(dtype: torch.dtype, shape: Sequence[int]
                     ) -> tuple[torch.Tensor, memoryview]:
    """A new tensor of ``dtype`` and ``shape`` and a writable byte view of its
    memory, for receiving wire bytes in place."""
    t = torch.empty([int(d) for d in shape], dtype=dtype)
    if t.numel() == 0:
        return t, memoryview(bytearray())
    return t, _bytes_of(t.reshape(-1))


def tensor_from_bytes(data: bytes, dtype: torch.dtype, shape: Sequence[int]) -> torch.Tensor:
    """Rebuilds a tensor from wire bytes; the result owns its memory (one copy)."""
    shape = list(shape)
    expected = payload_size(dtype, shape)
    if len(data) != expected:
        raise ValueError(f"tensor payload has {len(data)} bytes, expected {expected} "
                         f"for {dtype} {shape}")
    # Into a tensor of its own storage (resizable, as eager's results are),
    # not torch.frombuffer's; as fast on a small output.
    t = torch.empty(shape, dtype=dtype)
    if expected:
        ctypes.memmove(t.data_ptr(), data, expected)
    return t


@dataclasses.dataclass(frozen=True)
class HeldTensor:
    """A tensor a device keeps for this caller (ExecuteRequest.keep_outputs):
    pass it as an Execute input and the call runs where it is, without the
    bytes travelling. Release it (``ExecuteRequest.release``) when done."""

    handle: str
    dtype: torch.dtype
    shape: tuple[int, ...]

    @classmethod
    def from_output(cls, out: tensor_pb2.Tensor, dtype: torch.dtype) -> "HeldTensor":
        return cls(out.held, dtype, tuple(out.type.shape))
