"""The store step of SPEC 3.11, run at the end of ``mosaic run`` (never at lookup time).

It reads the per-run performance (``run_performance``), load (``run_load``) and overlaps
(``run_overlaps``) tables, the runs' groups and labels (``jobs``, ``profile_label_sets``),
and replaces three tables of its own in one transaction:

- ``app_contention``: per application, its label, Spearman rho, p, BH q, the slope of its
  slowdown per byte/s of load with the bootstrap interval, its aggressor traits;
- ``run_contention``: per run with a slowdown, the slowdown, ``slow``, and its cause;
- ``label_conflicts``: the victim x aggressor label matrix.

A store without the performance or load tables (written by other steps) gets nothing
and a reason; a run whose time or load is unknown is left out of the tests (counted).
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from mosaic.config import Config
from mosaic.interference import conflicts, sensitivity, slow_runs
from mosaic.interference.tables import load_contention

__all__ = ["analyse", "analyse_safely", "compute", "load_contention"]

if TYPE_CHECKING:
    from mosaic.corpus.store import Store


def _runs(db: sqlite3.Connection) -> dict[str, np.ndarray | list[Any]]:
    """Every run of run_performance with its load (NaN: unknown), its labels and identity. A
    partial log's I/O time is a lower bound (``lower_bound``): unknown here, as a NULL one."""
    cursor = db.cursor()
    cursor.row_factory = None  # plain tuples: the store's row class costs per row
    rows = cursor.execute(
        "SELECT p.run, coalesce(p.group_key, j.group_key), "
        "coalesce(p.read_bytes, 0) + coalesce(p.write_bytes, 0), "
        "CASE WHEN coalesce(p.lower_bound, 0) THEN NULL ELSE p.io_time END, p.metadata_per_second, "
        "p.mode, p.body, l.load, l.io_seconds, j.job_id, j.categories, "
        "(SELECT s.label_set FROM profile_label_sets s "
        " WHERE s.group_key = coalesce(p.group_key, j.group_key) "
        " ORDER BY s.runs DESC, s.label_set LIMIT 1) "
        "FROM run_performance p LEFT JOIN jobs j ON j.run = p.run "
        "LEFT JOIN (SELECT run, CASE WHEN sum(io_seconds) > 0 THEN "
        "  sum(io_seconds * (coalesce(read_rate, 0) + coalesce(write_rate, 0))) / sum(io_seconds) "
        "  ELSE avg(coalesce(read_rate, 0) + coalesce(write_rate, 0)) END AS load, "
        "  sum(io_seconds) AS io_seconds "
        "  FROM run_load GROUP BY run) l ON l.run = p.run "
        "ORDER BY coalesce(p.group_key, j.group_key), p.run"
    ).fetchall()
    labels = []
    for row in rows:
        own, usual = row[10], row[11]
        picked = json.loads(own) if own else json.loads(usual) if usual else []
        labels.append([str(label) for label in picked or []])
    return {
        "run": np.array([r[0] for r in rows], dtype=np.int64),
        "group": [str(r[1]) for r in rows],
        "bytes": np.array([r[2] for r in rows], dtype=np.float64),
        "io_time": np.array([math.nan if r[3] is None else r[3] for r in rows], dtype=np.float64),
        "meta": [r[4] for r in rows],
        "mode": [r[5] for r in rows],
        "body": [r[6] for r in rows],
        "load": np.array([math.nan if r[7] is None else r[7] for r in rows], dtype=np.float64),
        "io_seconds": np.array([math.nan if r[8] is None else r[8] for r in rows], dtype=np.float64),
        "job_id": [r[9] for r in rows],
        "labels": labels,
    }


def _split(groups: list[str]) -> list[tuple[str, slice]]:
    """(group, slice) of consecutive equal keys (the rows come ordered by group)."""
    out: list[tuple[str, slice]] = []
    start = 0
    for i in range(1, len(groups) + 1):
        if i == len(groups) or groups[i] != groups[start]:
            out.append((groups[start], slice(start, i)))
            start = i
    return out


def _lookup(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Positions in ``ids`` of each of ``wanted`` (-1 where absent)."""
    if ids.size == 0:
        return np.full(wanted.shape, -1, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    pos = np.clip(np.searchsorted(ids[order], wanted), 0, ids.size - 1)
    return np.where(ids[order][pos] == wanted, order[pos], -1).astype(np.int64)


def _identity(group_key: str) -> tuple[int | None, str]:
    uid, _, application = group_key.partition(":")
    return (int(uid) if uid.lstrip("-").isdigit() else None), application


def analyse(store: Store, config: Config, now: float | None = None) -> dict[str, Any]:
    """Compute and replace app_contention, run_contention and label_conflicts; return counts."""
    computed_at = time.time() if now is None else now
    with store._snapshot() as db:  # one WAL snapshot: the tables agree
        runs = _runs(db)
        cursor = db.cursor()
        cursor.row_factory = None
        overlap_rows = cursor.execute(
            "SELECT run, other, sum(bytes) FROM run_overlaps GROUP BY run, other ORDER BY run, other"
        ).fetchall()
    return compute_and_write(store, runs, overlap_rows, config, computed_at)


def analyse_safely(store: Store, config: Config) -> dict[str, Any]:
    """:func:`analyse` at the end of `mosaic run`: a failure here is reported (stderr and
    the summary's ``contention``) and never costs the run its outputs, which are written."""
    try:
        return analyse(store, config)
    except (sqlite3.Error, ValueError, ArithmeticError, np.linalg.LinAlgError, MemoryError) as error:
        sys.stderr.write(f"warning: who slows whom not computed: {type(error).__name__}: {error}\n")
        return {"status": "failed", "reason": f"{type(error).__name__}: {error}"}


def comparable_time(
    io_time: np.ndarray, io_bytes: np.ndarray, spans: list[tuple[str, slice]], share: float
) -> np.ndarray:
    """The runs' I/O time, unknown (NaN) for a run that moved less than ``share`` of its group's
    median bytes: a test or failed run whose fixed costs (opens, a first small write) make its
    time per byte 100-1000x its group's, which would read as a slow run beside any load."""
    out = np.array(io_time, dtype=np.float64)
    for _, span in spans:
        moved = io_bytes[span]
        small = moved < share * np.median(moved) if moved.size else moved.astype(bool)
        out[span] = np.where(small, np.nan, out[span])
    return out


def compute(
    runs: dict[str, Any], overlap_rows: Iterable[tuple[int, int, float]], config: Config
) -> dict[str, Any]:
    """The three tables' rows from the per-run arrays (:func:`_runs`'s layout)."""
    n = runs["run"].size
    spans = _split(runs["group"])
    io_time = comparable_time(runs["io_time"], runs["bytes"], spans, config.contention_min_bytes_share)
    normalized = sensitivity.normalized_time(io_time, runs["bytes"])
    bodies = [json.loads(b) if b else None for b in runs["body"]]
    own_traits = [
        slow_runs.run_traits(mode, meta, slow_runs.mean_request_bytes(body), config)
        for mode, meta, body in zip(runs["mode"], runs["meta"], bodies)
    ]
    groups = [sensitivity.GroupRuns(key, io_time[s], runs["bytes"][s], runs["load"][s]) for key, s in spans]
    described = sensitivity.sensitivity(groups, config)
    # slowdowns and slow flags per group
    slowdown = np.full(n, np.nan)
    slow = np.zeros(n, dtype=bool)
    p95 = np.full(n, np.nan)
    for _, s in spans:
        judged = slow_runs.slowdowns(normalized[s], runs["load"][s], config)
        slowdown[s], slow[s] = judged["slowdown"], judged["slow"]
        p95[s] = math.nan if judged["p95_load"] is None else judged["p95_load"]
    # overlaps
    rows = list(overlap_rows)
    o_run = np.array([r[0] for r in rows], dtype=np.int64)
    o_other = np.array([r[1] for r in rows], dtype=np.int64)
    o_bytes = np.array([r[2] or 0.0 for r in rows], dtype=np.float64)
    top = slow_runs.top_overlaps(o_run, o_other, o_bytes)
    top_at = _lookup(runs["run"], top["run"])  # index among the runs of each victim with overlaps
    other_at = _lookup(runs["run"], top["other"])  # and of its largest other (-1: not measured)
    top_of = dict(zip(top_at.tolist(), range(top_at.size)))
    caused: dict[str, int] = {}
    by_bandwidth: dict[str, int] = {}  # slow runs a group's run caused carrying most of the others' bytes
    causes: dict[int, str] = {}
    for i in np.flatnonzero(slow):
        k = top_of.get(int(i))
        entry = None if k is None else {key: top[key][k] for key in ("other", "share", "others")}
        j = None if k is None or other_at[k] < 0 else int(other_at[k])
        load = float(runs["load"][i])
        cause = slow_runs.cause(
            load,
            None if math.isnan(p95[i]) else float(p95[i]),
            entry,
            own_traits[j] if j is not None else [],
            config,
        )
        if cause["kind"] == slow_runs.RUN:
            other_group = runs["group"][j] if j is not None else None
            uid, application = _identity(other_group) if other_group else (None, None)
            cause.update(job_id=runs["job_id"][j] if j is not None else None, group_key=other_group, uid=uid,
                         application=application)  # fmt: skip
            if other_group:
                caused[other_group] = caused.get(other_group, 0) + 1
                if "bandwidth" in cause["traits"]:
                    by_bandwidth[other_group] = by_bandwidth.get(other_group, 0) + 1
        causes[int(i)] = json.dumps(cause)
    measured = np.flatnonzero(np.isfinite(slowdown))
    run_rows = [
        (int(runs["run"][i]), runs["group"][i], float(slowdown[i]), int(slow[i]), causes.get(int(i), "null"))
        for i in measured.tolist()
    ]
    # group traits: those of at least half its runs; "bandwidth" (not a run's own trait: a
    # share of others' bytes) once one of its runs was named for a slow run with it
    app_rows = []
    for (key, s), group in zip(spans, described):
        members = own_traits[s]
        counted = {t: sum(t in traits for traits in members) for t in slow_runs.TRAITS}
        counted["bandwidth"] = len(members) if by_bandwidth.get(key) else 0
        traits = [
            t for t in slow_runs.TRAITS if members and counted[t] * 2 >= len(members) and counted[t] > 0
        ]
        body = {**group, "caused_slow_runs": caused.get(key, 0), "slow_runs": int(slow[s].sum())}
        app_rows.append(
            (
                key,
                group["label"],
                group["n"],
                group["rho"],
                group["p"],
                group["q"],
                group["slope"],
                group["slope_lo"],
                group["slope_hi"],
                json.dumps(traits),
                json.dumps(body),
            )  # fmt: skip
        )
    # conflicts: the victims are the runs with a slowdown of the applications called
    # sensitive (their own test, BH-corrected, says the load slows them: a label pair is
    # not conflicting on the noise of applications that test shows no effect in); the
    # others are indexed among all runs
    sensitive = np.zeros(n, dtype=bool)
    for (_, s), group in zip(spans, described):
        sensitive[s] = group["label"] == sensitivity.SENSITIVE
    victims = measured[sensitive[measured]]
    victim_of = np.full(n, -1, dtype=np.int64)
    victim_of[victims] = np.arange(victims.size)
    v_at, o_at = _lookup(runs["run"], o_run), _lookup(runs["run"], o_other)
    ok = (v_at >= 0) & (o_at >= 0)
    ok[ok] &= victim_of[v_at[ok]] >= 0
    seconds = np.where(ok, runs["io_seconds"][np.where(ok, v_at, 0)], np.nan)
    ok &= np.isfinite(seconds) & (seconds > 0)
    fit_labels = [conflicts.fitted(labels) for labels in runs["labels"]]
    matrix = conflicts.fit(
        slowdown[victims],
        [fit_labels[i] for i in victims],
        victim_of[v_at[ok]],
        o_at[ok],
        o_bytes[ok] / seconds[ok],
        fit_labels,
        config,
    )
    return {"apps": app_rows, "runs": run_rows, "matrix": matrix}


def compute_and_write(
    store: Store,
    runs: dict[str, Any],
    overlap_rows: Iterable[tuple[int, int, float]],
    config: Config,
    now: float,
) -> dict[str, Any]:
    result = compute(runs, overlap_rows, config)
    pairs = result["matrix"]["pairs"]
    with store._atomic() as db:
        for table in ("app_contention", "run_contention", "label_conflicts"):
            db.execute(f"DELETE FROM {table}")
        db.executemany("INSERT INTO app_contention VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [(*row, now) for row in result["apps"]])  # fmt: skip
        db.executemany(
            "INSERT INTO run_contention VALUES (?, ?, ?, ?, ?, ?)", [(*row, now) for row in result["runs"]]
        )
        db.executemany(
            "INSERT INTO label_conflicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(p["victim"], p["aggressor"], p["coef"], p["lo"], p["hi"], p["runs"],
              None if p["conflicting"] is None else int(p["conflicting"]), p["reason"], now) for p in pairs],
        )  # fmt: skip
        db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('label_conflicts', ?)",
            (json.dumps({k: v for k, v in result["matrix"].items() if k != "pairs"}),),
        )
    labels: dict[str, int] = {}
    for row in result["apps"]:
        labels[row[1]] = labels.get(row[1], 0) + 1
    return {
        "status": "ok",
        "groups": len(result["apps"]),
        "labels": labels,
        "runs": len(result["runs"]),
        "slow": sum(row[3] for row in result["runs"]),
        "conflicting_pairs": sum(1 for p in pairs if p["conflicting"]),
        "sentence": conflicts.sentence(result["matrix"]),
        "matrix": {
            "runs": result["matrix"]["runs"],
            "pairs": [
                {k: p[k] for k in ("victim", "aggressor", "coef", "lo", "hi", "runs", "conflicting")}
                for p in pairs
            ],
        },
    }
