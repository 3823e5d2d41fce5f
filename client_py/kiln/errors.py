"""Typed exceptions of the Kiln client.

Every failed RPC becomes exactly one of these, in exactly one place:
:func:`raise_for_rpc_error`. Callers catch the class for the condition they can
act on (``NotFoundError`` → recompile, ``UnavailableError`` → retry later) and
read ``.code`` (a :class:`grpc.StatusCode`, or ``None`` for client-side errors),
``.details`` (the server's message, verbatim), ``.context`` (what the client
was doing: the RPC, the target, the executable digest...), ``.request_id``
(the id the call carried as ``kiln-request-id``: kilnd's log lines about the
request carry it too) and ``.hint`` (what to do about it, from
:mod:`kiln.error_hints`). ``str(err)`` is one line: the message, then the hint.
"""

from __future__ import annotations

from typing import Mapping, NoReturn

import grpc

from kiln.error_hints import hint_for

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
        hint: what to do about it, one sentence ("" when there is nothing
            to add).
        message: the error without its hint (what the CLI prints first).
    """

    #: The hint of a client-side error of this class with none of its own.
    default_hint = ""

    def __init__(self, details: str, *, code: grpc.StatusCode | None = None,
                 context: Mapping[str, object] | None = None,
                 request_id: str | None = None, hint: str | None = None):
        self.code = code
        self.details = details
        self.context = dict(context or {})
        self.request_id = request_id
        if hint is None:
            hint = self.default_hint or hint_for(code.name if code is not None else None,
                                                 details, self.context)
        self.hint = hint
        super().__init__(self._format())

    @property
    def message(self) -> str:
        """The code, message and context on one line, without the hint."""
        head = " ".join(self.details.split())
        if self.code is not None:
            head = f"[{self.code.name}] {head}"
        if self.context:
            ctx = ", ".join(f"{k}={v}" for k, v in self.context.items())
            head = f"{head} ({ctx})"
        return head

    def _format(self) -> str:
        return f"{self.message}; hint: {self.hint}" if self.hint else self.message


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

    default_hint = ("the compiler failed on a valid graph (a Kiln bug): save it with "
                    "kiln compile MODEL --dump DIR and reproduce with kiln-compile DIR/graph.pb")


class UnimplementedError(KilnError):
    """The daemon understood the request but does not support it yet (for
    example an ATen op Kiln does not lower)."""


class UnsupportedOpError(KilnError):
    """Client-side: the graph contains something Kiln cannot serialise
    (a non-ATen call, a scalar-valued op, a symbolic shape, an unsupported
    dtype). The message names the FX node."""

    default_hint = ("Kiln cannot represent this part of the model; see client_py/README.md "
                    "(graph conventions); with torch.compile, fallback=\"eager\" runs such "
                    "a graph in PyTorch")


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
        super().__init__(details, context=context,
                         hint="check the op named with kiln.get_mlir(model, stage=\"aten\"); "
                              "report it as a Kiln bug with the verification report")


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
