"""Who may use the API: the loopback rule, token files and the bearer check.

The server binds to loopback by default; any other address requires a token
file, because the API categorizes whatever bytes it is sent. Tokens are
compared in constant time; the ``Bearer`` scheme name is case-insensitive
(RFC 7235).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import stat
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


MIN_TOKEN_CHARS = 16


def read_token(path: str | None) -> str | None:
    """The bearer token in ``path`` (surrounding whitespace ignored), or None without a path.

    Refused with a ValueError that says why: not a regular file (a FIFO would
    block the start until some process writes to it, a device could be read
    forever), a file others may read (the token would not be secret), a file
    that is not UTF-8 text, an empty or short token. The file is opened
    without blocking and checked through that descriptor, so nothing can swap
    it between the check and the read.
    """
    if path is None:
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens at once too
    with open(fd, "rb") as fh:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f"{path} is not a regular file")
        mode = stat.S_IMODE(status.st_mode)
        if mode & 0o077:
            raise ValueError(
                f"{path} may be read by group or others (mode {mode:03o}); run: chmod 600 {path}"
            )
        raw = fh.read()
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None
    if not token:
        raise ValueError(f"{path} holds no token")
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise ValueError(
            f"the token in {path} must be at least {MIN_TOKEN_CHARS} characters "
            "without spaces (e.g. from `openssl rand -hex 32`)"
        )
    return token


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
