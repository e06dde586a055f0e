"""Logs inside tar archives, read in place (center archives ship one tarball per day).

A log inside an archive is named ``ARCHIVE/MEMBER`` everywhere (SPEC 2);
:func:`read_bytes` resolves such a virtual path as well as a plain file.
"""

from __future__ import annotations

import os
import tarfile
from collections.abc import Iterator

from mosaic.darshan.formats import MAX_LOG_BYTES
from mosaic.errors import LogError

LOG_SUFFIXES = (".darshan", ".darshan.gz", ".darshan.bz2")
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")
DRAIN_CHUNK = 1 << 16
# What tarfile and the decompressors raise on a damaged archive.
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, ValueError)


def is_log_name(name: str) -> bool:
    return name.endswith(LOG_SUFFIXES)


def is_archive_name(name: str) -> bool:
    return name.endswith(ARCHIVE_SUFFIXES)


def _member_bytes(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    if member.size > MAX_LOG_BYTES:
        raise LogError("unreadable", f"member {member.name} larger than the size limit")
    fh = tar.extractfile(member)
    if fh is None:
        raise LogError("unreadable", f"member {member.name} is not a regular file")
    data = fh.read()
    if len(data) != member.size:
        raise LogError("unreadable", f"archive ends inside member {member.name}")
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
        raise LogError("unreadable", "compressed archive ends early")


def iter_archive(path: str | os.PathLike) -> Iterator[tuple[str, bytes]]:
    """(member name, bytes) of every log in a tar archive, streamed in order.

    A damaged archive ends the iteration with LogError("unreadable").
    """
    try:
        with tarfile.open(os.fspath(path), mode="r|*") as tar:
            for member in tar:
                if member.isfile() and is_log_name(member.name):
                    yield member.name, _member_bytes(tar, member)
            _check_stream_end(tar)
    except _ARCHIVE_ERRORS as exc:
        raise LogError("unreadable", f"damaged archive {path}: {exc}") from None


def split_virtual_path(path: str) -> tuple[str, str] | None:
    """``day.tar.gz/dir/x.darshan`` -> (``day.tar.gz``, ``dir/x.darshan``), else None."""
    parts = path.split("/")
    for i in range(1, len(parts)):
        head = "/".join(parts[:i])
        if is_archive_name(head) and os.path.isfile(head):
            return head, "/".join(parts[i:])
    return None


def read_bytes(path: str) -> bytes:
    """Bytes of a log file, or of ``ARCHIVE/MEMBER`` inside a tar archive."""
    if os.path.isfile(path):
        if os.path.getsize(path) > MAX_LOG_BYTES:
            raise LogError("unreadable", "file larger than the size limit")
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise LogError("unreadable", str(exc)) from None
    split = split_virtual_path(path)
    if split is None:
        raise LogError("unreadable", f"no such file: {path}")
    archive, member = split
    try:
        with tarfile.open(archive, mode="r:*") as tar:
            return _member_bytes(tar, tar.getmember(member))
    except KeyError:
        raise LogError("unreadable", f"{archive} has no member {member}") from None
    except _ARCHIVE_ERRORS as exc:
        raise LogError("unreadable", f"damaged archive {archive}: {exc}") from None
