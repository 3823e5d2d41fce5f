"""kiln/inline_request.py: the bytes written for a call whose inputs all go
inline parse to the very message the slow path (Executor._encode_inputs)
builds, for every dtype and shape, empty and 0-d tensors included; calls
it cannot write (a view that is not dense, a subclass, a non-tensor, over
the inline limits) get None. The gRPC call itself runs in the e2e tests."""

from __future__ import annotations

import pytest
import torch

from kiln.inline_request import inline_request_bytes
from kiln.tensors import set_tensor_type, tensor_bytes
from kiln.v1 import executor_pb2

LIMIT, BUDGET = 1024, 3000


def _template() -> executor_pb2.ExecuteRequest:
    request = executor_pb2.ExecuteRequest()
    request.executable.hash = "ab" * 32
    request.executable.size_bytes = 99
    request.parameters.add(hash="cd" * 32, size_bytes=12)
    request.keep_outputs.append(1)
    return request


def _slow(request: executor_pb2.ExecuteRequest, inputs) -> executor_pb2.ExecuteRequest:
    """What the slow path sends: each input added with its type and data."""
    built = executor_pb2.ExecuteRequest()
    built.CopyFrom(request)
    for t in inputs:
        msg = built.inputs.add()
        set_tensor_type(msg.type, t.dtype, t.shape)
        msg.data = tensor_bytes(t)
    return built


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
          torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
          torch.complex64, torch.complex128]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_the_bytes_are_the_slow_paths_message(dtype):
    g = torch.Generator().manual_seed(0)
    inputs = [(torch.randn(3, 5, generator=g) * 10).to(dtype), torch.ones((), dtype=dtype),
              torch.empty(0, 4, dtype=dtype), (torch.arange(7) % 3).to(dtype)]
    wire = inline_request_bytes(_template(), inputs, LIMIT, BUDGET)
    assert wire is not None
    parsed = executor_pb2.ExecuteRequest.FromString(wire)
    expected = _slow(_template(), inputs)
    assert parsed == expected
    # The empty tensor's data is present, as the slow path sets it.
    assert [m.WhichOneof("payload") for m in parsed.inputs] == ["data"] * 4
    # And the values come back bit for bit.
    assert parsed.inputs[0].data == inputs[0].contiguous().view(torch.uint8).numpy().tobytes()


def test_offset_views_and_grad_tensors_send_their_own_elements():
    base = torch.arange(12, dtype=torch.float32)
    leaf = torch.randn(5, requires_grad=True)
    inputs = [base[3:7], base.view(3, 4)[1], leaf, leaf * 2]
    wire = inline_request_bytes(_template(), inputs, LIMIT, BUDGET)
    assert wire is not None
    parsed = executor_pb2.ExecuteRequest.FromString(wire)
    assert parsed == _slow(_template(), inputs)
    assert torch.equal(torch.frombuffer(bytearray(parsed.inputs[0].data), dtype=torch.float32),
                       torch.tensor([3.0, 4.0, 5.0, 6.0]))


def test_no_inputs_is_the_request_alone():
    wire = inline_request_bytes(_template(), [], LIMIT, BUDGET)
    assert executor_pb2.ExecuteRequest.FromString(wire) == _template()


@pytest.mark.parametrize("make", [
    lambda: torch.randn(4, 6).t(),                        # not contiguous
    lambda: torch.randn(4, 6)[:, ::2],                    # strided
    lambda: torch.randn(3, dtype=torch.complex64).conj(),  # lazily conjugated
    lambda: torch.nn.Parameter(torch.randn(3)),           # a subclass
    lambda: 3.0,                                          # not a tensor
    lambda: torch.zeros(LIMIT // 4 + 1),                  # over the input limit
    lambda: torch._efficientzerotensor(8),                # no memory (data_ptr 0)
], ids=["transposed", "strided", "conj", "parameter", "float", "over-limit", "zerotensor"])
def test_what_it_cannot_write_takes_the_slow_path(make):
    assert inline_request_bytes(_template(), [torch.ones(2), make()], LIMIT, BUDGET) is None


def test_inputs_over_the_request_budget_take_the_slow_path():
    under = [torch.zeros(LIMIT // 4)] * 2   # 2048 bytes
    assert inline_request_bytes(_template(), under, LIMIT, BUDGET) is not None
    over = [torch.zeros(LIMIT // 4)] * 3    # 3072 bytes
    assert inline_request_bytes(_template(), over, LIMIT, BUDGET) is None


def test_a_dtype_kiln_lacks_is_a_value_error():
    with pytest.raises(ValueError, match="not supported"):
        inline_request_bytes(_template(), [torch.zeros(2, dtype=torch.uint16)], LIMIT, BUDGET)
