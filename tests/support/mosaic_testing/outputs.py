"""Read a run's outputs and the generator's truth; compare runs (all but timings)."""

import hashlib
import json
import sqlite3
from pathlib import Path

# What a run computes beyond its files, table by table: the content columns (no computed_at,
# no run-local bookkeeping), in a fixed order. SPEC 3.9-3.12 claim these are the same bits
# however the run went (workers, nodes, reruns, resumes).
STORE_CONTENT = {
    "run_performance": "SELECT * FROM run_performance ORDER BY run",
    "run_activity": "SELECT run, start_epoch, end_epoch, source, parts FROM run_activity ORDER BY run",
    "run_load": "SELECT run, fs, read_rate, write_rate, meta_rate, other_jobs, io_seconds FROM run_load "
    "ORDER BY run, fs",
    "run_overlaps": "SELECT * FROM run_overlaps ORDER BY run, other, fs",
    "timeline_week": "SELECT fs, slot, read_rate, write_rate, meta_rate, hours FROM timeline_week "
    "ORDER BY fs, slot",
    "signatures": "SELECT group_key, runs, body FROM signatures ORDER BY group_key",
}


def store_digests(path: Path) -> dict[str, str]:
    """A digest of each table of :data:`STORE_CONTENT` in the store file ``path``."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {
            table: hashlib.sha256(repr(db.execute(sql).fetchall()).encode()).hexdigest()
            for table, sql in STORE_CONTENT.items()
        }
    finally:
        db.close()


def comparable(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("timings")
    return {
        "traces": (out / "traces.jsonl").read_text(),
        "evicted": (out / "evicted.jsonl").read_text(),
        "summary": summary,
        "store": store_digests(out / "store.sqlite"),
    }


def lines(out: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (out / name).read_text().splitlines()]


def truth(corpus: Path) -> list[dict]:
    """The generator's ground truth: file, valid, reason, group, heaviest..."""
    return [json.loads(line) for line in (corpus / "truth.jsonl").read_text().splitlines()]
