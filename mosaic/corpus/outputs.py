"""A run's output files, written aside and put in place together once all are complete.

Until 2026-11-25 the outputs were opened with ``"w"`` at their final paths,
so a rerun that hit a full disk left ``traces.jsonl`` cut short beside the
previous ``summary.json``. Now each output is written to
``NAME.tmp`` in the same folder (same file system: the rename is atomic),
flushed and fsynced; only when every one is complete are they renamed over
the previous outputs, back to back, and the folder is fsynced. A run that
fails before that point (full disk, Ctrl-C, a crash) leaves the previous
outputs as they were and removes its temporaries; after a kill -9 the next
run removes them (their names are fixed). Only a crash between the renames
(microseconds apart, nothing left to write) can leave a mix of old and new
outputs, which the next run replaces. The price: while it writes, a run
needs room for its new outputs beside the previous ones.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TextIO

TEMPORARY_SUFFIX = ".tmp"


def temporary(path: Path) -> Path:
    """Where the output `path` is written before it is complete."""
    return path.with_name(path.name + TEMPORARY_SUFFIX)


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write`` the file at its temporary name, then rename it over `path`: a reader
    (or a killed ``mosaic figures``) never leaves a half-written figure or report
    where the previous one was. One file at a time, unlike :class:`OutputSet`:
    a figure is whole on its own."""
    temp = temporary(path)
    try:
        write(temp)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


class OutputSet:
    """The outputs `names` of folder `out`, replaced all together by :meth:`commit`.

    Use it as a context manager while holding the folder's run lock: entering
    removes the temporaries a killed run left; leaving without a commit
    removes this run's.
    """

    def __init__(self, out: Path, names: Sequence[str]) -> None:
        self.paths = [out / name for name in names]
        self._files: dict[str, TextIO] = {}

    def __enter__(self) -> OutputSet:
        self._discard()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._discard()

    def open(self, name: str) -> TextIO:
        """The temporary file of output `name`, open for writing."""
        path = next(path for path in self.paths if path.name == name)
        self._files[name] = handle = open(temporary(path), "w", encoding="utf-8")
        return handle

    def commit(self) -> None:
        """Make every output durable under its temporary name, then rename all into place."""
        for handle in self._files.values():
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
        for path in self.paths:
            if path.name in self._files:
                os.replace(temporary(path), path)
        self._files.clear()
        folder = os.open(self.paths[0].parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)  # the renames themselves survive a power loss
        finally:
            os.close(folder)

    def _discard(self) -> None:
        """Close and remove the temporaries not committed (this run's, or a killed run's)."""
        for handle in self._files.values():
            with contextlib.suppress(OSError):  # on a full disk, flushing what is left fails again
                handle.close()
        self._files.clear()
        for path in self.paths:
            temporary(path).unlink(missing_ok=True)


STAGING_HEX = 12  # random hex digits of a staging folder's name


@contextlib.contextmanager
def staging_folder(out: Path, prefix: str) -> Iterator[Path]:
    """A new folder ``OUT/PREFIX<hex>`` to fill before it is swapped in, removed after.

    The folder is locked (``flock`` on its descriptor) for as long as its run
    lives, so a later run tells the folders killed runs left (nobody holds
    their lock: the kernel dropped it) from those of runs still drawing, and
    removes only the former (before 2026-11-29 each ``kill -9`` of ``mosaic
    figures`` left one for good). The folder has the umask's mode, as the
    folder it replaces (mkdtemp would give 0700).
    """
    remove_stale(out, prefix)
    while True:
        path = out / f"{prefix}{uuid.uuid4().hex[:STAGING_HEX]}"
        path.mkdir()
        held = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(held, fcntl.LOCK_EX)  # waits while a cleaner that found it unlocked removes it
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.fstat(held), os.stat(path)):
                break
        os.close(held)  # removed between its creation and the lock: another name
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(held)


def remove_stale(out: Path, prefix: str) -> list[Path]:
    """Remove the staging folders of ``out`` whose lock no live process holds; the removed."""
    name = re.compile(re.escape(prefix) + f"[0-9a-f]{{{STAGING_HEX}}}")
    removed = []
    for path in out.glob(prefix + "*"):
        if not name.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
            continue
        try:
            held = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # gone meanwhile
            continue
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        except BlockingIOError:
            pass  # a live run's
        finally:
            os.close(held)
    return removed
