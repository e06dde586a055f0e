"""`make bench`: the quick version of every benchmark in benchmarks/, one after another.

    .venv/bin/python -m benchmarks [NAME ...]

Each script runs as ``python -m benchmarks.NAME`` with the small sizes in
``QUICK`` (the whole set takes ~10-15 min on the 2-core machine), prints its
own table, and a final line per script says how long it took and whether it
exited cleanly. The full-size runs are each script's defaults
(``make bench-year`` for the Blue Waters year). A script found in
benchmarks/ without a ``QUICK`` entry is listed as skipped, so a new
benchmark must say what its quick version is.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"__init__", "__main__"}
# Arguments of the quick run; "{tmp}" becomes a fresh temporary folder.
QUICK: dict[str, list[str]] = {
    "bench_reader": ["--min-time", "0.05"],
    "bench_bombs": ["{tmp}", "--zeros-mb", "100", "--sparse-gib", "10"],
    "bench_categorize": ["--light", "1", "500", "--heavy", "5"],
    "bench_fft": ["--cases", "5"],
    "bench_heap": ["--heavy", "2", "--calls", "20"],
    "bench_stats": ["--traces", "10000"],
    "bench_synth": ["--counts", "2000"],
    "bench_pipeline": ["--sizes", "2000", "--data", "{tmp}"],
    "bench_timeline": ["--count", "2000", "--rounds", "2", "--dir", "{tmp}"],
    "load_resolution": [],
    "bench_service": ["--seconds", "5", "--warmup", "1", "--count", "300"],
    "bench_verdict": ["{tmp}", "--seeds", "2", "--year", "300"],
    "holdout": ["{tmp}", "--seeds", "1"],
    "periodicity_sources": ["{tmp}", "--seeds", "1", "--year", "300"],
    "year": ["--count", "5000", "--dir", "{tmp}"],
    "scaleout": ["--count", "2000", "--dir", "{tmp}"],
    "hosts": ["--count", "2000", "--dir", "{tmp}"],
    "bench_profiles": ["--sizes", "10", "1000", "--posts", "50"],
    "bench_store_years": ["--runs", "200000", "--groups", "10000", "--samples", "500", "--dir", "{tmp}"],
    "year_profiles": ["--count", "5000", "--dir", "{tmp}"],
    "bench_slurm": ["--jobs", "3", "--submissions", "10"],
    "interference_power": ["--groups", "20", "--seeds", "1"],
    "bench_interference": ["--groups", "200", "--runs", "30", "--big", "2000", "--dir", "{tmp}"],
    "perf_cost": ["--count", "2000", "--rounds", "2", "--dir", "{tmp}"],
    "bench_forecast": ["--weeks", "3"],
    "bench_contention": ["--count", "2000"],
    "bench_signatures": ["--count", "3000", "--groups", "200", "--dir", "{tmp}"],
    "contention_acceptance": ["--count", "2000", "--dir", "{tmp}"],
}


def scripts() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.py") if p.stem not in NOT_BENCHMARKS)


def run_one(name: str) -> tuple[float, int]:
    """Run one quick benchmark in its own process; (seconds, exit status)."""
    with tempfile.TemporaryDirectory(prefix=f"mosaic-{name}-") as tmp:
        args = [arg.replace("{tmp}", tmp) for arg in QUICK[name]]
        print(f"\n=== {name} {' '.join(args)}", flush=True)
        started = time.perf_counter()
        status = subprocess.run(
            [sys.executable, "-m", f"benchmarks.{name}", *args], cwd=HERE.parent
        ).returncode
        return time.perf_counter() - started, status


def main() -> None:
    chosen = sys.argv[1:] or scripts()
    results = {}
    for name in chosen:
        if name not in QUICK:
            results[name] = "skipped: no quick settings in benchmarks/__main__.py"
            continue
        seconds, status = run_one(name)
        results[name] = f"{seconds:6.0f} s  " + ("ok" if status == 0 else f"FAILED ({status})")
    print("\n=== make bench")
    for name, outcome in results.items():
        print(f"{name:<18} {outcome}")
    if any("FAILED" in outcome for outcome in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
