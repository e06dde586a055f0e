"""Cost of the I/O signatures (docs/method.md 3.12) beside the single-run year's.

    .venv/bin/python -m benchmarks.bench_signatures [--count 20000] [--groups 2000] [--dir D]

Side by side, in one run:

* the year: a synthetic year of ``--count`` logs (``mosaic.synth.year``), ``mosaic run
  --workers 2`` on it as a subprocess (tree CPU, as benchmarks/year.py measures it). That
  run keeps every valid run's activity (SPEC 3.10's, which the timeline needs anyway) and
  builds the signatures at its end, each from its group's most recent runs' series made
  from their activity;
* what of it is the signatures': ``signature.compute_all`` on its store again (CPU: a
  first call pays the import of PyWavelets and its first-call set-up,
  a fixed cost of a run; then every signature is dropped and built again, what grows with
  the groups), against the year's tree CPU less it: target <= 10 %; and once more over the
  same runs (a rerun: every signature kept);
* many groups: ``--groups`` groups of 12 noisy runs each (``mosaic.synth.signatures``,
  DXT-like, 4,096-step series, stored as activity) in a store, ``compute_all`` over them:
  CPU per group;
* store growth: bytes of ``signatures`` and ``signature_reasons`` (SQLite's dbstat) per
  run: a run's series is its activity's, stored once for the timeline.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.year import corpus, run_mosaic
from mosaic.activity import FsActivity, RunActivity
from mosaic.config import DEFAULT
from mosaic.corpus.store import Store
from mosaic.corpus.timeline import activity_row, save_activity
from mosaic.series import RunSeries
from mosaic.signature import compute_all
from mosaic.synth.signatures import DESIGNS, noisy_runs

TARGET_SHARE = 0.10
TABLES = ("signatures", "signature_reasons")


def table_bytes(path: Path, tables: tuple[str, ...]) -> int:
    """Bytes SQLite's pages hold for these tables and their indexes."""
    db = sqlite3.connect(path)
    try:
        names = ",".join("?" * len(tables))
        row = db.execute(
            f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({names}) OR tbl_name IN ({names})",
            tables + tables,
        ).fetchone()
        return int(row[0] or 0)
    except sqlite3.OperationalError:  # SQLite built without dbstat: the bodies alone
        return int(db.execute("SELECT sum(length(body)) FROM signatures").fetchone()[0] or 0)
    finally:
        db.close()


def as_activity(series: RunSeries, start_epoch: float) -> RunActivity:
    """A series as the activity it would come from: each step an interval with its bytes."""
    start, end = series.edges[:-1], series.edges[1:]
    fs = FsActivity(start, end, series.read, series.write, np.zeros(len(start)), shared=True)
    return RunActivity(series.source, start_epoch, series.run_time, {"/scratch": fs})


def year_side(folder: Path, count: int) -> dict[str, float]:
    root, _ = corpus(folder, count, 2019)
    out = folder / "out"
    run = run_mosaic(root, out, workers=2)
    valid = int(run["summary"]["funnel"]["valid"])
    started = time.process_time()
    import pywt  # noqa: F401 - what compute_all imports on first use, once a process

    imports = time.process_time() - started
    with Store(out / "store.sqlite") as store:
        with store._atomic() as db:
            db.execute("DELETE FROM signatures")  # the run's own: none kept
        started = time.process_time()
        compute_all(store, DEFAULT)
        first = time.process_time() - started  # with what its first call imports and builds
        with store._atomic() as db:
            db.execute("DELETE FROM signatures")  # none kept: every group built again
        started = time.process_time()
        compute_all(store, DEFAULT)
        signatures = time.process_time() - started
        started = time.process_time()
        compute_all(store, DEFAULT)  # a rerun over the same runs: every signature kept
        rerun = time.process_time() - started
        with store._snapshot() as db:
            groups = db.execute("SELECT count(*) FROM signatures").fetchone()[0]
            stored = db.execute("SELECT count(*) FROM run_activity").fetchone()[0]
    rest = run["cpu_seconds"] - signatures
    return {
        "logs": count,
        "valid": valid,
        "runs_with_activity": stored,
        "groups_with_signature": groups,
        "year_cpu": run["cpu_seconds"],
        "signatures_cpu": signatures,
        "rerun_cpu": rerun,
        "imports_cpu": imports + first - signatures,
        "share": signatures / rest,
        "share_with_imports": (signatures + imports) / (rest - imports),
        "bytes_per_run": table_bytes(out / "store.sqlite", TABLES) / max(stored, 1),
    }


def groups_side(folder: Path, groups: int) -> dict[str, float]:
    rng = np.random.default_rng(7)
    path = folder / "groups.sqlite"
    with Store(path) as store:
        run = 0
        for g in range(groups):
            design = DESIGNS[g % len(DESIGNS)]
            rows, owners = [], []
            for series in noisy_runs(design, 12, rng, requests=256):
                run += 1
                rows.append(activity_row(run, as_activity(series, 1e9 + run)))
                owners.append((run, f"{g}:/apps/{design.name}", 1e9 + run))
            save_activity(store, rows)
            with store._atomic() as db:
                db.executemany(
                    "INSERT INTO run_performance (run, group_key, start_epoch) VALUES (?, ?, ?)", owners
                )
        started = time.process_time()
        reasons = compute_all(store, DEFAULT)
        spent = time.process_time() - started
    return {
        "groups": groups,
        "runs": run,
        "without": len(reasons),
        "cpu": spent,
        "ms_per_group": 1e3 * spent / groups,
        "bytes_per_run": table_bytes(path, TABLES) / run,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mosaic-signatures-") as tmp:
        folder = args.dir or Path(tmp)
        year = year_side(folder, args.count)
        many = groups_side(folder, args.groups)
    print(
        f"year of {year['logs']:,} logs ({year['valid']:,} valid, "
        f"{year['groups_with_signature']:,} signatures)"
    )
    print(f"  mosaic run --workers 2, tree CPU          {year['year_cpu']:8.2f} s")
    print(f"  of it, compute_all                       {year['signatures_cpu']:8.2f} s")
    print(f"  of it, imports and first-call set-up (once a run)  {year['imports_cpu']:.2f} s")
    print(f"  compute_all again over the same runs (every signature kept) {year['rerun_cpu']:.3f} s")
    verdict = "met" if year["share"] <= TARGET_SHARE else "missed"
    print(
        f"  signatures / the rest: {year['share']:.1%} (target <= {TARGET_SHARE:.0%}: {verdict}); "
        f"with the imports {year['share_with_imports']:.1%}"
    )
    print(f"  store growth: {year['bytes_per_run']:.0f} B a run (signatures and their reasons)")
    print(
        f"{many['groups']:,} groups of 12 DXT-like runs: compute_all {many['cpu']:.2f} s CPU, "
        f"{many['ms_per_group']:.1f} ms a group ({many['without']} without a signature); "
        f"store growth {many['bytes_per_run']:.0f} B a run"
    )


if __name__ == "__main__":
    main()
