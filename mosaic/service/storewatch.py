"""Whether the store file a server opened is still at its path, and still a SQLite file.

Why: SQLite keeps using a file it has open after the file is deleted or
replaced (it holds the inode), so a server would go on answering lookups from
a file nobody sees and record posted runs into it, lost at the next start.
``PRAGMA quick_check`` would also find damage deeper in the file, but it reads
every page (seconds on a store of a year), too slow for each health probe. The
check here is one ``stat`` of the path, compared with the device and inode
seen when the store was opened, and a read of the file's 100-byte header (its
magic string and page size): tens of microseconds. Damage it cannot see (a
file cut in the middle, pages overwritten) shows when a query meets it, and
is answered as a JSON 503 too (:mod:`mosaic.service.handlers`).

Why the header is read through one descriptor kept from startup, never by
opening the path again: on Linux, closing *any* descriptor of a file drops
every POSIX lock the process holds on it, SQLite's included. A check that
opened and closed the store (before 2026-12) let the next process closing
its own connection believe it was the last one: it checkpointed and deleted
the ``-wal`` and ``-shm`` files the server still wrote to, and the server's
later posts (answered 200) went into a deleted WAL, seen by no other process
and lost at a ``kill -9``. The kept descriptor is closed only after the
store's connections are (:meth:`StoreFile.close`). Opening no path also
means a path replaced by a FIFO cannot block the server: the ``stat`` sees a
file that is not the one opened.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from mosaic.errors import StoreUnavailable

SQLITE_MAGIC = b"SQLite format 3\0"
HEADER_BYTES = 100
PAGE_SIZE_AT = slice(16, 18)  # big-endian; 1 means 65,536
PAGE_SIZES = {1 << k for k in range(9, 16)} | {1}


def open_regular(path: str | Path) -> int:
    """A read-only descriptor of the regular file at ``path``, opened without blocking
    (a FIFO opens at once, then is refused): :class:`StoreUnavailable` otherwise."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise StoreUnavailable(f"store file {path} cannot be opened: {error.strerror}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)  # not the store: SQLite holds no lock on it
        raise StoreUnavailable(f"store file {path} is not a regular file")
    return descriptor


@dataclass(frozen=True)
class StoreFile:
    """The store file as opened: its path, device and inode, and a descriptor of it kept
    open for as long as SQLite's connections are."""

    path: Path
    device: int
    inode: int
    descriptor: int

    @classmethod
    def opened(cls, path: str | Path) -> StoreFile:
        """Called right after the store is opened: the file at ``path`` is the open one."""
        descriptor = open_regular(path)
        status = os.fstat(descriptor)
        return cls(Path(path), status.st_dev, status.st_ino, descriptor)

    def close(self) -> None:
        """Close the kept descriptor: only once the store's connections are closed."""
        os.close(self.descriptor)

    def problem(self) -> str | None:
        """Why the store is not usable, or None."""
        try:
            status = os.stat(self.path)
            header = os.pread(self.descriptor, HEADER_BYTES, 0)
        except FileNotFoundError:
            return f"store file {self.path} was deleted under the server; restart it on a store"
        except OSError as error:
            return f"store file {self.path} cannot be read: {error.strerror}"
        if (status.st_dev, status.st_ino) != (self.device, self.inode):
            kind = "" if stat.S_ISREG(status.st_mode) else " by something that is not a regular file"
            return (
                f"store file {self.path} was replaced{kind} under the server; restart it to use the new file"
            )
        if len(header) < HEADER_BYTES or not header.startswith(SQLITE_MAGIC):
            return f"store file {self.path} is damaged: no SQLite header ({status.st_size} bytes)"
        if int.from_bytes(header[PAGE_SIZE_AT], "big") not in PAGE_SIZES:
            return f"store file {self.path} is damaged: its header names no valid page size"
        return None

    def check(self) -> None:
        """Raise :class:`StoreUnavailable` when the store is not usable."""
        problem = self.problem()
        if problem is not None:
            raise StoreUnavailable(problem)
