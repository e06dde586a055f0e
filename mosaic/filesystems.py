"""What one file system is: each file record keyed by its mount point (SPEC 3.10).

A record belongs to the longest mount point of the log's mount table that is a
prefix of its path at a ``/`` boundary (``Job.mounts``, longest first, as
darshan-util matches); a Darshan 2.x log names the mount of each record's device
(``DarshanLog.record_mounts``), since its names are only path suffixes. Two mounts
of one type are two file systems: a record is never keyed by its type alone.

Darshan leaves some mounts out of its table (a tmpfs, for one): their files
fall under a shorter mount, often ``/``. That mount is then what the log says,
and it stays apart from every other mount point, so a node-local ``/`` is never
counted with a shared ``/scratch``.

Whether jobs share a mount is ``Config.shared_file_systems``: mount points (an
entry starting with ``/``) or file-system types. Every other mount is
node-local: each node has its own, so no two jobs are known to share it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

UNKNOWN = ""  # the mount of a record whose path matches no mount point (or has no name)


@dataclass(frozen=True)
class Mount:
    point: str
    fs_type: str
    shared: bool


def is_shared(point: str, fs_type: str, shared_file_systems: Sequence[str]) -> bool:
    """Whether jobs share the mount at ``point`` of type ``fs_type``: named by its mount
    point, or by its type (case-insensitive). The unknown mount is never shared."""
    if point == UNKNOWN:
        return False
    points = {p.rstrip("/") or "/" for p in shared_file_systems if p.startswith("/")}
    types = {t.lower() for t in shared_file_systems if not t.startswith("/")}
    return (point.rstrip("/") or "/") in points or fs_type.lower() in types


def mount_table(mounts: Sequence[tuple[str, str]], shared_file_systems: Sequence[str]) -> dict[str, Mount]:
    """The log's mounts by mount point (the first of a point listed twice wins)."""
    return _mount_table(tuple((p, t) for p, t in mounts), tuple(shared_file_systems))


@functools.lru_cache(maxsize=256)  # a center's logs share a few mount tables
def _mount_table(
    mounts: tuple[tuple[str, str], ...], shared_file_systems: tuple[str, ...]
) -> dict[str, Mount]:
    table: dict[str, Mount] = {}
    for point, fs_type in mounts:
        key = point.rstrip("/") or "/"
        if key not in table:
            table[key] = Mount(key, fs_type, is_shared(key, fs_type, shared_file_systems))
    return table


def mounts_of_paths(paths: Sequence[str], mounts: Sequence[tuple[str, str]]) -> np.ndarray:
    """The mount point of each path (str array; :data:`UNKNOWN` for none): the longest
    mount point equal to the path or a prefix of it followed by ``/``."""
    out = np.full(len(paths), UNKNOWN, dtype=object)
    if not len(paths) or not mounts:
        return out
    text = np.array(paths, dtype=str)
    points = sorted({p.rstrip("/") or "/" for p, _ in mounts}, key=len, reverse=True)
    left = np.ones(len(paths), bool)
    for point in points:  # a few mounts; each test is one pass over all the paths
        if point == "/":
            hit = left & np.char.startswith(text, "/")
        else:
            hit = left & ((text == point) | np.char.startswith(text, point + "/"))
        out[hit] = point
        left &= ~hit
        if not left.any():
            break
    return out


KNOWN_PATHS = 1 << 16  # paths whose mount point a worker keeps per mount table (then starts over)
_known: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}


def _known_mounts(paths: list[str], mounts: Sequence[tuple[str, str]]) -> np.ndarray:
    """:func:`mounts_of_paths`, remembered per mount table: a center's logs name the same
    files again and again (inputs, libraries, /dev/shm, /proc), and a small log's cost is
    the numpy passes per mount point, not its few paths. A log whose paths were all seen
    takes their mount points from the table; else they are all found again and kept."""
    table = tuple((p, t) for p, t in mounts)
    known = _known.get(table)
    if known is None:
        if len(_known) >= 64:  # a worker meets a few mount tables; never an unbounded cache
            _known.clear()
        known = _known[table] = {}
    hits = [known.get(path) for path in paths]
    if None not in hits:
        return np.array(hits, dtype=object) if hits else np.zeros(0, dtype=object)
    found = mounts_of_paths(paths, mounts)
    if len(known) + len(paths) > KNOWN_PATHS:
        known.clear()
    known.update(zip(paths, found.tolist()))
    return found


def record_mounts(
    ids: np.ndarray,
    names: Mapping[int, str],
    mounts: Sequence[tuple[str, str]],
    legacy: Mapping[int, str] | None = None,
    unique: bool = False,
) -> np.ndarray:
    """The mount point of each record id in ``ids`` (object array of str).

    ``legacy``: Darshan 2.x's record id -> mount point of its device, which wins.
    ``unique``: ``ids`` holds each id once already.
    """
    if not len(ids):
        return np.zeros(0, dtype=object)
    if unique:
        unique_ids, inverse = np.asarray(ids), None
    else:
        unique_ids, inverse = np.unique(ids, return_inverse=True)
    if legacy:
        found = np.array(
            [
                (legacy.get(rid) or "").rstrip("/") or ("/" if legacy.get(rid) else UNKNOWN)
                for rid in unique_ids.tolist()
            ],
            dtype=object,
        )
    else:
        found = _known_mounts([names.get(rid, "") for rid in unique_ids.tolist()], mounts)
    if inverse is None:
        return found
    result: np.ndarray = found[inverse.reshape(-1)]
    return result
