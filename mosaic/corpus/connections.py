"""What the modules whose tables the store creates (the timeline, the signatures) need of a
:class:`~mosaic.corpus.store.Store`: its connections, as a Protocol. The store imports those
modules for their tables; typed against this, they never import the store back. And a store
file opened read-only, for pages that read a store without owning it."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol


class StoreAccess(Protocol):
    def _snapshot(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read connection in one read transaction."""

    def _atomic(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write connection: the caller's statements as one transaction."""

    def _write(self, sql: str, rows: Iterable[Sequence[Any]] | None = None) -> None:
        """One statement (or one per row) in one transaction."""


@contextlib.contextmanager
def read_only(store: str | os.PathLike[str]) -> Iterator[sqlite3.Connection | None]:
    """The store file ``store`` opened read-only (never changed, nor upgraded to this
    version's layout), closed after; None when there is no such file."""
    path = Path(store)
    if not path.is_file():
        yield None
        return
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        yield db
    finally:
        db.close()
