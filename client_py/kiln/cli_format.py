"""Pure helpers of the ``kiln`` CLI: size parsing, human-readable output,
and the one mapping from an error to a one-line message plus a hint.

Nothing here talks to a daemon, so the unit tests cover it directly.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

import grpc

from kiln.errors import (CompileError, DeadlineExceededError, FailedPreconditionError,
                         InvalidArgumentError, KilnError, NotFoundError,
                         PermissionDeniedError, UnauthenticatedError, UnavailableError,
                         UnsupportedOpError)

__all__ = ["CliError", "parse_size", "format_bytes", "format_table", "describe_error"]


class CliError(Exception):
    """An expected failure of a CLI command (a missing file, a bad input):
    printed as one line plus a hint, exit code 1, never a traceback."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint


_UNITS = {"": 1, "b": 1,
          "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
          "t": 1000**4, "tb": 1000**4,
          "ki": 1024, "kib": 1024, "mi": 1024**2, "mib": 1024**2, "gi": 1024**3,
          "gib": 1024**3, "ti": 1024**4, "tib": 1024**4}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """'1073741824', '512M', '1.5GiB' -> bytes. SI suffixes are powers of
    1000, IEC ones (Ki, Mi, Gi, Ti) powers of 1024. Raises ValueError."""
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (examples: 1000000, 512M, 2GiB)")
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if value != int(value):
        raise ValueError(f"not a whole number of bytes: {text!r}")
    return int(value)


def format_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'; exact bytes below 1 KiB."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Left-aligned columns separated by two spaces (stable for scripts and tests)."""
    cells = [list(map(str, headers))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                     for row in cells)


def _address_of(err: KilnError) -> str:
    return str(err.context.get("address", "the daemon"))


def describe_error(err: BaseException) -> tuple[str, str]:
    """The one-line message and the hint the CLI prints for an expected error."""
    if isinstance(err, CliError):
        return err.message, err.hint
    if not isinstance(err, KilnError):
        return f"{type(err).__name__}: {err}", ""
    message = str(err)
    address = _address_of(err)
    rpc = str(err.context.get("rpc", "the call"))
    if err.code == grpc.StatusCode.UNIMPLEMENTED:
        hint = f"the kilnd at {address} does not implement {rpc}; upgrade kilnd"
    elif isinstance(err, UnavailableError):
        if "device" in err.details.lower():
            hint = "the daemon has no ready device for that target: `kiln devices` lists them"
        else:
            hint = (f"is kilnd running at {address}? Start it (kilnd --listen {address}) "
                    "or point --address / KILN_ADDRESS at it")
    elif isinstance(err, UnauthenticatedError):
        hint = ("this kilnd requires credentials: --token-file FILE (or KILN_TOKEN / "
                "KILN_TOKEN_FILE), or a client certificate (--tls-cert/--tls-key)")
    elif isinstance(err, PermissionDeniedError):
        hint = "your credentials lack the role this needs; ask the kilnd operator"
    elif isinstance(err, DeadlineExceededError):
        hint = "the call ran past its deadline: raise --timeout (seconds)"
    elif isinstance(err, CompileError):
        hint = ("the compiler failed on a valid graph (a Kiln bug): save it with "
                "`kiln compile MODEL --dump DIR` and reproduce with `kiln-compile DIR/graph.pb`")
    elif isinstance(err, UnsupportedOpError):
        hint = "Kiln cannot represent this model; see client_py/README.md (graph conventions)"
    elif isinstance(err, InvalidArgumentError):
        hint = "the request was rejected as given; the message names what (`kiln devices` lists targets)"
    elif isinstance(err, (NotFoundError, FailedPreconditionError)):
        hint = "the daemon lacks something the request names; compile again to re-upload it"
    else:
        hint = "see the daemon's log for details"
    return message, hint
