"""The epilog's spool: the logs it could not post (service down, slow, answering 503), kept
until a later post gets an answer, as Slurm's own ``jobcomp/elasticsearch`` keeps what it
could not send.

One private folder of the epilog's user (mode 700: entries carry other users' logs); one
file per log, named ``JOB.UID.SHA256.darshan`` (the job and uid the post must claim, and the
content's hash: the same log spooled twice is one entry), written to a hidden temporary
name, flushed to disk and renamed, so a crash never leaves half an entry. An entry's
modification time is when it was spooled: the age of the oldest tells how long the service
has been missing posts. Draining takes an exclusive ``flock`` of the folder, so two
epilogs finishing together do not post the same entries side by side.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mosaic.corpus.node import private_folder

ENTRY = re.compile(r"\A(?P<job_id>\d{1,20})\.(?P<uid>\d{1,20})\.[0-9a-f]{64}\.darshan\Z")


@dataclass(frozen=True)
class Entry:
    """One spooled log: where it is, and the job and uid its post must claim."""

    path: Path
    job_id: str
    uid: int
    spooled: float  # seconds since the epoch


@dataclass(frozen=True)
class Pending:
    """What a spool holds: how many entries, and the age of the oldest (None when empty)."""

    count: int
    oldest_seconds: float | None

    def __str__(self) -> str:
        if self.oldest_seconds is None:
            return "0 pending"
        return f"{self.count} pending, the oldest for {self.oldest_seconds:.0f} s"


def open_spool(path: str) -> Path:
    """The spool folder, created mode 700 if missing; EngineError when others could read or
    plant entries in it (a link, another user's, open to group or others)."""
    return Path(
        private_folder(
            path,
            "spool folder",
            why="its entries are posted as jobs' logs",
            remedy="name a folder of the epilog's user that others cannot enter",
            empty=False,
        )
    )


def write_entry(final: Path, data: bytes) -> None:
    """Write a spool entry atomically: ``data`` to a hidden name in its folder, synced, then
    renamed to ``final`` (a reader of the folder never sees half an entry)."""
    descriptor, temporary = tempfile.mkstemp(dir=final.parent, prefix=".partial-")
    try:
        with os.fdopen(descriptor, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temporary, final)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def keep(folder: Path, job_id: str, uid: int, data: bytes) -> Path:
    """Spool one log, atomically; the entry's path."""
    final = folder / f"{job_id}.{uid}.{hashlib.sha256(data).hexdigest()}.darshan"
    write_entry(final, data)
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)  # the rename itself survives a crash
    finally:
        os.close(directory)
    return final


def entries(folder: Path) -> list[Entry]:
    """The spooled logs, oldest first (temporary files and anything else ignored)."""
    found = []
    for item in os.scandir(folder):
        match = ENTRY.match(item.name)
        if match and item.is_file(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):  # drained meanwhile by another epilog
                spooled = item.stat(follow_symlinks=False).st_mtime
                found.append(Entry(Path(item.path), match["job_id"], int(match["uid"]), spooled))
    return sorted(found, key=lambda entry: (entry.spooled, entry.path.name))


def pending(folder: Path) -> Pending:
    found = entries(folder)
    if not found:
        return Pending(0, None)
    return Pending(len(found), max(0.0, time.time() - found[0].spooled))


@contextlib.contextmanager
def draining(folder: Path) -> Iterator[bool]:
    """Hold the folder's drain lock; yields False when another process holds it."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(descriptor)  # releases the lock
