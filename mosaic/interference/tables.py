"""The store tables of SPEC 3.11, and the lookup's read of one group's row (no heavy
import: mosaic.corpus.store takes them)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from typing import Any

from typing_extensions import TypedDict

from mosaic.corpus.connections import read_only

APP_CONTENTION = """
CREATE TABLE IF NOT EXISTS app_contention (
    group_key TEXT PRIMARY KEY, label TEXT, n INTEGER, rho REAL, p REAL, q REAL, slope REAL,
    slope_lo REAL, slope_hi REAL, traits TEXT, body TEXT, computed_at REAL);
"""
RUN_CONTENTION = """
CREATE TABLE IF NOT EXISTS run_contention (
    run INTEGER PRIMARY KEY, group_key TEXT, slowdown REAL, slow INTEGER, cause TEXT, computed_at REAL);
"""
LABEL_CONFLICTS = """
CREATE TABLE IF NOT EXISTS label_conflicts (
    victim TEXT, aggressor TEXT, coef REAL, lo REAL, hi REAL, runs INTEGER, conflicting INTEGER,
    reason TEXT, computed_at REAL, PRIMARY KEY (victim, aggressor)) WITHOUT ROWID;
"""
SCHEMA = APP_CONTENTION + RUN_CONTENTION + LABEL_CONFLICTS
DROP_RUNS_SQL = "DELETE FROM run_contention WHERE run IN ({runs})"  # prune's one line (store._drop_runs)


class ContentionSummary(TypedDict):
    """How the group's I/O time follows the other jobs' load on its file systems (SPEC 3.11),
    as the last `mosaic run` computed it."""

    label: str
    """sensitive, insensitive, not exposed, not enough runs, or inconclusive."""
    n: int
    """Measured runs behind it (I/O time and load known)."""
    rho: float | None
    """Spearman's rho of normalized I/O time (s per byte) against load."""
    p: float | None
    """Its one-sided p (asymptotic, or permutation below contention_permutation_below runs)."""
    q: float | None
    """That p, Benjamini-Hochberg adjusted across the groups tested."""
    slope: float | None
    """Slowdown per byte/s of other jobs' load (OLS), with its bootstrap interval."""
    slope_lo: float | None
    slope_hi: float | None
    traits: list[str]
    """Aggressor traits most of its runs carry: n1, metadata, bandwidth, small_requests."""
    words: str | None
    """The slope in words: the slowdown at the load of a busy hour."""
    computed_at: float | None
    """When it was computed (seconds since the epoch)."""


def load_contention(db: sqlite3.Connection, group_key: str) -> ContentionSummary | None:
    """The stored sensitivity of one group (its ``app_contention`` row), or None: one primary-key
    read, as a lookup may do."""
    try:
        row = db.execute(
            "SELECT label, n, rho, p, q, slope, slope_lo, slope_hi, traits, body, computed_at "
            "FROM app_contention WHERE group_key = ?",
            (group_key,),
        ).fetchone()
    except sqlite3.OperationalError:  # a store opened read-only before the table existed
        return None
    if row is None:
        return None
    body = json.loads(row[9]) if row[9] else {}
    return {
        "label": row[0],
        "n": row[1],
        "rho": row[2],
        "p": row[3],
        "q": row[4],
        "slope": row[5],
        "slope_lo": row[6],
        "slope_hi": row[7],
        "traits": json.loads(row[8]) if row[8] else [],
        "words": body.get("words"),
        "computed_at": row[10],
    }


IDENTITY_KEYS = ("run", "job_id", "uid", "application", "group_key")


def visible_cause(stored: Mapping[str, Any], operator: bool, caller_uid: int | None = None) -> dict[str, Any]:
    """The cause as a reader may see it (the visibility rule, docs/security.md): the
    operator sees the other job's identity; a read token sees "another job" with its share
    and traits, and the identity only when the other job is the caller's own (its uid is
    the one the request names)."""
    shown = dict(stored)
    if shown.get("kind") != "run" or operator:
        return shown
    if caller_uid is not None and shown.get("uid") == caller_uid:
        return shown
    for key in IDENTITY_KEYS:
        shown.pop(key, None)
    shown["job"] = "another job"
    return shown


def run_contention(
    db: sqlite3.Connection, run: int, operator: bool = False, caller_uid: int | None = None
) -> dict[str, Any] | None:
    """One run's slowdown, slow flag and cause as the reader may see it (the visibility
    rule, :func:`visible_cause`: by default a read token's view), or None when the
    analysis has not judged it."""
    try:
        row = db.execute("SELECT slowdown, slow, cause FROM run_contention WHERE run = ?", (run,)).fetchone()
    except sqlite3.OperationalError:  # a store opened read-only before the table existed
        return None
    if row is None:
        return None
    cause = json.loads(row[2]) if row[2] else None
    return {
        "slowdown": row[0],
        "slow": bool(row[1]),
        "cause": visible_cause(cause, operator, caller_uid) if cause else None,
    }


def stored_contention(
    store: str | os.PathLike[str], run: int, caller_uid: int | None
) -> dict[str, Any] | None:
    """:func:`run_contention` of ``run`` read from the store file ``store`` read-only (not
    changed, nor upgraded), as the run's owner ``caller_uid`` may see it; None when the
    store is missing, unreadable, or has not judged the run."""
    with read_only(store) as db:
        if db is None:
            return None
        try:
            return run_contention(db, run, caller_uid=caller_uid)
        except sqlite3.Error:
            return None
