"""How the client reaches kilnd securely: TLS (a CA bundle, and a client
certificate for mTLS) and bearer tokens.

``kiln.Client(address, tls=..., token=...)`` takes them directly; otherwise
the environment supplies them:

- ``KILN_TLS_CA``: CA bundle (PEM) kilnd's certificate chains to; setting it
  turns TLS on. ``KILN_TLS_CERT`` and ``KILN_TLS_KEY``: a client certificate
  and its key (its CN names the caller; its O, ``kiln:users`` or
  ``kiln:admins``, gives the role).
- ``KILN_TOKEN``, or ``KILN_TOKEN_FILE`` (a file holding it): a bearer token.

``kiln token new`` makes a token and the line kilnd's ``--auth-tokens`` file
needs for it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import os
import pathlib
import secrets
from typing import Union

import grpc

from kiln.errors import InvalidArgumentError

__all__ = ["TlsConfig", "TOKEN_ROLES", "new_token", "token_grant_line"]

# The metadata key and version kilnd checks (kiln/server/api/AccessPolicy.h).
PROTOCOL_KEY = "kiln-client-protocol"
PROTOCOL_VERSION = "3"
AUTHORIZATION_KEY = "authorization"
TOKEN_ROLES = ("user", "admin", "agent")

PathLike = Union[str, os.PathLike]


@dataclasses.dataclass(frozen=True)
class TlsConfig:
    """TLS settings for a :class:`kiln.Client`.

    Attributes:
        ca: PEM CA bundle kilnd's certificate must chain to (None: the
            system's roots).
        cert, key: PEM client certificate and key (mTLS), both or neither.
        server_name: the name to check kilnd's certificate against, when it
            differs from the address's host.
    """

    ca: PathLike | None = None
    cert: PathLike | None = None
    key: PathLike | None = None
    server_name: str | None = None

    def channel_credentials(self) -> grpc.ChannelCredentials:
        if (self.cert is None) != (self.key is None):
            raise InvalidArgumentError(
                "TlsConfig: cert and key go together (give both or neither)")
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca, "TLS CA bundle") if self.ca else None,
            private_key=_read(self.key, "TLS client key") if self.key else None,
            certificate_chain=_read(self.cert, "TLS client certificate") if self.cert else None)


def _read(path: PathLike, what: str) -> bytes:
    try:
        return pathlib.Path(path).read_bytes()
    except OSError as err:
        raise InvalidArgumentError(f"cannot read the {what} {path}: {err.strerror}") from None


def resolve_tls(tls: TlsConfig | PathLike | bool | None) -> TlsConfig | None:
    """``tls`` as a :class:`TlsConfig`, or None for plaintext.

    None: from the environment (``KILN_TLS_CA`` on means TLS). True: TLS with
    the system's roots. A path: TLS with that CA bundle. False: plaintext.
    """
    if tls is None:
        ca = os.environ.get("KILN_TLS_CA")
        if not ca:
            if os.environ.get("KILN_TLS_CERT") or os.environ.get("KILN_TLS_KEY"):
                raise InvalidArgumentError(
                    "KILN_TLS_CERT/KILN_TLS_KEY need KILN_TLS_CA (TLS is on only with a CA)")
            return None
        return TlsConfig(ca=ca, cert=os.environ.get("KILN_TLS_CERT") or None,
                         key=os.environ.get("KILN_TLS_KEY") or None,
                         server_name=os.environ.get("KILN_TLS_SERVER_NAME") or None)
    if tls is False:
        return None
    if tls is True:
        return TlsConfig()
    if isinstance(tls, TlsConfig):
        return tls
    return TlsConfig(ca=tls)


def resolve_token(token: str | None) -> str | None:
    """``token``, else ``KILN_TOKEN``, else the content of ``KILN_TOKEN_FILE``."""
    if token:
        return token.strip()
    if os.environ.get("KILN_TOKEN"):
        return os.environ["KILN_TOKEN"].strip()
    path = os.environ.get("KILN_TOKEN_FILE")
    if path:
        text = _read(path, "token file (KILN_TOKEN_FILE)").decode().strip()
        if not text:
            raise InvalidArgumentError(f"the token file {path} is empty")
        return text
    return None


def is_loopback(address: str) -> bool:
    """Whether ``host:port`` (or ``[v6]:port``, ``unix:...``) stays on this
    machine, as kilnd decides it (kiln/common/Credentials.h)."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0] if ":" in address else address
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """A fresh bearer token: 256 random bits, hex."""
    return secrets.token_hex(32)


def token_grant_line(name: str, role: str, token: str) -> str:
    """The ``--auth-tokens`` line granting ``token`` to ``name`` with ``role``:
    kilnd keeps only the token's SHA-256."""
    if role not in TOKEN_ROLES:
        raise InvalidArgumentError(f"role {role!r} is not one of {', '.join(TOKEN_ROLES)}")
    # ASCII only, as kilnd's tokens-file parser (str.isalnum takes "é").
    if not name or any(not (c.isascii() and (c.isalnum() or c in "._@-")) for c in name) \
            or len(name) > 128:
        raise InvalidArgumentError(f"name {name!r} is not 1-128 of [A-Za-z0-9._@-]")
    return f"{name} {role} sha256:{hashlib.sha256(token.encode()).hexdigest()}"
