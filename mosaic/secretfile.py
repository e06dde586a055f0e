"""Secrets kept in files: the API's bearer tokens and the dispy nodes' secret.

Both the service (``mosaic serve --token-file``) and batch (``mosaic run
--nodes``, ``python -m mosaic.corpus.node``) read one, by the same rules:
it sits below both, so neither depends on the other.
"""

from __future__ import annotations

import os
import stat

MIN_SECRET_CHARS = 16


def read_secret_file(path: str) -> str:
    """The secret in ``path`` (surrounding whitespace ignored).

    Refused with a ValueError that says why: not a regular file (a FIFO would
    block the start until some process writes to it, a device could be read
    forever), a file owned by another user (whoever owns it chose the secret,
    or can read it: a link to their file would hand it in), a file others may
    read (the secret would not be one), not UTF-8 text, an empty or short
    secret. The file is opened without blocking and every check is made on the
    opened descriptor (``fstat``): a symbolic link is followed, and it is what
    the link leads to that must pass, so nothing can swap the file between the
    check and the read. OSError when it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens at once too
    with open(fd, "rb") as fh:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f"{path} is not a regular file")
        if status.st_uid != os.geteuid():
            raise ValueError(
                f"{path} is owned by uid {status.st_uid}, not by you (uid {os.geteuid()}): "
                "a secret must be in a file of your own (links are followed, the file they lead to "
                "is checked)"
            )
        mode = stat.S_IMODE(status.st_mode)
        if mode & 0o077:
            raise ValueError(
                f"{path} may be read by group or others (mode {mode:03o}); run: chmod 600 {path}"
            )
        raw = fh.read()
    try:
        secret = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None
    if not secret:
        raise ValueError(f"{path} holds no token")
    if len(secret) < MIN_SECRET_CHARS or any(c.isspace() for c in secret):
        raise ValueError(
            f"the token in {path} must be at least {MIN_SECRET_CHARS} characters "
            "without spaces (e.g. from `openssl rand -hex 32`)"
        )
    return secret
