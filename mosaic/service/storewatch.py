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
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mosaic.errors import StoreUnavailable

SQLITE_MAGIC = b"SQLite format 3\0"
HEADER_BYTES = 100
PAGE_SIZE_AT = slice(16, 18)  # big-endian; 1 means 65,536
PAGE_SIZES = {1 << k for k in range(9, 16)} | {1}


@dataclass(frozen=True)
class StoreFile:
    """The identity of the store file as opened: its path, device and inode."""

    path: Path
    device: int
    inode: int

    @classmethod
    def opened(cls, path: str | Path) -> StoreFile:
        """Called right after the store is opened: the file at ``path`` is the open one."""
        status = os.stat(path)
        return cls(Path(path), status.st_dev, status.st_ino)

    def problem(self) -> str | None:
        """Why the store is not usable, or None."""
        try:
            status = os.stat(self.path)
            with open(self.path, "rb") as fh:
                header = fh.read(HEADER_BYTES)
        except FileNotFoundError:
            return f"store file {self.path} was deleted under the server; restart it on a store"
        except OSError as error:
            return f"store file {self.path} cannot be read: {error.strerror}"
        if (status.st_dev, status.st_ino) != (self.device, self.inode):
            return f"store file {self.path} was replaced under the server; restart it to use the new file"
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
