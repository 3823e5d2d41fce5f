"""What to do about an error: the one-line hint every :class:`kiln.KilnError`
carries (``err.hint``), in Python and in the ``kiln`` CLI alike.

A hint is chosen from the status code *and* what the message says, because
one code covers different causes: UNIMPLEMENTED is an old kilnd lacking an
RPC, or ops the target cannot compile; UNAVAILABLE is a host name that does
not resolve, a daemon that is not running, or a target no agent serves.
Pure functions of (code name, message, context); nothing here talks to a
daemon.
"""

from __future__ import annotations

import re
from typing import Mapping

__all__ = ["hint_for"]

# Where a hint names a setting, it gives both spellings.
_ADDRESS = "Client(address) / KILN_ADDRESS, or kiln --address"


def _host_of(address: str) -> str:
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return host.strip("[]") or address


def _unimplemented(details: str, address: str, rpc: str) -> str:
    lowered = details.lower()
    if "method not found" in lowered or "unknown service" in lowered or \
            "unknown method" in lowered or "method not implemented" in lowered:
        return (f"the kilnd at {address} does not implement {rpc}: it is older than this "
                "client; upgrade kilnd (kilnd --version; kiln --version shows both)")
    if "placement.fallback" in details or "cannot compile" in lowered or \
            "not supported" in lowered or "unsupported" in lowered:
        return ("the target cannot compile the ops named: compile with fallback=\"cpu\" "
                "(kiln compile --fallback cpu) to run them on the host CPU, or choose "
                "another target (kiln devices lists them)")
    return "Kiln does not support this yet; the message says what (see client_py/README.md)"


def _unavailable(details: str, address: str) -> str:
    lowered = details.lower()
    if any(k in lowered for k in ("dns resolution failed", "name or service not known",
                                  "could not resolve", "errors resolving",
                                  "domain name not found", "address lookup failed")):
        return (f"the host '{_host_of(address)}' does not resolve: check the address "
                f"({_ADDRESS})")
    m = re.search(r"no agent serving device kind '([^']+)'", details)
    if m:
        kind = m.group(1)
        if kind == "riscv64":
            return ("nothing on this kilnd runs riscv64: start kilnd with --local-agents "
                    "cpu,qemu (riscv64 runs under QEMU), or connect a kiln-agent-qemu to it")
        return (f"nothing on this kilnd runs '{kind}': connect an agent that serves it "
                "(device_agents/README.md), or choose a target kiln devices lists")
    if "no device of kind" in lowered or "no healthy device" in lowered or \
            "no other device" in lowered:
        return ("no device of that target is ready right now (an agent restarting?): "
                "retry, and see kiln devices")
    if "shutting down" in lowered or "draining" in lowered:
        return "this kilnd is shutting down: retry once it is back, or use another replica"
    return (f"is kilnd running at {address}? Start it (kilnd --listen {address}) or point "
            f"the client at it ({_ADDRESS})")


def _invalid_argument(details: str) -> str:
    if re.search(r"(input|output) \d+ \('[^']*'\): expected ", details) or \
            re.search(r"takes \d+ inputs, got \d+", details):
        return ("the executable was compiled for other inputs: call it with the shapes and "
                "dtypes it was exported with, or compile it again for these (torch.compile "
                "with backend=\"kiln\" compiles once per input signature)")
    if "unknown target" in details.lower() or "target '" in details.lower():
        return "kiln devices lists the targets this daemon has devices for"
    if "token would travel in the clear" in details:
        return "give the CA kilnd's certificate chains to (tls= or KILN_TLS_CA)"
    return "the request was rejected as given; the message names what is wrong"


def hint_for(code: str | None, details: str, context: Mapping[str, object]) -> str:
    """The hint for an error with gRPC status ``code`` (its name, e.g.
    "UNAVAILABLE"; None for client-side errors), message ``details`` and
    ``context`` (rpc, address, executable...)."""
    address = str(context.get("address", "the daemon's address"))
    rpc = str(context.get("rpc", "that call"))
    if code == "UNIMPLEMENTED":
        return _unimplemented(details, address, rpc)
    if code == "UNAVAILABLE":
        return _unavailable(details, address)
    if code == "INVALID_ARGUMENT":
        return _invalid_argument(details)
    if code == "NOT_FOUND":
        if "executable" in details:
            return ("kilnd no longer has this executable (restarted with an empty cache?): "
                    "compile the model again; a CompiledModel recompiles once by itself")
        return "kilnd lacks what the request names; the message says what"
    if code == "FAILED_PRECONDITION":
        if "not in the store" in details:
            return ("kilnd's store lost blobs this request names (emptied or evicted): "
                    "compile again, which uploads them")
        if "features" in details or "kernel librar" in details:
            return ("no device can run this code: compile for a CPU the devices have "
                    "(options={'cpu': ...}), see kiln devices")
        if "protocol" in details:
            return "the client and kilnd speak different protocols: upgrade the older one"
        return "kilnd cannot do this in its current state; the message says why"
    if code == "UNAUTHENTICATED":
        return ("this kilnd requires credentials: a token (Client(token=...), KILN_TOKEN, "
                "KILN_TOKEN_FILE or kiln --token-file) or a client certificate")
    if code == "PERMISSION_DENIED":
        return "your credentials lack the role this needs; ask the kilnd operator"
    if code == "DEADLINE_EXCEEDED":
        return "the call ran past its deadline: raise it (Client(timeout=...), kiln --timeout)"
    if code == "RESOURCE_EXHAUSTED":
        return ("a limit of kilnd's was reached (the message names it: --max-blob-bytes, "
                "--blob-quota-bytes, a full local socket)")
    if code == "INTERNAL":
        return "kilnd or a device failed on a valid request: find the request id in kilnd's log"
    if code is None:
        return ""
    return "see kilnd's log (grep it for the request id)"
