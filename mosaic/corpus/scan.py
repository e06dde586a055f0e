"""Find the logs of a corpus: folders (recursively), tar archives, single files.

The scan is a stream (a year is ~460k logs: never build the list). Each log
becomes a :class:`LogRef`: the name used in every output (SPEC 2: relative to
the input folder; ``ARCHIVE/MEMBER`` inside an archive), where a worker reads
it, and, for archive members, its bytes: archives are read once, in order, by
the parent (random access into a ``.tar.gz`` would decompress the archive
again for every member).

The file system is not trusted to hold still or be a tree. Names are kept
byte-exact (Python's ``surrogateescape`` str: ``os.fsencode(name)`` gives the
bytes back). Each folder is walked once, whatever the symlinks pointing at it
(loops, links to a sibling folder); a folder or file that vanishes mid-scan,
a FIFO or a device (never opened: opening a FIFO blocks) are counted in
:attr:`ScanCounts.skipped` with the reason, not raised.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from mosaic.config import DEFAULT
from mosaic.darshan import archive
from mosaic.darshan.archive import is_archive_name, is_log_name, iter_archive
from mosaic.errors import LogError

# Reasons a path is skipped by the scan (keys of ScanCounts.skipped).
NOT_REGULAR = "not_a_regular_file"  # FIFO, socket, device
VANISHED = "vanished"  # removed between listing and looking at it, or a dangling link
UNREADABLE_PATH = "unreadable_path"  # permission denied, a link loop on a file name
REPEATED_FOLDER = "repeated_folder"  # reached again through a symlink (loops, siblings)


class Stamp(NamedTuple):
    """What a rerun compares to tell whether a file changed since it was validated.

    The change time is there because size and modification time can be put
    back (``touch -r``, ``os.utime``) after a file is rewritten in place; the
    kernel sets ctime on every change and no call sets it back. A ``chmod`` or
    ``chown`` sets it too: such a file is validated again, needlessly but
    harmlessly.
    """

    size: int
    mtime_ns: int
    ctime_ns: int


@dataclass(frozen=True, slots=True)
class LogRef:
    name: str  # the name in every output
    location: str  # absolute path, or ABSOLUTE_ARCHIVE/MEMBER
    data: bytes | bytearray | None = None  # the log's bytes when shipped with the job
    error: tuple[str, str] | None = None  # (reason, detail) known without reading it
    archive: str | None = None  # absolute path of the archive holding this log
    stamp: Stamp | None = None  # of the file, or of its archive


@dataclass
class ScanCounts:
    files_seen: int = 0
    skipped_files: int = 0  # neither a log nor an archive
    logs: int = 0
    archives: int = 0
    members: int = 0  # logs inside archives (included in `logs`)
    validated_before: int = 0  # logs an earlier run validated from the same files (not sent again)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> paths skipped
    # (location, size, mtime_ns, ctime_ns, logs)
    archives_read: list[tuple[str, int, int, int, int]] = field(default_factory=list)


# An earlier run's knowledge of an archive: (location, size, mtime_ns, ctime_ns) -> its logs'
# count if they are all validated already (the archive is then not read), else None.
Reuse = Callable[[str, int, int, int], "int | None"]


def scan(
    inputs: Iterable[str | os.PathLike[str]],
    counts: ScanCounts | None = None,
    ship_bytes: bool = False,
    max_bytes: int = DEFAULT.max_log_bytes,
    reuse: Reuse | None = None,
) -> Iterator[LogRef]:
    """Every log under `inputs`, in a deterministic order (sorted names per folder).

    With several input folders, names are prefixed with the shortest tail of
    each folder's path that tells them apart (``a/x.darshan``, ``b/x.darshan``;
    ``d1/logs/x.darshan``, ``d2/logs/x.darshan``). `counts` is filled as the
    stream is consumed. `ship_bytes` reads plain files too (for nodes without
    a shared file system), never past `max_bytes`: a larger file is evicted
    ``too_large`` from its size alone. An archive `reuse` knows is counted, not read.
    """
    counts = counts if counts is not None else ScanCounts()
    paths = [os.fspath(path) for path in inputs]
    prefixes = folder_prefixes([path for path in paths if os.path.isdir(path)])
    visited: set[tuple[int, int]] = set()
    for path in paths:
        if path in prefixes:
            for full, rel, info in _walk(path, counts, visited):
                yield from _refs(full, prefixes[path] + rel, info, counts, ship_bytes, max_bytes, reuse)
        elif (found := _stat(path, counts)) is not None:
            yield from _refs(os.path.abspath(path), path, found, counts, ship_bytes, max_bytes, reuse)


def folder_prefixes(folders: list[str]) -> dict[str, str]:
    """Name prefix of each input folder: "" for one folder, else the fewest trailing
    path components that keep every folder's prefix distinct."""
    if len(folders) < 2:
        return {folder: "" for folder in folders}
    parts = {folder: os.path.abspath(folder).strip(os.sep).split(os.sep) for folder in folders}
    distinct = {tuple(p) for p in parts.values()}  # the same folder twice is walked once
    longest = max(map(len, distinct))
    depth = next(k for k in range(1, longest + 1) if len({tuple(p[-k:]) for p in distinct}) == len(distinct))
    return {folder: "/".join(p[-depth:]) + "/" for folder, p in parts.items()}


def count_log_files(inputs: Iterable[str | os.PathLike[str]]) -> int:
    """Plain log files under `inputs`, by name only: a cheap first total for a
    progress bar (the pipeline adds archive members as the scan reaches them)."""
    counts, visited = ScanCounts(), set[tuple[int, int]]()
    total = 0
    for path in (os.fspath(given) for given in inputs):
        if os.path.isdir(path):
            total += sum(is_log_name(rel) for _, rel, _ in _walk(path, counts, visited))
        else:
            total += is_log_name(path)
    return total


def _stat(path: str, counts: ScanCounts) -> os.stat_result | None:
    """`path`'s stat (following links), or None with the reason counted."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        counts.skipped[VANISHED] += 1
    except OSError:
        counts.skipped[UNREADABLE_PATH] += 1
    return None


def _walk(
    root: str, counts: ScanCounts, visited: set[tuple[int, int]]
) -> Iterator[tuple[str, str, os.stat_result]]:
    """(absolute path, path relative to root, stat) of every file, sorted, depth first;
    each folder (by device and inode) once."""
    root = os.path.abspath(root)  # entries of an absolute, normal folder are absolute, normal
    under = root if root.endswith(os.sep) else root + os.sep
    stack = [root]
    while stack:
        folder = stack.pop()
        info = _stat(folder, counts)
        if info is None:
            continue
        if (info.st_dev, info.st_ino) in visited:
            counts.skipped[REPEATED_FOLDER] += 1
            continue
        visited.add((info.st_dev, info.st_ino))
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except FileNotFoundError:
            counts.skipped[VANISHED] += 1
            continue
        except OSError:
            counts.skipped[UNREADABLE_PATH] += 1
            continue
        subfolders = []
        for entry in entries:
            info = _stat(entry.path, counts)
            if info is None:
                continue
            if stat.S_ISDIR(info.st_mode):
                subfolders.append(entry.path)
            else:
                yield entry.path, entry.path[len(under) :], info
        stack.extend(reversed(subfolders))


def _refs(
    location: str,
    name: str,
    info: os.stat_result,
    counts: ScanCounts,
    ship_bytes: bool,
    max_bytes: int,
    reuse: Reuse | None,
) -> Iterator[LogRef]:
    """The log(s) of one file; `location` is absolute and normal (both callers make it so)."""
    if not stat.S_ISREG(info.st_mode):
        counts.skipped[NOT_REGULAR] += 1
        return
    counts.files_seen += 1
    stamp = Stamp(info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if is_log_name(location):
        counts.logs += 1
        if ship_bytes:
            data, error = read_regular(location, max_bytes)
            yield LogRef(name, location, data, error=error, stamp=stamp)
        else:
            yield LogRef(name, location, stamp=stamp)
    elif is_archive_name(location):
        counts.archives += 1
        known = reuse(location, *stamp) if reuse is not None else None
        if known is None:
            yield from _archive_refs(location, name, stamp, counts, max_bytes)
        else:
            counts.logs += known
            counts.members += known
            counts.validated_before += known
    else:
        counts.skipped_files += 1


def read_regular(path: str, max_bytes: int) -> tuple[bytes | None, tuple[str, str] | None]:
    """(bytes, None) of a regular file of at most `max_bytes`, else (None, (reason, detail)):
    the reader's bounded, non-blocking read (`archive.read_regular`) as a LogRef pair."""
    try:
        return archive.read_regular(path, max_bytes), None
    except LogError as error:
        return None, (error.reason, error.detail)


def _archive_refs(
    location: str, name: str, stamp: Stamp, counts: ScanCounts, max_bytes: int
) -> Iterator[LogRef]:
    """Members of one archive; a damaged archive is reported as one evicted entry.
    Once every member is out, the archive goes to `counts.archives_read`."""
    logs = 0
    try:
        for member, data, error in iter_archive(location, max_bytes):
            counts.logs += 1
            counts.members += 1
            logs += 1
            yield LogRef(
                f"{name}/{member}", f"{location}/{member}", data, error, archive=location, stamp=stamp
            )
    except LogError as error:
        counts.logs += 1
        counts.members += 1
        logs += 1
        yield LogRef(name, location, error=(error.reason, error.detail), stamp=stamp)
    counts.archives_read.append((location, *stamp, logs))
