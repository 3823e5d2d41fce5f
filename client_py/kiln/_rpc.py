"""The client's gRPC channel: stubs plus the one wrapper that turns
grpc.RpcError into typed errors (through kiln.errors.raise_for_rpc_error).

The channel rides out a kilnd restart: calls wait for the connection
(``wait_for_ready``) up to ``connect_timeout`` seconds, and a retry policy
repeats a call that failed UNAVAILABLE in transport (every Kiln RPC is
idempotent: content-addressed writes, compiles and pure executions). kilnd
marks its own UNAVAILABLE answers (no device, shutting down) as not worth
retrying (``grpc-retry-pushback-ms: -1``), so they come back at once.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from typing import Any, Callable, Iterable, Iterator, Mapping

import grpc

from kiln.credentials import (AUTHORIZATION_KEY, PROTOCOL_KEY, PROTOCOL_VERSION, TlsConfig,
                              is_loopback, resolve_tls, resolve_token)
from kiln.errors import InvalidArgumentError, raise_for_rpc_error
from kiln.v1 import (blobs_pb2_grpc, cache_pb2_grpc, compiler_pb2_grpc, daemon_pb2_grpc,
                     devices_pb2_grpc, executor_pb2_grpc)

# The metadata key kilnd reads the request id from; it logs the id on every
# line about the call, passes it to the agent and ends error messages with it.
REQUEST_ID_KEY = "kiln-request-id"


def new_request_id() -> str:
    """A fresh request id: a random UUID4 as 32 hex digits."""
    return uuid.uuid4().hex


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
        self.blobs = blobs_pb2_grpc.BlobsStub(self.channel)
        self.devices = devices_pb2_grpc.DevicesStub(self.channel)
        self.cache = cache_pb2_grpc.CacheStub(self.channel)
        self.daemon = daemon_pb2_grpc.DaemonStub(self.channel)
        # The channel's state, followed so that a call waits for a
        # connection only while there is none (a flag read otherwise).
        self._ready = threading.Event()
        self.channel.subscribe(self._on_state, try_to_connect=True)

    def _on_state(self, state: grpc.ChannelConnectivity) -> None:
        if state == grpc.ChannelConnectivity.READY:
            self._ready.set()
        else:
            self._ready.clear()

    def _wait_for_ready(self) -> bool:
        """Whether the next call may wait for the connection: True once the
        channel is (again) connected within ``connect_timeout``; False when
        it is not, so that the call fails at once with gRPC's reason (a
        refused connection, a name that does not resolve)."""
        return self._ready.is_set() or self._ready.wait(self.connect_timeout)

    def close(self) -> None:
        self.channel.unsubscribe(self._on_state)
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
        try:
            return method(request, timeout=self.timeout if timeout is ... else timeout,
                          metadata=self.metadata(rid), wait_for_ready=self._wait_for_ready())
        except grpc.RpcError as err:
            raise_for_rpc_error(err, name, {"address": self.address, **(context or {})},
                                request_id=rid)

    def stream(self, name: str, method: Callable[..., Iterable[Any]], request: Any,
               context: Mapping[str, object] | None = None,
               request_id: str | None = None) -> Iterator[Any]:
        """Calls a server-streaming method; errors surface while iterating.
        Request ids as for :meth:`call`."""
        rid = request_id or new_request_id()
        try:
            yield from method(request, timeout=self.timeout, metadata=self.metadata(rid),
                              wait_for_ready=self._wait_for_ready())
        except grpc.RpcError as err:
            raise_for_rpc_error(err, name, {"address": self.address, **(context or {})},
                                request_id=rid)
