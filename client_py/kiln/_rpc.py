"""The client's gRPC channel: stubs plus the one wrapper that turns
grpc.RpcError into typed errors (through kiln.errors.raise_for_rpc_error).

The channel rides out a kilnd restart: a gRPC retry policy repeats a call
that failed UNAVAILABLE in transport; a unary call that still failed so
waits for the channel to be ready (gRPC's channel-level wait for ready,
``grpc.channel_ready_future``, which also makes an idle channel reconnect)
up to ``connect_timeout`` seconds, once, and is sent again; and calls after
such a failure wait the same way first (every Kiln RPC is idempotent:
content-addressed writes, compiles and pure executions). The per-call
``wait_for_ready`` flag is not used: it would hold a call for its whole
deadline (300 s by default, forever without one) when kilnd stays down.
kilnd marks its own UNAVAILABLE answers (no device, shutting down) as not
worth retrying (``grpc-retry-pushback-ms: -1``), so they come back at once;
a client that should fail over to another replica during a rolling restart
does that itself.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable, Iterator, Mapping

import grpc

from kiln.credentials import (AUTHORIZATION_KEY, PROTOCOL_KEY, PROTOCOL_VERSION, TlsConfig,
                              is_loopback, resolve_tls, resolve_token)
from kiln.errors import InvalidArgumentError, raise_for_rpc_error
from kiln.v1 import (blobs_pb2_grpc, cache_pb2_grpc, compiler_pb2_grpc, daemon_pb2_grpc,
                     devices_pb2_grpc, executor_pb2, executor_pb2_grpc)

# The metadata key kilnd reads the request id from; it logs the id on every
# line about the call, passes it to the agent and ends error messages with it.
REQUEST_ID_KEY = "kiln-request-id"


def new_request_id() -> str:
    """A fresh request id: a random UUID4 as 32 hex digits (what
    ``uuid.uuid4().hex`` gives, without building a UUID object per call)."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    return b.hex()


# Kiln keeps every message under 4 MiB; a little headroom for headers and for
# inline outputs right at the limit.
MAX_MESSAGE_BYTES = 8 * 1024 * 1024

#: Seconds a call waits for the channel to (re)connect before failing
#: UNAVAILABLE (``KILN_CONNECT_TIMEOUT`` overrides it); the retry policy's
#: backoff adds about 3 s more. A kilnd restart takes a few seconds.
DEFAULT_CONNECT_TIMEOUT = 5.0

_SERVICES = ("Compiler", "Executor", "Blobs", "Devices", "Cache", "Daemon")

#: gRPC's retry policy for every Kiln service: up to 5 attempts on
#: UNAVAILABLE, backing off from 0.2 s to 2 s.
SERVICE_CONFIG = json.dumps({
    "methodConfig": [{
        "name": [{"service": f"kiln.v1.{s}"} for s in _SERVICES],
        "retryPolicy": {
            "maxAttempts": 5,
            "initialBackoff": "0.2s",
            "maxBackoff": "2s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        },
    }],
})


def connect_timeout_default() -> float:
    value = os.environ.get("KILN_CONNECT_TIMEOUT")
    if not value:
        return DEFAULT_CONNECT_TIMEOUT
    try:
        return max(0.0, float(value))
    except ValueError:
        raise InvalidArgumentError(f"KILN_CONNECT_TIMEOUT={value!r} is not a number of "
                                   "seconds") from None


def _kilnd_said_unavailable(err: grpc.RpcError) -> bool:
    """Whether an UNAVAILABLE came from kilnd itself (no device, shutting
    down: it sends a negative retry pushback) rather than from transport."""
    try:
        trailers = err.trailing_metadata() or ()
    except Exception:  # not a call error (a test double)
        return False
    return any(k == "grpc-retry-pushback-ms" and str(v).startswith("-") for k, v in trailers)


class Rpc:
    """Stubs of the client-facing services over one channel."""

    def __init__(self, address: str, timeout: float | None,
                 tls: TlsConfig | str | bool | None = None, token: str | None = None,
                 connect_timeout: float | None = None):
        self.address = address
        self.timeout = timeout
        self.connect_timeout = (connect_timeout_default() if connect_timeout is None
                                else connect_timeout)
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.enable_retries", 1),
            ("grpc.service_config", SERVICE_CONFIG),
            # Retries replay the request from a buffer: room for the largest.
            ("grpc.per_rpc_retry_buffer_size", MAX_MESSAGE_BYTES),
        ]
        self.tls = resolve_tls(tls)
        # Refused before any channel exists (nothing is left open).
        token = resolve_token(token)
        if token and self.tls is None and not is_loopback(address):
            raise InvalidArgumentError(
                f"a token would travel in the clear to {address}, which is not loopback: "
                "give tls= (or KILN_TLS_CA) too")
        if self.tls is None:
            self.channel = grpc.insecure_channel(address, options=options)
        else:
            if self.tls.server_name:
                options.append(("grpc.ssl_target_name_override", self.tls.server_name))
            self.channel = grpc.secure_channel(address, self.tls.channel_credentials(),
                                               options=options)
        # Sent as metadata on every call (not as gRPC call credentials, which
        # plaintext loopback channels refuse).
        self._metadata: tuple[tuple[str, str], ...] = ((PROTOCOL_KEY, PROTOCOL_VERSION),)
        if token:
            self._metadata += ((AUTHORIZATION_KEY, f"Bearer {token}"),)
        self.compiler = compiler_pb2_grpc.CompilerStub(self.channel)
        self.executor = executor_pb2_grpc.ExecutorStub(self.channel)
        #: Executor.Execute taking the request's wire bytes
        #: (kiln.inline_request), not a message.
        self.execute_bytes = self.channel.unary_unary(
            "/kiln.v1.Executor/Execute", request_serializer=None,
            response_deserializer=executor_pb2.ExecuteResponse.FromString)
        self.blobs = blobs_pb2_grpc.BlobsStub(self.channel)
        self.devices = devices_pb2_grpc.DevicesStub(self.channel)
        self.cache = cache_pb2_grpc.CacheStub(self.channel)
        self.daemon = daemon_pb2_grpc.DaemonStub(self.channel)
        # False after a transport failure, until the channel is ready again:
        # a flag, so that a call on a healthy channel waits for nothing. It
        # starts True: a first call connects the channel itself (a call on a
        # channel still connecting waits for that attempt), and waiting for
        # readiness up front would leave gRPC polling the channel's state
        # when a short-lived client closes it ("Channel closed!" on stderr).
        self._connected = True

    def _await_connection(self) -> bool:
        """Waits up to ``connect_timeout`` for the channel to be ready,
        asking it to (re)connect. False when it did not: the call then fails
        with gRPC's reason (a refused connection, a name that does not
        resolve) after the retry policy's attempts."""
        if self.connect_timeout <= 0:
            return False
        try:
            grpc.channel_ready_future(self.channel).result(timeout=self.connect_timeout)
        except grpc.FutureTimeoutError:
            return False
        self._connected = True
        return True

    def _transport_failed(self, err: grpc.RpcError) -> bool:
        failed = (getattr(err, "code", lambda: None)() == grpc.StatusCode.UNAVAILABLE
                  and not _kilnd_said_unavailable(err))
        if failed:
            self._connected = False
        return failed

    def close(self) -> None:
        self.channel.close()

    def metadata(self, request_id: str) -> tuple[tuple[str, str], ...]:
        """What every call carries: its request id, the client protocol
        version and the bearer token (when there is one)."""
        return ((REQUEST_ID_KEY, request_id),) + self._metadata

    def call(self, name: str, method: Callable[..., Any], request: Any,
             context: Mapping[str, object] | None = None,
             timeout: float | None = ..., request_id: str | None = None) -> Any:
        """Calls a unary-response method (unary or client-streaming).

        The call carries ``request_id`` (a fresh one when None) as
        ``kiln-request-id`` metadata; a failure's typed error has it as
        ``.request_id``."""
        rid = request_id or new_request_id()
        waited = not self._connected and self._await_connection()
        deadline = self.timeout if timeout is ... else timeout
        try:
            return method(request, timeout=deadline, metadata=self.metadata(rid))
        except grpc.RpcError as err:
            failure = err
        # kilnd went away under a connected channel and the retry policy's
        # attempts ran out: wait for it to come back, once, and send again
        # (a message or its bytes; a client stream is consumed, so it is
        # not resent).
        resendable = isinstance(request, bytes) or hasattr(request, "SerializeToString")
        if self._transport_failed(failure) and resendable and not waited and \
                self._await_connection():
            try:
                return method(request, timeout=deadline, metadata=self.metadata(rid))
            except grpc.RpcError as err:
                self._transport_failed(err)
                failure = err
        raise_for_rpc_error(failure, name, {"address": self.address, **(context or {})},
                            request_id=rid)

    def call_once(self, name: str, method: Callable[..., Any], request: Any,
                  timeout: float) -> Any:
        """``call`` without waiting for kilnd to come back: one attempt,
        bounded by ``timeout`` (for work that must not hold up an exit)."""
        rid = new_request_id()
        try:
            return method(request, timeout=timeout, metadata=self.metadata(rid))
        except grpc.RpcError as err:
            raise_for_rpc_error(err, name, {"address": self.address}, request_id=rid)

    def stream(self, name: str, method: Callable[..., Iterable[Any]], request: Any,
               context: Mapping[str, object] | None = None,
               request_id: str | None = None) -> Iterator[Any]:
        """Calls a server-streaming method; errors surface while iterating.
        Request ids as for :meth:`call`."""
        rid = request_id or new_request_id()
        if not self._connected:
            self._await_connection()
        try:
            yield from method(request, timeout=self.timeout, metadata=self.metadata(rid))
        except grpc.RpcError as err:
            self._transport_failed(err)
            raise_for_rpc_error(err, name, {"address": self.address, **(context or {})},
                                request_id=rid)
