"""The per-run performance and load tables as the data contracts give them, filled by hand
(the steps that write them live elsewhere), and the interference logs' inputs built from
darshan-parser --perf and the truth's wall windows."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

# Exactly as the contracts give them (per-run performance: layout 4; per-run activity).
CONTRACT_SQL = """
CREATE TABLE IF NOT EXISTS run_performance(run INTEGER PRIMARY KEY, group_key TEXT, start_epoch REAL,
    end_epoch REAL, read_bytes REAL, write_bytes REAL, read_time REAL, write_time REAL,
    io_time REAL, metadata_per_second REAL, mode TEXT, lower_bound INTEGER, body TEXT);
CREATE TABLE IF NOT EXISTS run_load(run INTEGER, fs TEXT, read_rate REAL,
    write_rate REAL, meta_rate REAL, other_jobs INTEGER, io_seconds REAL,
    computed_at REAL, PRIMARY KEY (run, fs));
CREATE TABLE IF NOT EXISTS run_overlaps(run INTEGER, other INTEGER, fs TEXT, bytes REAL, share REAL,
    PRIMARY KEY (run, other, fs));
"""
INTERFERENCE = Path(__file__).resolve().parents[2] / "data" / "darshan-logs-interference"
THROTTLED = "/mnt/mosaic-ifs"


def fill(
    store: Any,
    performance: Iterable[Sequence[Any]] = (),
    load: Iterable[Sequence[Any]] = (),
    overlaps: Iterable[Sequence[Any]] = (),
    jobs: Iterable[Sequence[Any]] = (),
) -> None:
    """Create the contract tables in ``store`` and insert rows: performance rows are
    (run, group_key, write_bytes, io_time, metadata_per_second, mode, body), load rows the
    table's (run, fs, read_rate, write_rate, meta_rate, other_jobs, io_seconds), overlaps
    (run, other, fs, bytes, share), jobs (run, file, job_id, group_key, categories)."""
    with store._atomic() as db:
        for statement in CONTRACT_SQL.split(";"):
            if statement.strip():
                db.execute(statement)
        db.executemany(
            "INSERT INTO run_performance (run, group_key, write_bytes, read_bytes, io_time, "
            "metadata_per_second, mode, body, lower_bound) VALUES (?, ?, ?, 0, ?, ?, ?, ?, 0)",
            [(*row[:6], json.dumps(row[6]) if row[6] is not None else None) for row in performance],
        )
        db.executemany(
            "INSERT INTO run_load (run, fs, read_rate, write_rate, meta_rate, other_jobs, io_seconds, "
            "computed_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
            list(load),
        )
        db.executemany("INSERT INTO run_overlaps VALUES (?, ?, ?, ?, ?)", list(overlaps))
        db.executemany(
            "INSERT INTO jobs (run, file, job_id, group_key, categories) VALUES (?, ?, ?, ?, ?)",
            [(*row[:4], json.dumps(row[4]) if row[4] is not None else None) for row in jobs],
        )


def interference_truth() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (INTERFERENCE / "truth.jsonl").read_text().splitlines() if line]


def interference_rows() -> dict[str, list[tuple[Any, ...]]]:
    """The 34 real runs' contract rows, interim: the POSIX agg_time_by_slowest of
    darshan-parser --perf as the I/O time, and the load and overlaps from the truth's wall
    windows (each other run's bytes spread evenly over its window; only runs on the
    throttled file system load each other; the control's file system carries nothing)."""
    truth = interference_truth()
    perf = {}
    with open(INTERFERENCE / "darshan-parser-perf.tsv") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["module"] == "POSIX":
                perf[row["file"]] = (float(row["total_bytes"]), float(row["agg_time_by_slowest_s"]))
    start = np.array([t["wall"][0] for t in truth])
    end = np.array([t["wall"][1] for t in truth])
    moved = np.array([perf[t["file"]][0] for t in truth])
    throttled = np.array([t["app"] != "ram_ckpt" for t in truth])
    overlap = np.clip(
        np.minimum(end[:, None], end[None, :]) - np.maximum(start[:, None], start[None, :]), 0, None
    )
    np.fill_diagonal(overlap, 0.0)
    during = overlap * (moved / (end - start))[None, :] * (throttled[:, None] & throttled[None, :])
    seconds = end - start
    load = during.sum(axis=1) / seconds
    rows: dict[str, list[tuple[Any, ...]]] = {"performance": [], "load": [], "overlaps": [], "jobs": []}
    for i, t in enumerate(truth):
        key = f"0:/opt/mosaic-ifs/bin/{t['app']}"
        mode = "N:1" if t["app"] == "hdf_bulk" else "N:N"
        body = {"job": {"mode": mode}}
        rows["performance"].append((t["job_id"], key, moved[i], perf[t["file"]][1], 0.5, mode, body))
        fs = THROTTLED if throttled[i] else "/"
        rows["load"].append(
            (t["job_id"], fs, 0.0, load[i], 0.0, int(np.count_nonzero(during[i])), seconds[i])
        )
        total = during[i].sum()
        for j in np.flatnonzero(during[i] > 0):
            rows["overlaps"].append((t["job_id"], truth[j]["job_id"], fs, during[i, j], during[i, j] / total))
        rows["jobs"].append((t["job_id"], t["file"], str(t["job_id"]), key, None))
    return rows
