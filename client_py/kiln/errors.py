"""Typed exceptions of the Kiln client.

Every failed RPC becomes exactly one of these, in exactly one place:
:func:`raise_for_rpc_error`. Callers catch the class for the condition they can
act on (``NotFoundError`` → recompile, ``UnavailableError`` → retry later) and
read ``.code`` (a :class:`grpc.StatusCode`, or ``None`` for client-side errors),
``.details`` (the server's message, verbatim), ``.context`` (what the client
was doing: the RPC, the target, the executable digest...) and ``.request_id``
(the id the call carried as ``kiln-request-id``: kilnd's log lines about the
request carry it too).
"""

from __future__ import annotations

from typing import Mapping, NoReturn

import grpc

__all__ = [
    "KilnError",
    "InvalidArgumentError",
    "NotFoundError",
    "FailedPreconditionError",
    "UnavailableError",
    "DeadlineExceededError",
    "UnauthenticatedError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "InternalError",
    "CompileError",
    "UnsupportedOpError",
    "VerificationError",
    "raise_for_rpc_error",
    "raise_for_status_code",
]


class KilnError(Exception):
    """Base of every Kiln error.

    Attributes:
        code: the gRPC status code, or None when the client raised it itself.
        details: the server's (or client's) message, for a person.
        context: what the request was (rpc name, target, digests...).
        request_id: the ``kiln-request-id`` the failed call carried (None for
            client-side errors); grep kilnd's log for it.
    """

    def __init__(self, details: str, *, code: grpc.StatusCode | None = None,
                 context: Mapping[str, object] | None = None,
                 request_id: str | None = None):
        self.code = code
        self.details = details
        self.context = dict(context or {})
        self.request_id = request_id
        super().__init__(self._format())

    def _format(self) -> str:
        head = self.details
        if self.code is not None:
            head = f"[{self.code.name}] {head}"
        if self.context:
            ctx = ", ".join(f"{k}={v}" for k, v in self.context.items())
            head = f"{head} ({ctx})"
        return head


class InvalidArgumentError(KilnError):
    """The request was malformed: unknown op, bad graph, wrong input shape/dtype."""


class NotFoundError(KilnError):
    """Something named by digest does not exist (e.g. an unknown executable)."""


class FailedPreconditionError(KilnError):
    """The request is valid but the store lacks something it needs (a blob)."""


class UnavailableError(KilnError):
    """The daemon, or a device of the target, cannot be reached right now."""


class DeadlineExceededError(KilnError):
    """The request ran past its deadline (``Client(timeout=...)``)."""


class UnauthenticatedError(KilnError):
    """kilnd requires credentials and the call had none, or a token it does
    not accept (``Client(token=...)``, ``KILN_TOKEN``)."""


class PermissionDeniedError(KilnError):
    """The caller is known but its role may not do this (e.g. cache GC, which
    needs the admin role)."""


class ResourceExhaustedError(KilnError):
    """A limit was reached (a blob larger than kilnd's --max-blob-bytes)."""


class InternalError(KilnError):
    """The server or a device failed on a valid request."""


class CompileError(InternalError):
    """The compiler failed on a valid graph (INTERNAL from Compiler.Compile)."""


class UnimplementedError(KilnError):
    """The daemon understood the request but does not support it yet (for
    example a tensor with a zero-sized dimension)."""


class UnsupportedOpError(KilnError):
    """Client-side: the graph contains something Kiln cannot serialise
    (a non-ATen call, a scalar-valued op, a symbolic shape, an unsupported
    dtype). The message names the FX node."""


class VerificationError(KilnError):
    """Client-side, from ``verify=True``: the executable's outputs differ from
    the reference (:mod:`kiln.reference`) beyond the tolerances of
    :mod:`kiln.verify`.

    Attributes:
        node: first output name of the first node whose result diverges.
        op: that node's op ("aten.gelu.default").
        index: the node's index in the graph's topological order.
        output: the diverging value with the largest error.
        max_abs_error, max_rel_error: its error magnitudes.
        report: the :class:`kiln.verify.VerificationReport` (probes, timings).
    """

    def __init__(self, details: str, *, node: str = "", op: str = "", index: int = -1,
                 output: str = "", max_abs_error: float = 0.0, max_rel_error: float = 0.0,
                 report: object = None, context: Mapping[str, object] | None = None):
        self.node = node
        self.op = op
        self.index = index
        self.output = output
        self.max_abs_error = max_abs_error
        self.max_rel_error = max_rel_error
        self.report = report
        super().__init__(details, context=context)


_BY_CODE: dict[grpc.StatusCode, type[KilnError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.INTERNAL: InternalError,
    grpc.StatusCode.UNIMPLEMENTED: UnimplementedError,
}


def error_class_for(code: grpc.StatusCode | None, rpc: str = "") -> type[KilnError]:
    """The exception class for a status code from ``rpc`` ("kiln.v1.Compiler/Compile")."""
    if code == grpc.StatusCode.INTERNAL and rpc.endswith("Compiler/Compile"):
        return CompileError
    return _BY_CODE.get(code, KilnError)


_CODE_BY_NUMBER: dict[int, grpc.StatusCode] = {c.value[0]: c for c in grpc.StatusCode}


def raise_for_status_code(number: int, details: str, rpc: str,
                          context: Mapping[str, object] | None = None,
                          request_id: str | None = None) -> NoReturn:
    """The typed :class:`KilnError` for a status that arrived as a
    google.rpc.Code number (kilnd's local socket replies with those)."""
    code = _CODE_BY_NUMBER.get(number, grpc.StatusCode.UNKNOWN)
    ctx = {"rpc": rpc, **(context or {})}
    raise error_class_for(code, rpc)(details or f"{code.name} with no message", code=code,
                                     context=ctx, request_id=request_id)


def raise_for_rpc_error(err: grpc.RpcError, rpc: str,
                        context: Mapping[str, object] | None = None,
                        request_id: str | None = None) -> NoReturn:
    """Converts a :class:`grpc.RpcError` into its typed :class:`KilnError`.

    The one place in the client where that conversion happens. The gRPC
    exception is not chained (``from None``): its repr repeats the message and
    adds nothing a user can act on.
    """
    code = err.code() if hasattr(err, "code") else None
    details = err.details() if hasattr(err, "details") else None
    if not details:
        details = str(err) or "RPC failed with no message"
    ctx = {"rpc": rpc, **(context or {})}
    raise error_class_for(code, rpc)(details, code=code, context=ctx,
                                     request_id=request_id) from None
