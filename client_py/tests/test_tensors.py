"""The wire format helpers every Execute goes through: what they produce for
each kind of tensor a caller may pass, and the request id."""

import uuid

import pytest
import torch

from kiln._rpc import new_request_id
from kiln.tensors import (empty_tensor_for, payload_size, set_tensor_type, tensor_bytes,
                          tensor_from_bytes, tensor_type, tensor_view)
from kiln.v1 import tensor_pb2


def reference_bytes(t: torch.Tensor) -> bytes:
    """Row-major little-endian elements, made the slow and obvious way."""
    return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


@pytest.mark.parametrize("make", [
    lambda: torch.arange(12, dtype=torch.float32).reshape(3, 4).t(),  # not contiguous
    lambda: torch.nn.Parameter(torch.randn(5, 3)),  # requires grad
    lambda: torch.randn(4, 4).requires_grad_()[1:3],  # a view that requires grad
    lambda: torch.tensor(2.5),  # zero dimensions
    lambda: torch.randn(2, 3, 4).to(torch.bfloat16),  # no numpy dtype
    lambda: torch.tensor([True, False, True]),
    lambda: torch.randn(3, 4)[:, ::2],  # strided
    lambda: torch.empty(0, 7),
    lambda: torch.randn(3, 4, dtype=torch.complex64).t(),  # (re, im) pairs, not contiguous
    lambda: torch.randn(5, dtype=torch.complex128),
])
def test_views_are_the_row_major_bytes_and_come_back_equal(make):
    t = make()
    view = tensor_view(t)
    assert view.readonly
    assert view.tobytes() == reference_bytes(t) == tensor_bytes(t)
    back = tensor_from_bytes(view.tobytes(), t.dtype, list(t.shape))
    assert back.shape == t.shape and back.dtype == t.dtype
    assert torch.equal(back, t.detach())


@pytest.mark.parametrize("make", [
    lambda z: z.conj(),  # the conjugate bit, contiguous memory
    lambda z: z.t().conj(),  # and not contiguous
    lambda z: z.conj().imag,  # the negative bit (a strided float view)
    lambda z: torch._neg_view(z.real.contiguous()),  # the negative bit, contiguous
    lambda z: z.conj().requires_grad_(),
])
def test_lazily_conjugated_and_negated_views_go_as_their_values(make):
    # Their memory holds the values before the conjugation or negation:
    # the wire bytes are the values, built element by element here.
    t = make(torch.randn(3, 4, dtype=torch.complex64))
    assert t.is_conj() or t.is_neg()
    values = torch.tensor(t.tolist(), dtype=t.dtype)
    assert tensor_view(t).tobytes() == reference_bytes(values) == tensor_bytes(t)
    back = tensor_from_bytes(tensor_bytes(t), t.dtype, list(t.shape))
    assert torch.equal(back, values) and not back.is_conj() and not back.is_neg()


def test_a_decoded_tensor_owns_writable_memory():
    data = torch.arange(6, dtype=torch.int32).numpy().tobytes()
    back = tensor_from_bytes(data, torch.int32, [2, 3])
    back.add_(1)  # writable, and not the bytes object's memory
    assert data == torch.arange(6, dtype=torch.int32).numpy().tobytes()
    assert back.tolist() == [[1, 2, 3], [4, 5, 6]]


def test_byte_views_leave_tensors_resizable():
    # Tensor.numpy() would mark the caller's storage shared with numpy, and
    # resize_ on it (eager's, or the write-back of a resized input) fail.
    sent = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    view = tensor_view(sent)
    assert bytes(view) == torch.arange(6, dtype=torch.float32).numpy().tobytes()
    received, into = empty_tensor_for(torch.int64, [2, 2])
    into[:] = torch.arange(4).numpy().tobytes()
    assert received.tolist() == [[0, 1], [2, 3]]
    assert view.readonly and not into.readonly
    del view, into  # they show the memory a resize frees
    decoded = tensor_from_bytes(torch.arange(3).numpy().tobytes(), torch.int64, [3])
    for t in (sent, received, decoded):
        t.resize_(5, 5)  # grows the storage
        assert t.shape == (5, 5)


def test_a_payload_of_the_wrong_size_or_shape_is_refused():
    with pytest.raises(ValueError, match="has 12 bytes, expected 16"):
        tensor_from_bytes(bytes(12), torch.float32, [2, 2])
    with pytest.raises(ValueError, match="negative extent"):
        payload_size(torch.float32, [2, -1])
    assert payload_size(torch.float64, []) == 8
    assert payload_size(torch.int16, [3, 0]) == 0


def test_a_type_is_filled_in_place_and_unknown_dtypes_are_refused():
    message = tensor_pb2.Tensor()
    set_tensor_type(message.type, torch.float16, torch.Size([2, 5]))
    assert message.type == tensor_type(torch.float16, [2, 5])
    assert message.type.dtype == tensor_pb2.DTYPE_F16 and list(message.type.shape) == [2, 5]
    assert tensor_type(torch.complex64, [3]).dtype == tensor_pb2.DTYPE_C64
    assert payload_size(torch.complex128, [2, 3]) == 96
    untouched = tensor_pb2.TensorType()
    with pytest.raises(ValueError, match="uint16 is not supported"):
        set_tensor_type(untouched, torch.uint16, [3])
    assert untouched == tensor_pb2.TensorType()


def test_request_ids_are_distinct_uuid4s_in_hex():
    ids = {new_request_id() for _ in range(1000)}
    assert len(ids) == 1000
    for rid in list(ids)[:50]:
        assert len(rid) == 32
        parsed = uuid.UUID(hex=rid)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert parsed.hex == rid
