"""Cost of the I/O signatures (docs/method.md 3.12) beside the single-run year's.

    .venv/bin/python -m benchmarks.bench_signatures [--count 20000] [--groups 2000] [--dir D]

Side by side, in one run:

* the year: a synthetic year of ``--count`` logs (``mosaic.synth.year``), ``mosaic run
  --workers 2`` on it as a subprocess (tree CPU, as benchmarks/year.py measures it). That
  run makes every valid run's series in its workers and the signatures at its end;
* what of it is the signatures': the series of a sample of its logs (``series_fact``
  alone, CPU per log, times the valid logs) and ``signature.compute_all`` on its store
  again (CPU: a first call pays the imports of PyWavelets and scikit-learn and their
  first-call set-up, a fixed cost of a run; then every signature is dropped and built
  again, what grows with the groups), against the year's tree CPU less both: target
  <= 10 %; and once more over the same runs (a rerun: every signature kept);
* many groups: ``--groups`` groups of 12 noisy runs each (``mosaic.synth.signatures``,
  DXT-like, 4,096-step series) in a store, ``compute_all`` over them: CPU per group;
* store growth: bytes of ``run_series`` and ``signatures`` (SQLite's dbstat) per run.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.year import corpus, run_mosaic
from mosaic.config import DEFAULT
from mosaic.corpus.scan import scan
from mosaic.corpus.store import Store
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic.series import save_series, series_fact, series_row
from mosaic.signature import compute_all
from mosaic.synth.signatures import DESIGNS, noisy_runs

TARGET_SHARE = 0.10
SAMPLE_LOGS = 1000


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
    except sqlite3.OperationalError:  # SQLite built without dbstat: the blobs alone
        return int(db.execute("SELECT sum(length(series)) FROM run_series").fetchone()[0] or 0)
    finally:
        db.close()


def series_cpu_per_log(root: Path, sample: int) -> tuple[float, int]:
    """CPU seconds of series_fact per log over up to ``sample`` of the year's plain logs."""
    spent, done = 0.0, 0
    for ref in scan([str(root)]):
        if done >= sample:
            break
        if ref.archive:
            continue
        try:
            log = read_log(ref.location)
        except LogError:  # the year holds broken logs on purpose
            continue
        started = time.process_time()
        series_fact(log, DEFAULT.signature_series_max_points)
        spent += time.process_time() - started
        done += 1
    return spent / max(done, 1), done


def year_side(folder: Path, count: int) -> dict[str, float]:
    root, _ = corpus(folder, count, 2019)
    out = folder / "out"
    run = run_mosaic(root, out, workers=2)
    valid = int(run["summary"]["funnel"]["valid"])
    per_log, sampled = series_cpu_per_log(root, SAMPLE_LOGS)
    started = time.process_time()
    import pywt  # noqa: F401 - what compute_all imports on first use, once a process
    import sklearn.neighbors  # noqa: F401

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
            stored = db.execute("SELECT count(*) FROM run_series").fetchone()[0]
    series = per_log * valid
    rest = run["cpu_seconds"] - series - signatures
    return {
        "logs": count,
        "valid": valid,
        "runs_with_series": stored,
        "groups_with_signature": groups,
        "year_cpu": run["cpu_seconds"],
        "series_cpu": series,
        "series_ms_per_log": 1e3 * per_log,
        "sampled_logs": sampled,
        "signatures_cpu": signatures,
        "rerun_cpu": rerun,
        "imports_cpu": imports + first - signatures,
        "share": (series + signatures) / rest,
        "share_with_imports": (series + signatures + imports) / (rest - imports),
        "bytes_per_run": table_bytes(out / "store.sqlite", ("run_series", "signatures")) / max(stored, 1),
    }


def groups_side(folder: Path, groups: int) -> dict[str, float]:
    rng = np.random.default_rng(7)
    path = folder / "groups.sqlite"
    with Store(path) as store:
        run = 0
        for g in range(groups):
            design = DESIGNS[g % len(DESIGNS)]
            rows = []
            for series in noisy_runs(design, 12, rng, requests=256):
                run += 1
                rows.append(series_row(run, f"{g}:/apps/{design.name}", series))
            with store._atomic() as db:
                save_series(db, rows)
        started = time.process_time()
        reasons = compute_all(store, DEFAULT)
        spent = time.process_time() - started
    return {
        "groups": groups,
        "runs": run,
        "without": len(reasons),
        "cpu": spent,
        "ms_per_group": 1e3 * spent / groups,
        "bytes_per_run": table_bytes(path, ("run_series", "signatures")) / run,
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
    print(
        f"  of it, series ({year['series_ms_per_log']:.3f} ms a log, {year['sampled_logs']} sampled)"
        f"  {year['series_cpu']:8.2f} s"
    )
    print(f"  of it, compute_all                       {year['signatures_cpu']:8.2f} s")
    print(f"  of it, imports and first-call set-up (once a run)  {year['imports_cpu']:.2f} s")
    print(f"  compute_all again over the same runs (every signature kept) {year['rerun_cpu']:.3f} s")
    verdict = "met" if year["share"] <= TARGET_SHARE else "missed"
    print(
        f"  signatures / the rest: {year['share']:.1%} (target <= {TARGET_SHARE:.0%}: {verdict}); "
        f"with the imports {year['share_with_imports']:.1%}"
    )
    print(f"  store growth: {year['bytes_per_run']:.0f} B a run (run_series + signatures)")
    print(
        f"{many['groups']:,} groups of 12 DXT-like runs: compute_all {many['cpu']:.2f} s CPU, "
        f"{many['ms_per_group']:.1f} ms a group ({many['without']} without a signature); "
        f"store growth {many['bytes_per_run']:.0f} B a run"
    )


if __name__ == "__main__":
    main()
