"""Tar archives whose first member is no log, before a log: what reading an archive in
place must skip without reading it through (the tests of ``mosaic.darshan.archive`` and
``benchmarks/bench_bombs.py`` build them here, one way)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Literal

from typing_extensions import Buffer

FILLER = "day/filler.bin"  # the member that is no log
WriteMode = Literal["w", "w:gz", "w:bz2", "w:xz"]


class Zeros(io.RawIOBase):
    """``size`` zero bytes, made as they are read: a member's content for ``tarfile.addfile``
    that is never held in memory."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Buffer) -> int:
        view = memoryview(buffer).cast("B")
        count = min(len(view), self.left)
        view[:count] = bytes(count)
        self.left -= count
        return count


def zero_member_tar(path: Path, size: int, mode: WriteMode, log_name: str, log: bytes) -> Path:
    """A tar (``mode``: "w", "w:gz", "w:bz2", "w:xz") of ``size`` zero bytes, then ``log``."""
    with tarfile.open(path, mode) as tar:
        info = tarfile.TarInfo(FILLER)
        info.size = size
        tar.addfile(info, io.BufferedReader(Zeros(size)))
        info = tarfile.TarInfo(log_name)
        info.size = len(log)
        tar.addfile(info, io.BytesIO(log))
    return path


def sparse_member_tar(path: Path, size: int, log_name: str, log: bytes) -> Path:
    """A plain tar whose first member is a ``size``-byte hole (nothing on disk), then ``log``."""
    with open(path, "wb") as fh:
        info = tarfile.TarInfo(FILLER)
        info.size = size
        fh.write(info.tobuf())  # a pax header first past ustar's 8 GiB
        fh.seek(fh.tell() + size)
        info = tarfile.TarInfo(log_name)
        info.size = len(log)
        fh.write(info.tobuf() + log + bytes(-len(log) % 512) + bytes(1024))
    return path
