"""Logs inside tar archives, read in place (center archives ship one tarball per day).

A log inside an archive is named ``ARCHIVE/MEMBER`` everywhere (SPEC 2);
:func:`read_bytes` resolves such a virtual path as well as a plain file.
"""

from __future__ import annotations

import bz2
import contextlib
import lzma
import os
import stat
import tarfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, cast

from zlib_ng import zlib_ng

from mosaic.config import DEFAULT
from mosaic.errors import LogError, Reason

LOG_SUFFIXES = (".darshan", ".darshan.gz", ".darshan.bz2")
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")
MEMBER_CHUNK = 1 << 20  # a member is read into its buffer this much at a time
GZIP_MAGIC, BZIP2_MAGIC = b"\x1f\x8b", b"BZh"
# What a log may start with (docs/darshan-format.md): a gzip or bzip2 wrapper, a 2.x or a 3.x log.
LEADING_BYTES = (GZIP_MAGIC, BZIP2_MAGIC, b"2.", b"3.")
SNIFF_BYTES = max(map(len, LEADING_BYTES))
NOT_A_LOG = "not a Darshan log (unknown leading bytes)"
# How an eviction of a file that could not be opened begins: what a process sees, not what the
# log holds (until 2026-11-29 a node that did not see the files recorded them so; store.mark_seen)
NO_SUCH_FILE = "no such file: "
CANNOT_OPEN = "cannot open "
REPEAT_MARK = "#"  # the k-th member of one name in an archive (k >= 2) is named NAME#k
# What tarfile and the decompressors raise on a damaged archive.
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, ValueError)
_DECOMPRESS_ERRORS = (cast(type[Exception], zlib_ng.error), lzma.LZMAError, OSError, EOFError, ValueError)
# Compressed archives tarfile's stream mode ("r|*") reads, by their first bytes.
_ARCHIVE_DECOMPRESSORS: dict[bytes, Callable[[], Any]] = {
    GZIP_MAGIC: lambda: zlib_ng.decompressobj(16 + zlib_ng.MAX_WBITS),
    BZIP2_MAGIC: bz2.BZ2Decompressor,
    b"\xfd7zXZ\x00": lzma.LZMADecompressor,
}
ARCHIVE_INPUT_CHUNK = 1 << 16  # compressed bytes read from the archive at a time
# Output asked of the decompressor at a time: when filling a read (small reads take
# this much and keep the rest for the next ones), and when skipping (dropped at once).
ARCHIVE_OUTPUT_CHUNK, ARCHIVE_SKIP_CHUNK = 1 << 16, 4 << 20


class _Inflating:
    """A compressed tar archive as the file object of the tar inside, for tarfile's
    random-access mode: reads decompress as they go, and a seek forward past a member
    that is no log decompresses it ``ARCHIVE_SKIP_CHUNK`` at a time and drops it, at
    the decompressor's speed. (tarfile's stream mode skipped 10 KiB at a time and
    copied its buffer's rest on each: a 1 GiB zero member took 115 s.) A seek back
    stays within the output not yet read: tarfile's reads never ask more.
    """

    def __init__(self, raw: IO[bytes], new: Callable[[], Any]):
        self.raw, self.decompressor = raw, new()
        self.input = b""  # compressed bytes handed to zlib and not consumed yet
        self.buffer, self.start, self.at = b"", 0, 0  # output kept; its offset; read position

    def tell(self) -> int:
        return self.at

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        target = offset if whence == os.SEEK_SET else self.at + offset
        if target < self.start:
            raise tarfile.ReadError("a compressed archive is read forward only")
        end = self.start + len(self.buffer)
        while end < target and (piece := self._produce(min(target - end, ARCHIVE_SKIP_CHUNK))):
            end += len(piece)
        if end <= target:  # skipped past what was kept (or the stream ended first)
            self.buffer, self.start = b"", end
        self.at = min(target, end)
        return self.at

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = 1 << 62  # tarfile always asks a size; for a drain, all that is left
        skip = self.at - self.start
        parts, have = [self.buffer[skip : skip + size]], len(self.buffer) - skip
        while have < size and (piece := self._produce(max(size - have, ARCHIVE_OUTPUT_CHUNK))):
            parts.append(piece[: size - have])
            have += len(piece)
            self.buffer, self.start = piece, self.start + len(self.buffer)
        data = b"".join(parts)
        self.at += len(data)
        return data

    def _produce(self, limit: int) -> bytes:
        """Up to ``limit`` more bytes of the tar; b"" at the end of the stream or of the
        file (a cut: see :meth:`complete`)."""
        d, ended = self.decompressor, False
        while not d.eof:
            if getattr(d, "needs_input", not self.input):  # zlib: its unconsumed tail is gone
                self.input = self.raw.read(ARCHIVE_INPUT_CHUNK)
                ended = not self.input  # one more call, with no input, gives what it still holds
            try:
                piece = cast(bytes, d.decompress(self.input, limit))
            except _DECOMPRESS_ERRORS as exc:
                raise tarfile.ReadError(f"does not decompress: {exc}") from None
            self.input = getattr(d, "unconsumed_tail", b"")  # bz2 and lzma keep their input
            if piece or ended:
                return piece
        return b""

    def complete(self) -> bool:
        """Whether the compressed stream ends where the file does (after a drain)."""
        while self._produce(ARCHIVE_SKIP_CHUNK):
            pass
        return bool(self.decompressor.eof)


@contextlib.contextmanager
def _open_tar(path: str) -> Iterator[tuple[tarfile.TarFile, _Inflating | None]]:
    """The tar archive at ``path``, for reading in order: a plain one seeks past the
    members it skips (a sparse 100 GB member is not read), a compressed one skips
    them at its decompressor's speed (:class:`_Inflating`, also returned)."""
    with open(path, "rb") as raw:
        head = raw.read(max(map(len, _ARCHIVE_DECOMPRESSORS)))
        raw.seek(0)
        new = next((new for magic, new in _ARCHIVE_DECOMPRESSORS.items() if head.startswith(magic)), None)
        fileobj = None if new is None else _Inflating(raw, new)
        with tarfile.open(fileobj=cast(IO[bytes], fileobj or raw), mode="r:") as tar:
            yield tar, fileobj


def is_log_name(name: str) -> bool:
    return name.endswith(LOG_SUFFIXES)


def is_archive_name(name: str) -> bool:
    return name.endswith(ARCHIVE_SUFFIXES)


def check_leading_bytes(head: bytes | bytearray) -> None:
    """LogError(unreadable) unless ``head`` (a log's first bytes: ``SNIFF_BYTES`` of them
    are enough) can start a log, so that no more of a file that is no log is read."""
    if not head:
        raise LogError(Reason.UNREADABLE, "empty file")
    if not head.startswith(LEADING_BYTES):
        raise LogError(Reason.UNREADABLE, NOT_A_LOG)


def _member_bytes(tar: tarfile.TarFile, member: tarfile.TarInfo, max_bytes: int) -> bytearray:
    """A member's bytes; its size (from its tar header) is checked before reading, its
    first bytes before the rest (1 GiB of zeros is not read whole to find it is no log).

    Read in chunks into one buffer of the member's size: tarfile's ``read()`` of a
    compressed archive joins and slices its pieces, 2-3 times the member at its peak.
    """
    if not member.isfile():
        raise LogError(Reason.UNREADABLE, f"member {member.name} is not a regular file")
    if member.size > max_bytes:
        raise LogError(Reason.TOO_LARGE, f"member {member.name}: {member.size} bytes > limit {max_bytes}")
    stream = tar.extractfile(member)
    assert stream is not None  # a regular file's member always has one
    head = stream.read(SNIFF_BYTES)
    check_leading_bytes(head)
    data = bytearray(member.size)
    data[: len(head)] = head
    done = len(head)
    while done < member.size and (chunk := stream.read(MEMBER_CHUNK)):
        data[done : done + len(chunk)] = chunk
        done += len(chunk)
    if done != member.size:  # the archive is damaged: no member after this one can be read
        raise tarfile.ReadError(f"archive ends inside member {member.name}")
    return data


def _log_members(members: Iterable[tarfile.TarInfo]) -> Iterator[tuple[str, tarfile.TarInfo]]:
    """(name, member) of the logs among ``members``, in order: regular files with a log's
    name. A tar may hold several members of one name (appended copies); the first keeps
    its name and the k-th is named ``NAME#k``, so that every copy is a log of its own in
    the counts and the outputs (no member's own name is taken: ``#k`` ends no log name)."""
    copies: Counter[str] = Counter()
    for member in members:
        if member.isfile() and is_log_name(member.name):
            copies[member.name] += 1
            k = copies[member.name]
            yield (member.name if k == 1 else f"{member.name}{REPEAT_MARK}{k}"), member


def iter_archive(
    path: str | os.PathLike[str], max_member_bytes: int = DEFAULT.max_log_bytes
) -> Iterator[tuple[str, bytearray | None, tuple[Reason, str] | None]]:
    """(member name, bytes, None) of every log in a tar archive, streamed in order;
    (member name, None, (reason, detail)) for a member that cannot be read
    (larger than ``max_member_bytes``: too_large, never inflated into memory; not
    starting as a log does: unreadable, read no further). Repeated names are told
    apart as :func:`_log_members` says.

    A damaged archive ends the iteration with LogError(Reason.UNREADABLE).
    """
    try:
        with _open_tar(os.fspath(path)) as (tar, inflating):
            for name, member in _log_members(tar):
                try:
                    yield name, _member_bytes(tar, member, max_member_bytes), None
                except LogError as error:  # this member only (too large, not a log)
                    yield name, None, (error.reason, error.detail)
            if inflating is not None and not inflating.complete():  # tarfile stops quietly at a cut
                raise LogError(Reason.UNREADABLE, "compressed archive ends early")
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
    before reading, the first bytes before the rest, and the read never goes
    past the limit (a file growing).
    """
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        raise LogError(Reason.UNREADABLE, f"{NO_SUCH_FILE}{path}") from None
    except OSError as exc:
        raise LogError(Reason.UNREADABLE, f"{CANNOT_OPEN}{path}: {exc.strerror}") from None
    return read_opened(fd, path, max_bytes)


def open_regular(path: str) -> int:
    """A descriptor of `path` for :func:`read_opened`; OSError when it cannot be opened."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


def read_opened(fd: int, path: str, max_bytes: int) -> bytes:
    """:func:`read_regular` once `path` is open as `fd` (closed here, whatever happens)."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LogError(Reason.UNREADABLE, f"not a regular file: {path}")
        if info.st_size > max_bytes:
            raise LogError(Reason.TOO_LARGE, f"{info.st_size} bytes > limit {max_bytes}")
        try:
            check_leading_bytes(os.pread(fd, SNIFF_BYTES, 0))
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
    if len(parts) == 2 and not parts[1]:  # the usual end: no copy of the whole file
        return parts[0]
    return b"".join(parts)


def _find_member(tar: tarfile.TarFile, name: str) -> tarfile.TarInfo:
    """The member :func:`iter_archive` names ``name`` (the first copy of a repeated name,
    ``NAME#k`` the k-th), else the archive's member of that name; KeyError if none."""
    for named, member in _log_members(tar.getmembers()):
        if named == name:
            return member
    return tar.getmember(name)


def read_bytes(path: str, max_bytes: int = DEFAULT.max_log_bytes) -> bytes | bytearray:
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
            return _member_bytes(tar, _find_member(tar, member), max_bytes)
    except KeyError:
        raise LogError(Reason.UNREADABLE, f"{archive} has no member {member}") from None
    except _ARCHIVE_ERRORS as exc:
        raise LogError(Reason.UNREADABLE, f"damaged archive {archive}: {exc}") from None
