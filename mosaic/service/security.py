"""Who may use the API: the loopback rule, token files and the bearer check.

The server binds to loopback by default; any other address requires a token
file, because the API categorizes whatever bytes it is sent. Tokens are
compared in constant time; the ``Bearer`` scheme name is case-insensitive
(RFC 7235).
"""

from __future__ import annotations

import ipaddress
import os
import stat
from dataclasses import dataclass

LOOPBACK_NAMES = ("localhost",)
OPEN_PATHS = ("/healthz",)  # answer without a token: load balancers probe it


def is_loopback(host: str) -> bool:
    """True for loopback literals and ``localhost``; a host name could resolve anywhere."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: str | None) -> str | None:
    """The bearer token in ``path`` (surrounding whitespace ignored); an empty file is an error."""
    if path is None:
        return None
    with open(path, encoding="utf-8") as fh:
        token = fh.read().strip()
    if not token:
        raise ValueError(f"{path} holds no token")
    return token


@dataclass(frozen=True)
class Tokens:
    read: str | None = None  # required on every endpoint but /healthz when set


def bearer(scope) -> bytes:
    """The credential of an ``Authorization: Bearer ...`` header (any case), or b""."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credential = value.partition(b" ")
            return credential.strip() if scheme.lower() == b"bearer" else b""
    return b""
