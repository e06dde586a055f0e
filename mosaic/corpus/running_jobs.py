"""The running-jobs registry's table in the store (its rules: :mod:`mosaic.service.registry`).

Here, below the service, only what the store itself needs: the table (appended to
``store.SCHEMA``, so every store opened has it), when a row stops counting as running,
and what ``mosaic store prune`` drops. The batch layer never imports the service
(tests/test_layers.py), so these live in ``mosaic.corpus``.

One row per Slurm job id: ``state`` is ``running`` from its start post to its end post,
then ``ended`` (``ended_epoch`` set). A row whose end never came stops counting as running
at ``start + time_limit + grace`` (``time_limit`` NULL: UNLIMITED or unknown, at ``start +
unlimited_max``). ``updated`` is when the service last wrote the row.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

SCHEMA = """
CREATE TABLE IF NOT EXISTS running_jobs (
    job_id TEXT PRIMARY KEY, uid INTEGER, application TEXT, group_key TEXT, start_epoch REAL,
    time_limit REAL, nodes TEXT, tasks INTEGER, state TEXT, ended_epoch REAL, updated REAL);
CREATE INDEX IF NOT EXISTS running_jobs_by_state ON running_jobs (state, start_epoch);
"""
COLUMNS = (
    "job_id",
    "uid",
    "application",
    "group_key",
    "start_epoch",
    "time_limit",
    "nodes",
    "tasks",
    "state",
    "ended_epoch",
    "updated",
)
RUNNING, ENDED = "running", "ended"


def expires_sql(grace: str, unlimited_max: str) -> str:
    """SQL of the epoch at which a row stops counting as running (its end never came), from
    two bound parameter names."""
    return f"(start_epoch + coalesce(time_limit + {grace}, {unlimited_max}))"


def expires(start: float, time_limit: float | None, grace: float, unlimited_max: float) -> float:
    """:func:`expires_sql` in Python."""
    return start + (unlimited_max if time_limit is None else time_limit + grace)


def prune(
    db: sqlite3.Connection,
    now: float,
    before: str | None,
    keep_ended: float,
    grace: float,
    unlimited_max: float,
) -> int:
    """In the caller's transaction, drop the rows no longer running (ended, or past their
    expiry) for longer than ``keep_ended`` seconds, and those of them that started before
    ``before`` (an ISO date or time, UTC when it names no zone); how many. A running row is
    never dropped."""
    gone = f"(state = '{ENDED}' OR {expires_sql(':grace', ':unlimited')} <= :now)"
    since = f"coalesce(ended_epoch, {expires_sql(':grace', ':unlimited')})"
    cutoff = None
    if before is not None:
        when = datetime.fromisoformat(before)
        cutoff = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    dropped = db.execute(
        f"DELETE FROM running_jobs WHERE {gone} AND ({since} <= :now - :keep "
        "OR coalesce(start_epoch, ended_epoch) < :cutoff)",
        {"now": now, "keep": keep_ended, "grace": grace, "unlimited": unlimited_max, "cutoff": cutoff},
    ).rowcount
    return int(dropped)
