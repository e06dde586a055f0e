"""Application profiles on the calibrated year, against the generator's truth.

    .venv/bin/python -m benchmarks.year_profiles [--count 462502] [--seed 2019] [--dir D]
                                                 [--workers 2] [--reuse] [--json PATH]

Generates the year (or reuses ``D/year-COUNT-seedSEED``, as ``benchmarks.year``
does), runs ``mosaic run --all-runs`` on it (``--reuse``: keep a finished
``D/out-COUNT-seedSEED-all``), then reads every group's profile from the
store (``Store.application``, as the service answers it) and compares it with
``truth.jsonl``:

* periodic groups (most of the group's valid runs have ``DIR_periodic`` among
  the truth's ``must`` labels): the share whose profile median period is
  within 10 % of the generator's period (``params.periodic[].period``, one
  per group: its runs share one template), and whose period class is the
  class of the generator's period;
* stability: per group, the truth's share of runs whose ``must`` label set
  (all families) equals the group's most common one, against the profile's
  ``stability``; over the groups whose every valid run is in the profile.
  The truth leaves out labels too close to a threshold to call, so two runs
  categorized alike may have different ``must`` sets: that share is a lower
  bound. The upper bound counts the runs whose truth accepts the profile's
  usual categories (every ``must`` label in it, no ``must_not`` label); a
  right profile lies between the two, and equals both where they meet.

Also timed: the profile part of publishing (``profiles.publish`` again on the
finished store, in one transaction rolled back) and the lookup of every group
(the largest one alone too). The machine is shared: compare times within one
run only.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from benchmarks.year import PAPER_YEAR_LOGS, corpus, default_dir, run_mosaic
from mosaic.corpus import profiles
from mosaic.corpus.store import Store
from mosaic.directions import DIRECTIONS

PERIOD_TOLERANCE = 0.10  # the "within 10 %"


def truth_groups(path: Path) -> dict[str, dict]:
    """Per group: valid runs, their ``must`` label sets, periodic runs and the period per direction."""
    groups: dict[str, dict] = defaultdict(
        lambda: {"runs": 0, "sets": Counter(), "bounds": Counter(), "periodic": Counter(), "period": {}}
    )
    with open(path) as fh:
        for line in fh:
            truth = json.loads(line)
            if not truth["valid"]:
                continue
            group = groups[truth["group"]]
            group["runs"] += 1
            must = frozenset(label for family in truth["families"].values() for label in family["must"])
            must_not = frozenset(
                label for family in truth["families"].values() for label in family["must_not"]
            )
            group["sets"][must] += 1
            group["bounds"][must, must_not] += 1
            for series in truth["params"].get("periodic", []):
                group["period"].setdefault(series["direction"], float(series["period"]))
            for direction in DIRECTIONS:
                group["periodic"][direction] += f"{direction}_periodic" in must
    return groups


def compare(store: Store, groups: dict[str, dict]) -> dict:
    """Profile against truth, per group; and the lookup times."""
    periods, stability, lookups = [], [], []
    largest = max(groups, key=lambda key: groups[key]["runs"])
    for key, truth in groups.items():
        uid, app = key.split(":", 1)
        started = time.perf_counter()
        answer = store.application(int(uid), app)
        lookups.append(time.perf_counter() - started)
        found = answer and answer["profile"]
        if not found:
            continue
        for direction, period in truth["period"].items():
            if truth["periodic"][direction] * 2 > truth["runs"]:
                measured = found[direction]["periodic"]["period_seconds"]
                median = measured["median"] if measured else None
                periods.append((key, direction, period, median, found[direction]["periodic"]["period_class"]))
        if found["runs"] == truth["runs"]:
            usual = set(found["usual_categories"])
            accepting = sum(
                n for (must, must_not), n in truth["bounds"].items() if must <= usual and not must_not & usual
            )
            strict = max(truth["sets"].values()) / truth["runs"]
            stability.append((key, truth["runs"], strict, found["stability"], accepting / truth["runs"]))
    started = time.perf_counter()
    uid, app = largest.split(":", 1)
    store.application(int(uid), app)
    largest_seconds = time.perf_counter() - started
    return {
        "periods": periods,
        "stability": stability,
        "lookup_seconds": lookups,
        "largest": (largest, groups[largest]["runs"], largest_seconds),
    }


def period_scores(rows: list[tuple]) -> dict:
    if not rows:
        return {"groups": 0}
    generated = np.array([row[2] for row in rows])
    measured = np.array([np.nan if row[3] is None else row[3] for row in rows])
    error = np.abs(measured - generated) / generated
    classes = np.array([row[4] if row[4] is not None else -99 for row in rows])
    same = classes == [profiles.period_class(p) for p in generated]
    return {
        "groups": len(rows),
        "within_10_percent": float(np.mean(error <= PERIOD_TOLERANCE)),
        "no_period": int(np.isnan(measured).sum()),
        "median_relative_error": float(np.nanmedian(error)),
        "max_relative_error": float(np.nanmax(error)) if np.isfinite(error).any() else None,
        "same_class": float(np.mean(same)),
        "misses": [row for row, e in zip(rows, error) if not e <= PERIOD_TOLERANCE][:5],
        "class_misses": [row for row, ok in zip(rows, same) if not ok][:5],
    }


def stability_scores(rows: list[tuple]) -> dict:
    if not rows:
        return {"groups": 0}
    runs = np.array([row[1] for row in rows])
    truth = np.array([row[2] for row in rows])
    found = np.array([row[3] for row in rows])
    upper = np.array([row[4] for row in rows])
    several = runs > 1
    diff = np.abs(found - truth)
    inside = (found >= truth - 1e-9) & (found <= upper + 1e-9)
    decided = np.abs(upper - truth) < 1e-9  # the truth's bounds meet
    return {
        "groups": len(rows),
        "groups_of_several_runs": int(several.sum()),
        "equal": float(np.mean(diff < 1e-9)),
        "equal_several_runs": float(np.mean(diff[several] < 1e-9)) if several.any() else None,
        "mean_abs_difference": float(diff.mean()),
        "truth_mean": float(truth[several].mean()) if several.any() else None,
        "profile_mean": float(found[several].mean()) if several.any() else None,
        "truth_mean_per_run": float(np.average(truth, weights=runs)),
        "profile_mean_per_run": float(np.average(found, weights=runs)),
        "profile_below_truth": float(np.mean(found < truth - 1e-9)),
        "profile_above_truth": float(np.mean(found > truth + 1e-9)),
        "within_truth_bounds": float(np.mean(inside)),
        "groups_truth_decided": int(decided.sum()),
        "equal_where_decided": float(np.mean(diff[decided] < 1e-9)) if decided.any() else None,
        "misses": [row for row, d in zip(rows, diff) if d >= 1e-9][:5],
        "outside_bounds": [row for row, ok in zip(rows, inside) if not ok][:5],
    }


def publish_seconds(store_path: Path) -> float:
    """profiles.publish of the store's last run again, rolled back (the part publishing adds)."""
    db = sqlite3.connect(store_path, isolation_level=None)
    try:
        run_id = int(db.execute("SELECT value FROM meta WHERE key = 'run'").fetchone()[0])
        db.execute("BEGIN IMMEDIATE")
        started = time.perf_counter()
        profiles.publish(db, run_id)
        seconds = time.perf_counter() - started
        db.execute("ROLLBACK")
    finally:
        db.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=PAPER_YEAR_LOGS)
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--dir", type=Path, default=None, help="Where the corpus and outputs go.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="Keep a finished --all-runs output.")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    folder = args.dir or default_dir(args.count)
    root, made = corpus(folder, args.count, args.seed)
    out = folder / f"out-{args.count}-seed{args.seed}-all"
    run = None
    if not (args.reuse and (out / "summary.json").exists()):
        run = run_mosaic(root, out, args.workers, all_runs=True)
        run = {key: run[key] for key in ("wall_seconds", "cpu_seconds", "peak_rss_mb")} | {
            "timings": run["summary"]["timings"]
        }
    started = time.perf_counter()
    groups = truth_groups(root / "truth.jsonl")
    truth_seconds = time.perf_counter() - started
    with Store(out / "store.sqlite") as store:
        found = compare(store, groups)
    lookups = np.array(found["lookup_seconds"])
    result = {
        "corpus": str(root),
        "generation": made,
        "run": run,
        "load_average": os.getloadavg(),
        "truth_seconds": truth_seconds,
        "groups": len(groups),
        "periods": period_scores(found["periods"]),
        "stability": stability_scores(found["stability"]),
        "lookup_ms": {
            "groups": len(lookups),
            "median": 1e3 * float(np.median(lookups)),
            "p99": 1e3 * float(np.quantile(lookups, 0.99)),
            "largest_group": found["largest"][:2],
            "largest_group_ms": 1e3 * found["largest"][2],
        },
        "profile_publish_seconds": publish_seconds(out / "store.sqlite"),
    }
    print(json.dumps(result, indent=1))
    path = args.json or folder / f"year-{args.count}-seed{args.seed}-profiles.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nfigures -> {path}")


if __name__ == "__main__":
    main()
