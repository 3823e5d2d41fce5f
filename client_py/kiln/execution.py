"""Execute on the wire: a request's inputs encoded, sent over kilnd's local
socket or gRPC, and the outputs decoded into tensors.

:class:`Executor` is the one place a call's tensors are put on and taken off
the wire. It knows nothing of models: the caller gives it the request (the
executable and its parameter digests) and the input tensors, plus what to do
when the daemon lost the parameter blobs (upload them again, once).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, Sequence

import torch

from kiln._rpc import Rpc
from kiln.blobs import BlobClient
from kiln.credentials import is_loopback
from kiln.errors import FailedPreconditionError, InvalidArgumentError, KilnError
from kiln.inline_request import inline_request_bytes
from kiln.local_execute import LocalExecutor, LocalUnavailable, StaleRequest
from kiln.tensors import (PROTO_TO_DTYPE, HeldTensor, empty_tensor_for, payload_size,
                          set_tensor_type, tensor_bytes, tensor_from_bytes)
from kiln.v1 import executor_pb2, tensor_pb2

__all__ = ["Executor", "Execution", "INLINE_INPUT_LIMIT", "INLINE_REQUEST_BUDGET",
           "StaleRequest"]

#: Execute inputs larger than this travel as blobs, not inline.
INLINE_INPUT_LIMIT = 1024 * 1024
#: Inline inputs of one Execute request stay under this in total, so the
#: request stays under the 4 MiB message limit; the rest go as blobs.
INLINE_REQUEST_BUDGET = 3 * 1024 * 1024

#: Called when the daemon reports missing parameter blobs: uploads them
#: again (the caller holds the tensors). None when it cannot.
Reupload = Callable[[], None]


@dataclasses.dataclass
class Execution:
    """One Execute: the response, the outputs, and where the time went."""

    response: executor_pb2.ExecuteResponse
    outputs: list[torch.Tensor]
    #: "local" (kilnd's local socket, memfds), "direct" (a direct channel
    #: to the device's agent) or "grpc".
    transport: str
    #: Seconds writing inputs (memfds, blobs) and reading blob outputs.
    upload: float = 0.0
    download: float = 0.0


class Executor:
    """Runs Execute requests over the local socket when it can, else gRPC.

    Args:
        local: use kilnd's local socket (True), never (False), or when the
            address is loopback unless ``KILN_LOCAL_EXECUTE=0`` (None).
        direct: on the local socket, send a model's repeated calls over a
            direct channel to its device's agent (True), never (False), or
            unless ``KILN_DIRECT_EXECUTE=0`` (None).
    """

    def __init__(self, rpc: Rpc, blobs: BlobClient, local: bool | None = None,
                 direct: bool | None = None):
        self._rpc = rpc
        self._blobs = blobs
        if local is None:
            local = (os.environ.get("KILN_LOCAL_EXECUTE", "1") != "0"
                     and is_loopback(rpc.address))
        if direct is None:
            direct = os.environ.get("KILN_DIRECT_EXECUTE", "1") != "0"
        self._local = LocalExecutor(rpc, blobs, direct) if local else None

    @property
    def local(self) -> bool:
        """Whether calls go over kilnd's local socket (decided on first use)."""
        return self._local is not None and self._local.available()

    @property
    def local_executor(self) -> LocalExecutor | None:
        """The local-socket transport (None when this executor never uses
        it); its ``unavailable_reason`` says why calls go over gRPC."""
        return self._local

    def close(self) -> None:
        if self._local is not None:
            self._local.close()

    def run(self, request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
            context: dict, reupload: Reupload | None = None,
            still_current: Callable[[], bool] | None = None) -> Execution:
        """Runs ``request`` (executable and parameters set) on ``inputs``.

        ``still_current()`` says whether the request still matches the
        caller's state. Over the local socket it runs while the device
        works; over gRPC, before sending. False raises :class:`StaleRequest`
        (the reply, if any, is dropped): the caller builds a new request."""
        if self.local:
            try:
                return self._run_local(request, inputs, context, reupload, still_current)
            except LocalUnavailable:
                pass  # the socket is full or gone: this call over gRPC
        if still_current is not None and not still_current():
            raise StaleRequest()
        return self._run_grpc(request, inputs, context, reupload)

    # --- gRPC -------------------------------------------------------------

    def _run_grpc(self, request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
                  context: dict, reupload: Reupload | None) -> Execution:
        # A call whose inputs all go inline is written as bytes directly
        # (kiln.inline_request); the rest build the message.
        try:
            wire = inline_request_bytes(request, inputs, INLINE_INPUT_LIMIT,
                                        INLINE_REQUEST_BUDGET)
        except ValueError:
            wire = None  # a dtype Kiln lacks: the slow path names the input
        if wire is None:
            upload = self._encode_inputs(request, inputs, context)
            payload, method = request, self._rpc.executor.Execute
        else:
            upload = 0.0
            payload, method = wire, self._rpc.execute_bytes
        try:
            response = self._call(payload, method, context)
        except FailedPreconditionError:
            # The daemon lost blobs we believed it held (e.g. it restarted on
            # a fresh store): upload again, once, when we hold the tensors.
            blob_inputs = [t for t, m in zip(inputs, request.inputs)
                           if m.WhichOneof("payload") == "blob"]
            if reupload is None and not blob_inputs:
                raise
            self._blobs.forget()
            if reupload is not None:
                reupload()
            for t in blob_inputs:  # the same bytes: the same names
                self._blobs.send_in_transit(t)
            response = self._call(payload, method, context)
        outputs, download = [], 0.0
        for i, out in enumerate(response.outputs):
            t0 = time.perf_counter()
            outputs.append(self.decode_output(i, out, context))
            download += time.perf_counter() - t0
        return Execution(response, outputs, "grpc", upload, download)

    def _call(self, payload: executor_pb2.ExecuteRequest | bytes,
              method: Callable[..., executor_pb2.ExecuteResponse],
              context: dict) -> executor_pb2.ExecuteResponse:
        return self._rpc.call("kiln.v1.Executor/Execute", method, payload, context=context)

    def _encode_inputs(self, request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
                       context: dict) -> float:
        """Adds Execute inputs to ``request`` in place (no message copies):
        small ones inline, the rest as blobs. Returns the upload seconds."""
        upload, inline_total = 0.0, 0
        for i, t in enumerate(inputs):
            nbytes = t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0
            as_blob = nbytes > INLINE_INPUT_LIMIT or inline_total + nbytes > INLINE_REQUEST_BUDGET
            upload += self.encode_input(request.inputs.add(), i, t, context, as_blob)
            if not as_blob:
                inline_total += nbytes
        return upload

    def encode_input(self, msg: tensor_pb2.Tensor, i: int, t: Any, context: dict,
                     as_blob: bool) -> float:
        """Fills ``msg`` with input ``i``: inline bytes, or a blob (uploaded
        as in transit). Returns the upload seconds."""
        if isinstance(t, HeldTensor):
            set_tensor_type(msg.type, t.dtype, t.shape)
            msg.held = t.handle
            return 0.0
        if not isinstance(t, torch.Tensor):
            raise InvalidArgumentError(f"input {i} is a {type(t).__name__}; Kiln inputs are "
                                       "tensors", context=context)
        try:
            set_tensor_type(msg.type, t.dtype, t.shape)
        except ValueError as e:
            raise InvalidArgumentError(f"input {i}: {e}", context=context) from None
        if as_blob:
            t0 = time.perf_counter()
            msg.blob.CopyFrom(self._blobs.send_in_transit(t))
            return time.perf_counter() - t0
        msg.data = tensor_bytes(t)
        return 0.0

    def decode_output(self, i: int, out: tensor_pb2.Tensor, context: dict
                      ) -> torch.Tensor | HeldTensor:
        """Output ``i`` of a response as a tensor (blob outputs read into
        it), or a :class:`HeldTensor` for one the device kept."""
        dtype = PROTO_TO_DTYPE.get(out.type.dtype)
        if dtype is None:
            raise KilnError(f"output {i} has unknown dtype {out.type.dtype}", context=context)
        try:
            if out.WhichOneof("payload") == "held":
                return HeldTensor.from_output(out, dtype)
            if out.WhichOneof("payload") == "blob":
                # Straight into the output tensor's memory, once its size is
                # known to match the blob's (no allocation from a bad shape).
                expected = payload_size(dtype, out.type.shape)
                if expected != out.blob.size_bytes:
                    raise ValueError(f"tensor payload has {out.blob.size_bytes} bytes, "
                                     f"expected {expected} for {dtype} {list(out.type.shape)}")
                t, view = empty_tensor_for(dtype, out.type.shape)
                self._blobs.read_into(out.blob, view, handed_out=True)
                return t
            return tensor_from_bytes(out.data, dtype, out.type.shape)
        except ValueError as e:
            raise KilnError(f"output {i}: {e}", context=context) from None

    # --- the local socket -------------------------------------------------

    def _run_local(self, request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
                   context: dict, reupload: Reupload | None,
                   still_current: Callable[[], bool] | None) -> Execution:
        assert self._local is not None

        def encode(msg: tensor_pb2.Tensor, i: int, t: Any, as_blob: bool = False) -> None:
            self.encode_input(msg, i, t, context, as_blob)

        try:
            result = self._local.execute(request, inputs, context, encode, still_current)
        except FailedPreconditionError:
            # As over gRPC: the daemon lost the parameters; upload them once.
            if reupload is None:
                raise
            self._blobs.forget()
            reupload()
            result = self._local.execute(request, inputs, context, encode)
        return Execution(result.response, result.outputs,
                         "direct" if result.direct else "local", result.encode_s, 0.0)
