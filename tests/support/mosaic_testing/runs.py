"""Watching a `mosaic run` from outside while it works: how far its store got, waiting for it."""

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen

import pytest


def done_count(out: Path) -> int:
    """Logs validated plus logs categorized so far, read while the run writes."""
    try:
        with sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True, timeout=5) as db:
            return sum(
                db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("logs", "results")
            )
    except sqlite3.OperationalError:  # not created yet
        return 0


def wait_for(
    condition: Callable[[], bool],
    timeout: float = 180.0,
    what: str = "condition",
    process: Popen | None = None,
    stderr: Path | None = None,
) -> None:
    """Generous: a loaded 2-core CI machine starts dispynode and its workers slowly.

    A watched ``process`` that exits first fails the wait at once, with its ``stderr`` file.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if process is not None and process.poll() is not None and not condition():
            said = stderr.read_text() if stderr is not None else ""
            pytest.fail(f"exited {process.returncode} before {what}: {said}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
