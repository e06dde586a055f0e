"""Who may use the API: the loopback rule, token files and the bearer check.

The server binds to loopback by default; any other address requires a token
file (read by mosaic/secretfile.py), because the API categorizes whatever bytes it is sent. Tokens are
compared in constant time; the ``Bearer`` scheme name is case-insensitive
(RFC 7235).
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the click commands import this module: no web imports at run time
    from starlette.types import Scope

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


def client_source(host: str, ipv6_prefix: int) -> str:
    """What tells clients apart for their fair shares (connections per source, queued work per
    client): an IPv4 address whole; an IPv6 one by its first ``ipv6_prefix`` bits (a host or
    a site is given a whole /64 and may speak from any of its 2^64 addresses: until
    2026-11-29 each of them was a client of its own); an IPv4-mapped one as its IPv4 address."""
    try:
        address = ipaddress.ip_address(host.partition("%")[0])  # without an IPv6 zone
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, ipv6_prefix), strict=False))
    return host


@dataclass(frozen=True)
class Tokens:
    """Bearer tokens of a server: ``read`` opens every endpoint but /healthz (None: open
    on loopback); ``write`` is needed to record in the store (None: nobody may)."""

    read: str | None = None
    write: str | None = None

    def access(self, scope: Scope) -> tuple[bool, bool]:
        """(may read, may write) for the request of ``scope``, in constant time."""
        given = bearer(scope)
        may_write = self.write is not None and hmac.compare_digest(given, self.write.encode())
        may_read = self.read is None or may_write or hmac.compare_digest(given, self.read.encode())
        return may_read, may_write


def bearer(scope: Scope) -> bytes:
    """The credential of an ``Authorization: Bearer ...`` header (any case), or b""."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credential = value.partition(b" ")
            return credential.strip() if scheme.lower() == b"bearer" else b""
    return b""
