"""What SPEC 3.9 (each run's performance) costs: e627ff0 against this tree, side by side.

    .venv/bin/python -m benchmarks.perf_cost [--count 20000] [--rounds 3] [--workers 2]
        [--old CHECKOUT] [--tree NAME=CHECKOUT ...] [--corpus FOLDER] [--dir FOLDER]

One sample year (`mosaic synth year --count N`, written by THIS tree's code, or
``--corpus``) is run by `mosaic run --workers W` of each tree in interleaved rounds (old,
new, then new, old, ...: the machine's drift falls on all), each a subprocess with its
tree first on PYTHONPATH. ``--tree NAME=CHECKOUT`` (repeatable) puts more trees between
e627ff0 and this one (an integration branch, say): each gets its ratio to e627ff0 and
this tree its ratio to each. Per run: wall, tree CPU (the process tree's, sampled as benchmarks/year.py
does), peak tree RSS, the store's size; the medians, the ratios (targets: tree CPU
<= 1.10x, peak RSS <= +50 MB) and the store's growth per valid run. ``--old``: a checkout
of e627ff0 (default: a git worktree of it made in a temporary folder, removed after).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.year import measured_run

HERE = Path(__file__).resolve().parents[1]
BASE = "e627ff0"


def run_tree(tree: Path, corpus: Path, out: Path, workers: int) -> dict[str, float]:
    """`mosaic run` of ``tree`` over ``corpus``: wall, tree CPU, peak RSS, store bytes, valid runs."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    measured = measured_run(
        [sys.executable, "-m", "mosaic"], corpus, out, workers, env=env, cwd=tree, stdout=subprocess.DEVNULL
    )
    store = out / "store.sqlite"
    db = sqlite3.connect(store)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        valid = db.execute("SELECT count(*) FROM logs WHERE status = 'ok'").fetchone()[0]
        logs = db.execute("SELECT count(*) FROM logs").fetchone()[0]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        perf_rows = (
            db.execute("SELECT count(*) FROM run_performance").fetchone()[0]
            if "run_performance" in tables
            else 0
        )
    finally:
        db.close()
    return {
        **measured,
        "store_bytes": float(store.stat().st_size),
        "traces_bytes": float((out / "traces.jsonl").stat().st_size),
        "valid_runs": float(valid),
        "logs": float(logs),
        "performance_rows": float(perf_rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--old", type=Path, default=None, help=f"a checkout of {BASE}")
    parser.add_argument("--dir", type=Path, default=None, help="where the corpus and outputs go")
    parser.add_argument("--corpus", type=Path, default=None, help="an existing corpus (no synth year)")
    parser.add_argument("--tree", action="append", default=[], help="NAME=CHECKOUT, another tree to run")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="mosaic-perf-cost-"))
    work.mkdir(parents=True, exist_ok=True)
    old, made_worktree = args.old, False
    if old is None:
        old = work / "old"
        if not old.exists():
            subprocess.run(
                ["git", "-C", str(HERE), "worktree", "add", "--detach", str(old), BASE], check=True
            )
            made_worktree = True
    try:
        corpus = args.corpus or work / "year"
        if not corpus.exists():
            subprocess.run(
                [sys.executable, "-m", "mosaic", "synth", "year", str(corpus), "--count", str(args.count)],
                check=True,
                env=dict(os.environ, PYTHONPATH=str(HERE)),
                stdout=subprocess.DEVNULL,
            )
        trees = {"old": old, **dict(_named(t) for t in args.tree), "new": HERE}
        results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name in order:
                found = run_tree(trees[name], corpus, work / f"out-{name}", args.workers)
                results[name].append(found)
                print(
                    f"round {round_ + 1} {name}: " + json.dumps({k: round(v, 2) for k, v in found.items()}),
                    flush=True,
                )
        print(report(results, int(results["new"][0]["logs"]), args.workers))
    finally:
        if made_worktree:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(old)], check=False)
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


def _named(text: str) -> tuple[str, Path]:
    name, _, path = text.partition("=")
    if not name or not path:
        raise SystemExit(f"--tree takes NAME=CHECKOUT, not {text!r}")
    return name, Path(path)


def report(results: dict[str, list[dict[str, float]]], count: int, workers: int) -> str:
    def median(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    rounds = len(results["new"])
    names = list(results)
    heads = [BASE if n == "old" else "this tree" if n == "new" else n for n in names]
    lines = [
        f"\n{count:,} logs of a sample year ({median('new', 'valid_runs'):,.0f} valid), "
        f"mosaic run --workers {workers}, {rounds} interleaved rounds (medians)",
        f"{'':24}" + "".join(f"{h:>12}" for h in heads) + "".join(f"{'/' + h:>12}" for h in heads[:-1]),
    ]
    for key, label in (
        ("wall_seconds", "wall (s)"),
        ("cpu_seconds", "tree CPU (s)"),
        ("peak_rss_mb", "peak RSS (MB)"),
    ):
        values = [median(n, key) for n in names]
        ratios = [values[-1] / v if v else float("nan") for v in values[:-1]]
        lines.append(
            f"{label:24}" + "".join(f"{v:12.2f}" for v in values) + "".join(f"{r:11.3f}x" for r in ratios)
        )
    for name, head in zip(names[1:-1], heads[1:-1]):
        a, b = median("old", "cpu_seconds"), median(name, "cpu_seconds")
        lines.append(f"{head} tree CPU / {BASE}: {b / a if a else float('nan'):.3f}x")
    rss = median("new", "peak_rss_mb") - median("old", "peak_rss_mb")
    lines.append(f"{'peak RSS difference':24}{rss:+24.1f} MB (this tree against {BASE})")
    valid = median("new", "valid_runs")
    growth = (median("new", "store_bytes") - median("old", "store_bytes")) / max(valid, 1.0)
    traces = (median("new", "traces_bytes") - median("old", "traces_bytes")) / max(
        median("new", "valid_runs"), 1.0
    )
    new_mb, old_mb = median("new", "store_bytes") / 1e6, median("old", "store_bytes") / 1e6
    lines.append(f"store: {new_mb:.1f} MB against {old_mb:.1f} MB")
    rows = median("new", "performance_rows")
    lines.append(f"store growth per valid run: {growth:,.0f} bytes ({rows:,.0f} performance rows)")
    lines.append(f"traces.jsonl growth per valid run: {traces:,.0f} bytes")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
