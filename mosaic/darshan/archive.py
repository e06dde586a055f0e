"""Logs inside tar archives, read in place (center archives ship one tarball per day).

A log inside an archive is named ``ARCHIVE/MEMBER`` everywhere (SPEC 2);
:func:`read_bytes` resolves such a virtual path as well as a plain file.
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterator
from typing import IO, cast

from mosaic.config import DEFAULT
from mosaic.errors import LogError, Reason

LOG_SUFFIXES = (".darshan", ".darshan.gz", ".darshan.bz2")
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")
DRAIN_CHUNK = 1 << 16
# What tarfile and the decompressors raise on a damaged archive.
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, ValueError)


def is_log_name(name: str) -> bool:
    return name.endswith(LOG_SUFFIXES)


def is_archive_name(name: str) -> bool:
    return name.endswith(ARCHIVE_SUFFIXES)


def _member_bytes(tar: tarfile.TarFile, member: tarfile.TarInfo, max_bytes: int) -> bytes:
    """A member's bytes; its size (from its tar header) is checked before reading."""
    if not member.isfile():
        raise LogError(Reason.UNREADABLE, f"member {member.name} is not a regular file")
    if member.size > max_bytes:
        raise LogError(Reason.TOO_LARGE, f"member {member.name}: {member.size} bytes > limit {max_bytes}")
    data = cast(IO[bytes], tar.extractfile(member)).read()  # a regular file (checked above) has one
    if len(data) != member.size:
        raise LogError(Reason.UNREADABLE, f"archive ends inside member {member.name}")
    return data


def _check_stream_end(tar: tarfile.TarFile) -> None:
    """tarfile stops quietly when a compressed archive is cut short; notice it.

    Drains what follows the end-of-archive blocks, then asks the stream's
    decompressor (tarfile's ``_Stream.cmp``) whether it saw the end marker.
    """
    stream = tar.fileobj
    while stream.read(DRAIN_CHUNK):
        pass
    decompressor = getattr(stream, "cmp", None)
    if getattr(decompressor, "eof", True) is False:
        raise LogError(Reason.UNREADABLE, "compressed archive ends early")


def iter_archive(
    path: str | os.PathLike[str], max_member_bytes: int = DEFAULT.max_log_bytes
) -> Iterator[tuple[str, bytes | None, tuple[Reason, str] | None]]:
    """(member name, bytes, None) of every log in a tar archive, streamed in order;
    (member name, None, (reason, detail)) for a member that cannot be read
    (larger than ``max_member_bytes``: too_large, never inflated into memory).

    A damaged archive ends the iteration with LogError(Reason.UNREADABLE).
    """
    try:
        with tarfile.open(os.fspath(path), mode="r|*") as tar:
            for member in tar:
                if not (member.isfile() and is_log_name(member.name)):
                    continue
                try:
                    yield member.name, _member_bytes(tar, member, max_member_bytes), None
                except LogError as error:
                    if error.reason != Reason.TOO_LARGE:
                        raise
                    yield member.name, None, (error.reason, error.detail)
            _check_stream_end(tar)
    except _ARCHIVE_ERRORS as exc:
        raise LogError(Reason.UNREADABLE, f"damaged archive {path}: {exc}") from None


def split_virtual_path(path: str) -> tuple[str, str] | None:
    """``day.tar.gz/dir/x.darshan`` -> (``day.tar.gz``, ``dir/x.darshan``), else None."""
    parts = path.split("/")
    for i in range(1, len(parts)):
        head = "/".join(parts[:i])
        if is_archive_name(head) and os.path.isfile(head):
            return head, "/".join(parts[i:])
    return None


def read_regular(path: str, max_bytes: int = DEFAULT.max_log_bytes) -> bytes:
    """Bytes of a regular file of at most ``max_bytes``; LogError otherwise.

    Opened without blocking and checked after opening (a FIFO or device is
    never read, even one swapped in after a scan looked); the size is checked
    before reading and the read never goes past the limit (a file growing).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise LogError(Reason.UNREADABLE, f"no such file: {path}") from None
    except OSError as exc:
        raise LogError(Reason.UNREADABLE, f"cannot open {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LogError(Reason.UNREADABLE, f"not a regular file: {path}")
        if info.st_size > max_bytes:
            raise LogError(Reason.TOO_LARGE, f"{info.st_size} bytes > limit {max_bytes}")
        try:
            data = _read_at_most(fd, info.st_size, max_bytes)
        except OSError as exc:
            raise LogError(Reason.UNREADABLE, f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise LogError(Reason.TOO_LARGE, f"grew past the limit of {max_bytes} bytes")
    return data


def _read_at_most(fd: int, expected: int, max_bytes: int) -> bytes:
    """The file's bytes, stopping one past ``max_bytes``, by plain ``os.read`` calls (no
    buffered file object: a year of small logs). ``read(n)`` allocates ``n`` bytes up
    front, so the first read asks for the size ``fstat`` gave, not the limit (a 1 GiB
    buffer per read would exhaust a capped worker); reading goes on to end of file."""
    parts = [os.read(fd, min(expected, max_bytes) + 1)]
    size = len(parts[0])
    while parts[-1] and size <= max_bytes:
        parts.append(os.read(fd, min(1 << 20, max_bytes + 1 - size)))
        size += len(parts[-1])
    return b"".join(parts)


def read_bytes(path: str, max_bytes: int = DEFAULT.max_log_bytes) -> bytes:
    """Bytes of a log file, or of ``ARCHIVE/MEMBER`` inside a tar archive, at most ``max_bytes``.

    The file is tried first (the usual case: one open); an archive member is
    looked for only when nothing is at ``path``.
    """
    try:
        return read_regular(path, max_bytes)
    except LogError:
        split = None if os.path.lexists(path) else split_virtual_path(path)
        if split is None:
            raise
    archive, member = split
    try:
        with tarfile.open(archive, mode="r:*") as tar:
            return _member_bytes(tar, tar.getmember(member), max_bytes)
    except KeyError:
        raise LogError(Reason.UNREADABLE, f"{archive} has no member {member}") from None
    except _ARCHIVE_ERRORS as exc:
        raise LogError(Reason.UNREADABLE, f"damaged archive {archive}: {exc}") from None
