"""grpc.RpcError → typed KilnError conversion."""

import grpc
import pytest

from kiln import errors
from kiln.errors import raise_for_rpc_error


class FakeRpcError(grpc.RpcError):
    def __init__(self, code, details):
        self._code, self._details = code, details

    def code(self):
        return self._code

    def details(self):
        return self._details


@pytest.mark.parametrize("code,cls", [
    (grpc.StatusCode.INVALID_ARGUMENT, errors.InvalidArgumentError),
    (grpc.StatusCode.NOT_FOUND, errors.NotFoundError),
    (grpc.StatusCode.FAILED_PRECONDITION, errors.FailedPreconditionError),
    (grpc.StatusCode.UNAVAILABLE, errors.UnavailableError),
    (grpc.StatusCode.DEADLINE_EXCEEDED, errors.DeadlineExceededError),
    (grpc.StatusCode.INTERNAL, errors.InternalError),
    (grpc.StatusCode.DATA_LOSS, errors.KilnError),
])
def test_codes_map_to_classes(code, cls):
    with pytest.raises(cls) as info:
        raise_for_rpc_error(FakeRpcError(code, "boom"), "kiln.v1.Executor/Execute", {"x": 1})
    e = info.value
    assert type(e) is cls
    assert e.code == code and e.details == "boom"
    assert e.context == {"rpc": "kiln.v1.Executor/Execute", "x": 1}
    assert "boom" in str(e) and code.name in str(e) and "Executor/Execute" in str(e)
    assert e.__cause__ is None and e.__suppress_context__


def test_internal_during_compile_is_compile_error():
    with pytest.raises(errors.CompileError) as info:
        raise_for_rpc_error(FakeRpcError(grpc.StatusCode.INTERNAL, "llvm died"),
                            "kiln.v1.Compiler/Compile")
    assert isinstance(info.value, errors.InternalError)


def test_all_errors_are_kiln_errors():
    for name in errors.__all__:
        obj = getattr(errors, name)
        if isinstance(obj, type):
            assert issubclass(obj, errors.KilnError)
    assert issubclass(errors.UnsupportedOpError, errors.KilnError)
    assert errors.UnsupportedOpError("x").code is None


def test_real_channel_error_is_converted_once():
    import kiln
    # Nothing listens on this port: the first RPC fails with UNAVAILABLE.
    client = kiln.Client("127.0.0.1:1", timeout=5)
    with pytest.raises(errors.UnavailableError) as info:
        client.devices()
    assert not isinstance(info.value, grpc.RpcError)
    assert info.value.context["rpc"] == "kiln.v1.Devices/ListDevices"
    assert info.value.context["address"] == "127.0.0.1:1"


def test_request_id_is_kept_on_the_typed_error():
    with pytest.raises(errors.InvalidArgumentError) as info:
        raise_for_rpc_error(FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT, "bad (request r-1)"),
                            "kiln.v1.Compiler/Compile", request_id="r-1")
    assert info.value.request_id == "r-1"
    assert errors.KilnError("client-side").request_id is None


def test_rpc_sends_a_fresh_request_id_per_call_or_the_callers():
    from kiln._rpc import REQUEST_ID_KEY, Rpc

    seen = []

    def method(request, timeout=None, metadata=(), wait_for_ready=None):
        seen.append(dict(metadata)[REQUEST_ID_KEY])
        raise FakeRpcError(grpc.StatusCode.NOT_FOUND, "gone")

    rpc = Rpc("127.0.0.1:1", timeout=1, connect_timeout=0.05)
    try:
        for rid in (None, None, "mine"):
            with pytest.raises(errors.NotFoundError) as info:
                rpc.call("kiln.v1.Executor/Execute", method, object(), request_id=rid)
            assert info.value.request_id == seen[-1]
    finally:
        rpc.close()
    assert len(seen[0]) == 32 and int(seen[0], 16) >= 0
    assert seen[0] != seen[1] and seen[2] == "mine"
