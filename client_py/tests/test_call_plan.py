"""kiln/call_plan.py and ExchangeBuffer.put: a direct channel's call plan
sends the message the full encoding sends, with the call's own request id;
it copies each input's bytes to its offset; and any input it cannot copy
as it is (another dtype or shape, a strided or lazily conjugated view, a
subclass, a non-tensor) or another timeout sends the call back to the full
encoding. The channel-level behaviour is in test_direct_channels.py."""

from __future__ import annotations

import os

import pytest
import torch

from kiln._rpc import new_request_id
from kiln.call_plan import REQUEST_ID_CHARS, CallPlan
from kiln.exchange import ExchangeBuffer, aligned
from kiln.tensors import is_wire_dense, set_tensor_type
from kiln.v1 import executor_pb2


def _buffer(size: int = 1 << 16) -> ExchangeBuffer:
    fd = os.memfd_create("call-plan-test")
    os.ftruncate(fd, size)
    return ExchangeBuffer(fd, size)


def _placed_call(inputs, exchange: ExchangeBuffer, timeout_ms: int = 10_000
                 ) -> executor_pb2.LocalClientFrame:
    """What LocalExecutor.execute builds for a direct call whose inputs all
    go through the buffer (before its request id)."""
    frame = executor_pb2.LocalClientFrame()
    call = frame.execute
    cursor = 0
    for i, t in enumerate(inputs):
        set_tensor_type(call.request.inputs.add().type, t.dtype, t.shape)
        offset = exchange.place(t, cursor)
        call.exchange_inputs.add(index=i, offset=offset)
        cursor = offset + t.numel() * t.element_size()
    call.exchange_output_offset = aligned(cursor)
    call.exchange_output_bytes = exchange.size - aligned(cursor)
    call.timeout_ms = timeout_ms
    return frame


def _inputs(n: int = 2):
    g = torch.Generator().manual_seed(n)
    kinds = [torch.randn(4, 8, generator=g), torch.arange(6, dtype=torch.int64).reshape(2, 3),
             torch.randn(5, generator=g).to(torch.bfloat16), torch.tensor([True, False]),
             torch.randn(3, dtype=torch.complex64, generator=g)]
    return [kinds[i % len(kinds)] * 1 for i in range(n)]


@pytest.mark.parametrize("count", [1, 2, 5, 24])  # 24: the body's length takes 2 bytes
def test_a_planned_frame_is_the_full_encodings_message_with_the_calls_id(count):
    exchange = _buffer()
    inputs = _inputs(count)
    made = _placed_call(inputs, exchange)
    plan = CallPlan(made.execute, inputs)
    fresh = [t + 1 if t.dtype != torch.bool else ~t for t in inputs]
    rid = new_request_id()
    frame = plan.frame(fresh, exchange, 10_000, rid)
    assert frame is not None
    want = executor_pb2.LocalClientFrame()
    want.CopyFrom(made)
    want.execute.request_id = rid
    assert executor_pb2.LocalClientFrame.FromString(frame) == want
    # Each input's bytes are at its offset.
    for t, slot in zip(fresh, made.execute.exchange_inputs):
        got = exchange.read(slot.offset, t.dtype, list(t.shape))
        assert torch.equal(got, t)


def test_a_call_unlike_the_plans_is_not_planned():
    exchange = _buffer()
    x, n = torch.randn(4, 8), torch.arange(6, dtype=torch.int64).reshape(2, 3)
    plan = CallPlan(_placed_call([x, n], exchange).execute, [x, n])
    rid = new_request_id()
    assert plan.frame([x, n], exchange, 10_000, rid) is not None
    unlike = [
        [x.double(), n],                      # dtype
        [torch.randn(8, 4), n],               # shape
        [torch.randn(8, 4).t(), n],           # strided view of the same shape
        [x, n, n],                            # count
        [x, 3],                               # not a tensor
        [torch.nn.Parameter(x), n],           # a subclass
    ]
    for inputs in unlike:
        assert plan.frame(inputs, exchange, 10_000, rid) is None, inputs
    assert plan.frame([x, n], exchange, 20_000, rid) is None  # another timeout


def test_lazily_conjugated_or_negated_tensors_are_not_wire_dense():
    z = torch.randn(3, dtype=torch.complex64)
    assert is_wire_dense(z)
    assert not is_wire_dense(z.conj())
    assert not is_wire_dense(torch._neg_view(z))
    assert not is_wire_dense(torch.randn(4, 4)[:, 1])
    assert not is_wire_dense(torch.randn(2).to_sparse())


def test_a_plan_needs_every_input_in_the_buffer_and_no_id():
    exchange = _buffer()
    x = torch.randn(4)
    frame = _placed_call([x], exchange)
    with pytest.raises(ValueError, match="every input"):
        CallPlan(frame.execute, [x, x])
    frame.execute.request_id = new_request_id()
    with pytest.raises(ValueError, match="no request id"):
        CallPlan(frame.execute, [x])
    frame.execute.request_id = ""
    plan = CallPlan(frame.execute, [x])
    with pytest.raises(ValueError, match=f"expected {REQUEST_ID_CHARS}"):
        plan.frame([x], exchange, 10_000, "short")


def test_put_refuses_bytes_outside_the_buffer():
    exchange = _buffer(4096)
    with pytest.raises(ValueError, match="not inside"):
        exchange.put(torch.zeros(1025), 0)
    with pytest.raises(ValueError, match="not inside"):
        exchange.put(torch.zeros(1), 4093)
    exchange.put(torch.full((1024,), 7.0), 0)
    assert torch.equal(exchange.read(0, torch.float32, [1024]), torch.full((1024,), 7.0))
