"""Find the logs of a corpus: folders (recursively), tar archives, single files.

The scan is a stream (a year is ~460k logs: never build the list). Each log
becomes a :class:`LogRef`: the name used in every output (SPEC 2: relative to
the input folder; ``ARCHIVE/MEMBER`` inside an archive), where a worker reads
it, and, for archive members, its bytes: archives are read once, in order, by
the parent (random access into a ``.tar.gz`` would decompress the archive
again for every member).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from mosaic.darshan.archive import is_archive_name, is_log_name, iter_archive
from mosaic.errors import LogError


@dataclass(frozen=True, slots=True)
class LogRef:
    name: str  # the name in every output
    location: str  # absolute path, or ABSOLUTE_ARCHIVE/MEMBER
    data: bytes | None = None  # the log's bytes when shipped with the job
    error: tuple[str, str] | None = None  # (reason, detail) known without reading it
    archive: str | None = None  # absolute path of the archive holding this log


@dataclass
class ScanCounts:
    files_seen: int = 0
    skipped_files: int = 0  # neither a log nor an archive
    logs: int = 0
    archives: int = 0


def scan(inputs: Iterable[str | os.PathLike], counts: ScanCounts | None = None,
         ship_bytes: bool = False) -> Iterator[LogRef]:
    """Every log under `inputs`, in a deterministic order (sorted names per folder).

    With several input folders, names are prefixed with the folder's own name
    so that ``a/x.darshan`` and ``b/x.darshan`` stay distinct. `counts` is
    filled as the stream is consumed. `ship_bytes` reads plain files too (for
    nodes without a shared file system).
    """
    counts = counts if counts is not None else ScanCounts()
    inputs = [os.fspath(path) for path in inputs]
    folders = [path for path in inputs if os.path.isdir(path)]
    for path in inputs:
        if os.path.isdir(path):
            prefix = os.path.basename(os.path.normpath(path)) + "/" if len(folders) > 1 else ""
            for full, rel in _walk(path):
                yield from _refs(full, prefix + rel, counts, ship_bytes)
        else:
            yield from _refs(path, path, counts, ship_bytes)


def count_log_files(inputs: Iterable[str | os.PathLike]) -> int:
    """Plain log files under `inputs`, by name only: a cheap total for a progress bar
    (members of archives are not counted: that would mean reading the archives)."""
    paths = [os.fspath(path) for path in inputs]
    names = itertools.chain.from_iterable(
        (rel for _, rel in _walk(path)) if os.path.isdir(path) else [path] for path in paths)
    return sum(map(is_log_name, names))


def _walk(root: str) -> Iterator[tuple[str, str]]:
    """(absolute path, path relative to root) of every file, sorted, depth first."""
    stack = [root]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            entries = sorted(entries, key=lambda entry: entry.name)
        subfolders = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=True):
                subfolders.append(entry.path)
            else:
                yield os.path.abspath(entry.path), os.path.relpath(entry.path, root)
        stack.extend(reversed(subfolders))


def _refs(path: str, name: str, counts: ScanCounts, ship_bytes: bool) -> Iterator[LogRef]:
    counts.files_seen += 1
    location = os.path.abspath(path)
    if is_log_name(path):
        counts.logs += 1
        yield LogRef(name, location, _read(location) if ship_bytes else None)
    elif is_archive_name(path):
        counts.archives += 1
        yield from _archive_refs(location, name, counts)
    else:
        counts.skipped_files += 1


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None  # the worker reports why when it tries the path itself


def _archive_refs(location: str, name: str, counts: ScanCounts) -> Iterator[LogRef]:
    """Members of one archive; a damaged archive is reported as one evicted entry."""
    try:
        for member, data in iter_archive(location):
            counts.logs += 1
            yield LogRef(f"{name}/{member}", f"{location}/{member}", data, archive=location)
    except LogError as error:
        counts.logs += 1
        yield LogRef(name, location, error=(error.reason, error.detail))
