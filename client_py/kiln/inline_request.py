"""An Execute request's wire bytes for a call whose inputs all go inline.

Over gRPC, a small call's client time is mostly its own Python: building
an ExecuteRequest, adding an input message per tensor with its type and
shape, copying each tensor into ``data`` through a byte view, then
serializing it all again. :func:`inline_request_bytes` writes the same
bytes directly: the request's other fields serialized once, then per
input a prefix kept per (dtype, shape) (the ``inputs`` tag and length, the
input's ``type``, the ``data`` tag and length) followed by the tensor's
memory. The message a parser reads is the one the slow path builds
(repeated fields keep their order; field order is otherwise free on the
wire). Calls it cannot write (a blob, a held tensor, a view that is not
dense, a subclass, a tensor off the CPU or without memory, a non-tensor,
more than the inline limits) return None, and take the slow path.
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

import torch

from kiln.tensors import is_wire_dense, set_tensor_type
from kiln.v1 import executor_pb2, tensor_pb2

__all__ = ["inline_request_bytes", "varint"]

_LENGTH_DELIMITED = 2
# One-byte tags: both fields are numbered under 16.
assert executor_pb2.ExecuteRequest.DESCRIPTOR.fields_by_name["inputs"].number < 16
assert tensor_pb2.Tensor.DESCRIPTOR.fields_by_name["data"].number < 16
_INPUTS_TAG = bytes([(executor_pb2.ExecuteRequest.DESCRIPTOR.fields_by_name["inputs"].number
                      << 3) | _LENGTH_DELIMITED])
_DATA_TAG = bytes([(tensor_pb2.Tensor.DESCRIPTOR.fields_by_name["data"].number << 3)
                   | _LENGTH_DELIMITED])
#: (dtype, shape) -> the input's bytes before its data; at most _PREFIXES_MAX.
_prefixes: dict[tuple[torch.dtype, torch.Size], bytes] = {}
_PREFIXES_MAX = 256


def varint(n: int) -> bytes:
    """``n`` (>= 0) as a protobuf base-128 varint."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _input_prefix(dtype: torch.dtype, shape: torch.Size, nbytes: int) -> bytes:
    """The ``inputs`` field of a tensor of ``dtype`` and ``shape`` up to
    its data (ValueError for a dtype Kiln lacks)."""
    key = (dtype, shape)
    prefix = _prefixes.get(key)
    if prefix is None:
        typed = tensor_pb2.Tensor()
        set_tensor_type(typed.type, dtype, shape)
        head = typed.SerializeToString() + _DATA_TAG + varint(nbytes)
        prefix = _INPUTS_TAG + varint(len(head) + nbytes) + head
        if len(_prefixes) >= _PREFIXES_MAX:
            _prefixes.clear()
        _prefixes[key] = prefix
    return prefix


def inline_request_bytes(request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
                         input_limit: int, request_budget: int) -> bytes | None:
    """``request`` (which has no inputs yet) serialized with ``inputs``
    inline, as the slow path would send it; None unless every input is a
    dense CPU tensor of at most ``input_limit`` bytes and together they
    are at most ``request_budget``. ValueError for a dtype Kiln lacks."""
    parts = [request.SerializeToString()]
    total = 0
    for t in inputs:
        if type(t) is not torch.Tensor or not is_wire_dense(t):
            return None
        nbytes = t.nbytes
        total += nbytes
        if nbytes > input_limit or total > request_budget:
            return None
        if nbytes and not t.data_ptr():
            return None  # no memory behind it (a ZeroTensor): never read address 0
        parts.append(_input_prefix(t.dtype, t.shape, nbytes))
        if nbytes:
            parts.append(ctypes.string_at(t.data_ptr(), nbytes))
    return b"".join(parts)
