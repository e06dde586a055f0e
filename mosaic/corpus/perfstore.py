"""The store's per-run performance (lookup layout 4, SPEC 3.9): ``run_performance``.

One row per valid run, keyed by the store's run identity
(:func:`mosaic.corpus.profiles.run_identity`): filled by ``mosaic run`` from the
validation facts of every valid log and by the service's posts (``Store.record``),
deleted with the run by ``Store.prune``. A NULL time is "not known"; ``body`` is the
JSON of the whole performance object. The application's history (UMAMI: p10 / p50 /
p90 of each metric over its runs) is read from here, never from the representatives only.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.corpus.connections import read_only

RUN_PERFORMANCE_TABLE = """
CREATE TABLE IF NOT EXISTS run_performance (
    run INTEGER PRIMARY KEY, group_key TEXT, start_epoch REAL, end_epoch REAL,
    read_bytes REAL, write_bytes REAL, read_time REAL, write_time REAL, io_time REAL,
    metadata_per_second REAL, mode TEXT, lower_bound INTEGER, body TEXT);
CREATE INDEX IF NOT EXISTS run_performance_by_group ON run_performance (group_key, start_epoch);
"""
COLUMNS = (
    "run, group_key, start_epoch, end_epoch, read_bytes, write_bytes, read_time, write_time, "
    "io_time, metadata_per_second, mode, lower_bound, body"
)
INSERT = f"INSERT OR REPLACE INTO run_performance ({COLUMNS}) VALUES ({', '.join('?' * 13)})"


def row(run: int, group_key: str, job: Mapping[str, Any], perf: dict[str, Any]) -> tuple[Any, ...]:
    """The table row of one run's performance object."""
    figure = perf["job"]
    return (
        int(run),
        group_key,
        job.get("start_epoch"),
        job.get("end_epoch"),
        figure["read"]["bytes"],
        figure["write"]["bytes"],
        figure["read"]["time"],
        figure["write"]["time"],
        figure["total"]["time"],
        figure.get("metadata_per_second"),
        figure.get("mode"),
        int(bool(figure.get("lower_bound"))),
        json.dumps(perf, separators=(",", ":")),
    )


def fact_rows(facts: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The rows (key ``performance_row``, built by the worker) of the valid facts of one
    validation batch."""
    return [
        fact["performance_row"]
        for fact in facts
        if fact.get("status") == "ok" and fact.get("performance_row")
    ]


def to_layout_4(db: sqlite3.Connection, layout: int) -> None:
    """Layout 4: the run_performance table. Runs stored before hold no counters to
    compute it from: they have no row until ``mosaic run`` reads their logs again."""
    del layout
    for statement in RUN_PERFORMANCE_TABLE.split(";"):
        if statement.strip():
            db.execute(statement)


# ----- the application's history (UMAMI) -----

METRICS = (  # (name, SQL expression over run_performance, unit, higher is faster)
    ("read_bandwidth", "CASE WHEN read_time > 0 AND read_bytes > 0 THEN read_bytes / read_time END", "B/s"),
    (
        "write_bandwidth",
        "CASE WHEN write_time > 0 AND write_bytes > 0 THEN write_bytes / write_time END",
        "B/s",
    ),
    ("io_time", "io_time", "s"),
    ("metadata_per_second", "metadata_per_second", "/s"),
)
FASTER_WHEN_HIGHER = {
    "read_bandwidth": True,
    "write_bandwidth": True,
    "io_time": False,
    "metadata_per_second": True,
}


def history(
    db: sqlite3.Connection, group_key: str, values: bool = False, exclude: int | None = None
) -> dict[str, Any]:
    """Per metric, p10 / p50 / p90 over the group's runs that have it (``runs`` each),
    and ``runs``: the group's runs with a performance row. Runs with a lower bound
    (partial logs) are left out: their figures are not the run's. ``values``: keep each
    metric's sorted values too (to place one run among them; never sent whole); ``exclude``:
    a run left out (the run being placed, when the store holds it)."""
    found = db.execute(
        "SELECT " + ", ".join(f"{expr}" for _, expr, _ in METRICS) + ", lower_bound "
        "FROM run_performance WHERE group_key = ? AND run IS NOT ?",
        (group_key, exclude),
    ).fetchall()
    whole = [tuple(r)[:-1] for r in found if not tuple(r)[-1]]
    out: dict[str, Any] = {"runs": len(found), "complete_runs": len(whole), "metrics": {}}
    for at, (name, _, unit) in enumerate(METRICS):
        found_values = np.array([r[at] for r in whole if r[at] is not None], np.float64)
        if not len(found_values):
            continue
        p10, p50, p90 = np.percentile(found_values, [10, 50, 90])
        out["metrics"][name] = {
            "runs": int(len(found_values)),
            "p10": float(p10),
            "p50": float(p50),
            "p90": float(p90),
            "unit": unit,
        }
        if values:
            out["metrics"][name]["values"] = sorted(found_values.tolist())
    return out


def placement(value: float | None, metric: dict[str, Any], name: str) -> dict[str, Any] | None:
    """Where one run's ``value`` sits among its application's runs of a metric:
    ``slower_than`` = the share of those runs it is slower than (bandwidth below
    theirs, or time above theirs), ``faster_than`` the other way, ties in neither."""
    if value is None or not metric or not metric.get("values"):
        return None
    values = np.asarray(metric["values"], np.float64)
    higher = FASTER_WHEN_HIGHER[name]
    slower = np.count_nonzero(values > value) if higher else np.count_nonzero(values < value)
    faster = np.count_nonzero(values < value) if higher else np.count_nonzero(values > value)
    return {
        "value": float(value),
        "runs": int(len(values)),
        "slower_than": float(slower / len(values)),
        "faster_than": float(faster / len(values)),
        "median": float(metric["p50"]),
    }


def run_metrics(perf: dict[str, Any]) -> dict[str, float | None]:
    """One run's values of :data:`METRICS` from its performance object."""
    figure = perf.get("job", {})
    return {
        "read_bandwidth": figure.get("read", {}).get("bandwidth"),
        "write_bandwidth": figure.get("write", {}).get("bandwidth"),
        "io_time": figure.get("total", {}).get("time"),
        "metadata_per_second": figure.get("metadata_per_second"),
    }


def stored_history(
    store: str | os.PathLike[str], group_key: str, exclude: int | None = None
) -> tuple[dict[str, Any] | None, str]:
    """The history of ``group_key`` in the store file ``store``, read-only (the store is not
    changed, nor upgraded), with values; or None and why not."""
    with read_only(store) as db:
        if db is None:
            return None, f"no store at {Path(store)}"
        try:
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_performance'").fetchone() is None:
                return None, "the store is of a layout before 4: it holds no run's performance yet"
            found = history(db, group_key, values=True, exclude=exclude)
        except sqlite3.Error as error:
            return None, f"the store could not be read: {error}"
    if not found["metrics"]:
        return found, f"the store holds no other whole run of {group_key}"
    return found, ""


def history_or_none(db: sqlite3.Connection, group_key: str) -> dict[str, Any] | None:
    """:func:`history` (without values), or None when the store has no run_performance (a
    store of a layout before 4 opened read-only) or none of the group's runs has a row."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_performance'").fetchone() is None:
        return None
    found = history(db, group_key)
    return found if found["runs"] else None
