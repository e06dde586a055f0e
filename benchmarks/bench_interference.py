"""Who slows whom (SPEC 3.11) on a synthetic store: how long analyse() takes.

    .venv/bin/python -m benchmarks.bench_interference [--groups G] [--runs R] [--big N] [--dir D]

G groups of R runs and one group of N runs (a group of thousands), each run with 3
overlapping others and 4 labels of 16; a third of the groups sensitive. The contract
tables (run_performance, run_load, run_overlaps) are filled as the performance and load
steps would, then analyse() is timed whole (SQL reads, the statistics, the writes) and
the statistics alone (compute()). Prints seconds, runs per second and the labels found.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from mosaic.config import Config
from mosaic.corpus.store import Store
from mosaic.interference import analyse as step

CONTRACT = """
CREATE TABLE IF NOT EXISTS run_performance(run INTEGER PRIMARY KEY, group_key TEXT, start_epoch REAL,
    end_epoch REAL, read_bytes REAL, write_bytes REAL, read_time REAL, write_time REAL,
    io_time REAL, metadata_per_second REAL, mode TEXT, lower_bound INTEGER, body TEXT);
CREATE TABLE IF NOT EXISTS run_load(run INTEGER, fs TEXT, read_rate REAL, write_rate REAL, meta_rate REAL,
    other_jobs INTEGER, io_seconds REAL, computed_at REAL, PRIMARY KEY (run, fs));
CREATE TABLE IF NOT EXISTS run_overlaps(run INTEGER, other INTEGER, fs TEXT, bytes REAL, share REAL,
    PRIMARY KEY (run, other, fs));
"""
LABELS = [f"label_{k}" for k in range(16)]


def build(path: Path, groups: int, runs: int, big: int, seed: int = 3) -> int:
    rng = np.random.default_rng(seed)
    sizes = [runs] * groups + [big]
    key = np.repeat(np.arange(len(sizes)), sizes)
    n = key.size
    load = 5e7 * rng.lognormal(0, 1, n)
    sensitive = (key % 3 == 0).astype(float)
    io_time = 10 * (1 + sensitive * 1e-8 * load) * rng.lognormal(0, 0.2, n)
    others = rng.integers(0, n, size=(n, 3))
    share = rng.dirichlet(np.ones(3), size=n)
    labels = [json.dumps(sorted(rng.choice(LABELS, 4, replace=False).tolist())) for _ in range(n)]
    with Store(path) as store, store._atomic() as db:
        for statement in CONTRACT.split(";"):
            if statement.strip():
                db.execute(statement)
        db.executemany(
            "INSERT INTO run_performance (run, group_key, write_bytes, io_time, metadata_per_second, mode) "
            "VALUES (?, ?, 1e9, ?, ?, ?)",
            (
                (i, f"{key[i]}:/bin/app{key[i]}", io_time[i], 50.0, "N:1" if i % 7 == 0 else "N:N")
                for i in range(n)
            ),
        )
        db.executemany(
            "INSERT INTO run_load VALUES (?, '/scratch', 0, ?, 0, 3, 10.0, 0)",
            ((i, load[i]) for i in range(n)),
        )
        db.executemany(
            "INSERT OR IGNORE INTO run_overlaps VALUES (?, ?, '/scratch', ?, ?)",
            (
                (i, int(others[i, k]), load[i] * 10 * share[i, k], share[i, k])
                for i in range(n)
                for k in range(3)
            ),
        )
        db.executemany(
            "INSERT INTO jobs (run, file, job_id, group_key, categories) VALUES (?, ?, ?, ?, ?)",
            ((i, f"f{i}", str(i), f"{key[i]}:/bin/app{key[i]}", labels[i]) for i in range(n)),
        )
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--big", type=int, default=5000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "store.sqlite"
        n = build(path, args.groups, args.runs, args.big)
        config = Config()
        with Store(path) as store:
            clock, cpu = time.perf_counter(), time.process_time()
            summary = step.analyse(store, config)
            wall, used = time.perf_counter() - clock, time.process_time() - cpu
        print(f"runs {n:,} in {args.groups + 1:,} groups (one of {args.big:,})")
        print(f"analyse: {wall:.2f} s wall, {used:.2f} s CPU, {n / wall:,.0f} runs/s")
        print(f"labels {summary['labels']}; slow runs {summary['slow']:,}; conflicting pairs "
              f"{summary['conflicting_pairs']}")  # fmt: skip


if __name__ == "__main__":
    main()
