"""The client's gRPC channel: stubs plus the one wrapper that turns
grpc.RpcError into typed errors (through kiln.errors.raise_for_rpc_error)."""

from __future__ import annotations

import uuid
from typing import Any, Callable, Iterable, Iterator, Mapping

import grpc

from kiln.credentials import (AUTHORIZATION_KEY, PROTOCOL_KEY, PROTOCOL_VERSION, TlsConfig,
                              is_loopback, resolve_tls, resolve_token)
from kiln.errors import InvalidArgumentError, raise_for_rpc_error
from kiln.v1 import (blobs_pb2_grpc, cache_pb2_grpc, compiler_pb2_grpc,
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


class Rpc:
    """Stubs of the client-facing services over one channel."""

    def __init__(self, address: str, timeout: float | None,
                 tls: TlsConfig | str | bool | None = None, token: str | None = None):
        self.address = address
        self.timeout = timeout
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
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
        try:
            return method(request, timeout=self.timeout if timeout is ... else timeout,
                          metadata=self.metadata(rid))
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
            yield from method(request, timeout=self.timeout, metadata=self.metadata(rid))
        except grpc.RpcError as err:
            raise_for_rpc_error(err, name, {"address": self.address, **(context or {})},
                                request_id=rid)
