"""What the modules whose tables the store creates (the timeline, the signatures) need of a
:class:`~mosaic.corpus.store.Store`: its connections, as a Protocol. The store imports those
modules for their tables; typed against this, they never import the store back."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class StoreAccess(Protocol):
    def _snapshot(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read connection in one read transaction."""

    def _atomic(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write connection: the caller's statements as one transaction."""

    def _write(self, sql: str, rows: Iterable[Sequence[Any]] | None = None) -> None:
        """One statement (or one per row) in one transaction."""
