"""What the file-system timeline costs (SPEC 3.10): `mosaic run` with it against the code before it.

    .venv/bin/python -m benchmarks.bench_timeline [--count 20000] [--rounds 3] [--workers 2]
                                                  [--base-commit e627ff0] [--dir D] [--json PATH]

Generates a year-profile corpus once (``mosaic.synth.year``, its mounts are Lustre:
every run is on a shared file system), extracts the code of ``--base-commit`` with
``git archive`` into a temporary folder, then runs ``mosaic run --workers W`` (single
run: representatives only) on the corpus with each tree in turn, interleaved (base,
new, new, base, ...) so that a change in the machine's load falls on both alike.
Each run starts from an empty output folder. Measured per run: CPU seconds of the
whole process tree (``os.times()`` of the children once the run has exited), wall
seconds, peak summed RSS of the tree (``bench_pipeline.TreeMemory``, sampled each
second), and for the new tree the bytes of ``run_activity`` in the store and the
load step's seconds (summary.json ``timings.load``). Targets: tree CPU <= 1.10x,
peak memory <= +100 MB. The store's bytes per valid run, times the valid runs of the
paper's year (462,502 logs, 68 % valid), give the timeline's bytes per year.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks.bench_pipeline import TreeMemory
from mosaic.synth.year import generate_year

REPO = Path(__file__).resolve().parents[1]
PAPER_VALID_RUNS = 462_502 * 0.68
TARGETS = {"cpu_ratio": 1.10, "memory_mb": 100.0}


def extract(commit: str, into: Path) -> Path:
    """The ``mosaic`` package of ``commit`` under ``into`` (no worktree, no checkout)."""
    data = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "mosaic"], check=True, capture_output=True
    )
    with tarfile.open(fileobj=io.BytesIO(data.stdout)) as archive:
        archive.extractall(into, filter="data")
    return into


def one_run(tree: Path, corpus: Path, out: Path, workers: int) -> dict[str, float]:
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    before = os.times()
    clock = time.perf_counter()
    with TreeMemory(1.0) as memory:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "mosaic",
                "run",
                "--workers",
                str(workers),
                "--out",
                str(out),
                str(corpus),
            ],
            env=env,
            cwd=out.parent,  # not this repository: `python -m` puts the working folder before PYTHONPATH
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    wall = time.perf_counter() - clock
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    result = {"cpu": cpu, "wall": wall, "peak_mb": memory.peak / 1e6}
    summary = json.loads((out / "summary.json").read_text())
    result["valid"] = float(summary["funnel"]["valid"])
    result["load_seconds"] = float(summary["timings"].get("load", 0.0))
    db = sqlite3.connect(out / "store.sqlite")
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "run_activity" in tables:
            row = db.execute("SELECT count(*), coalesce(sum(length(parts)), 0) FROM run_activity").fetchone()
            result["activity_runs"], result["activity_bytes"] = float(row[0]), float(row[1])
    finally:
        db.close()
    result["store_mb"] = (out / "store.sqlite").stat().st_size / 1e6
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--base-commit", default="e627ff0")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.dir or Path(tmp)
        corpus = root / f"year-{args.count}-seed{args.seed}"
        if not corpus.exists():
            generate_year(corpus, args.count, seed=args.seed)
        trees = {"base": extract(args.base_commit, Path(tmp) / "base"), "new": REPO}
        runs: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
        for round_ in range(args.rounds):
            order = ("base", "new") if round_ % 2 == 0 else ("new", "base")
            for name in order:
                result = one_run(trees[name], corpus, Path(tmp) / f"out-{name}", args.workers)
                runs[name].append(result)
                print(
                    f"round {round_ + 1} {name:4s} cpu {result['cpu']:7.2f} s  wall {result['wall']:6.2f} s  "
                    f"peak {result['peak_mb']:7.1f} MB  store {result['store_mb']:6.2f} MB",
                    flush=True,
                )
    med = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    new = med["new"]
    per_run = new.get("activity_bytes", 0.0) / max(new.get("activity_runs", 0.0), 1.0)
    report = {
        "count": args.count,
        "rounds": args.rounds,
        "workers": args.workers,
        "base_commit": args.base_commit,
        "median": med,
        "cpu_ratio": new["cpu"] / med["base"]["cpu"],
        "wall_ratio": new["wall"] / med["base"]["wall"],
        "memory_delta_mb": new["peak_mb"] - med["base"]["peak_mb"],
        "activity_bytes_per_run": per_run,
        "activity_bytes_per_paper_year": per_run * PAPER_VALID_RUNS,
        "targets": TARGETS,
    }
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
