"""Cost of the application profiles in the store: a post, a lookup, a rescan.

    .venv/bin/python -m benchmarks.bench_profiles [--sizes 10 1000 20000] [--posts 200] [--dir D]

For each group size N: a real SQLite store whose group holds N runs (real
SPEC 4 objects: one periodic writer's log categorized, then posted under new
names with other byte counts), then, side by side in this process:

* post: ``Store.record`` of one more run (a transaction: jobs, applications,
  the run's summary row and its counters), median of ``--posts``;
* lookup: ``Store.application`` (counters, then the group's rows read in one
  range scan for the exact medians and p10-p90), median of ``--posts``;
* post elsewhere: the same, for a run of another application of the same
  store (a group growing from nothing): what the store's size alone adds;
* post + lookup: a post, then the lookup of its group, one pair after
  another (a lookup of a big group fills SQLite's page cache with the
  group's rows, so the next post finds its pages colder);
* rescan: recounting that group's counters from its rows (``profiles.rebuild``),
  what each post would cost if it rebuilt its group instead of moving counters.

Claim: a post costs the same whatever its group's size (incremental: what it
costs more in a bigger store, it costs in a small group of that store too); a
lookup grows with N and stays in milliseconds at 20,000 runs (the paper's
LAMMPS group had ~12,000; the calibrated year's largest has 1,709). The
machine is shared: compare sizes within one run.
"""

from __future__ import annotations

import argparse
import copy
import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from mosaic.analysis.categorize import categorize_trace
from mosaic.config import Config
from mosaic.corpus import profiles
from mosaic.corpus.store import Store
from mosaic.synth.corpus import Identity, generate_runs
from mosaic.synth.scenarios import Periodic, Scenario
from mosaic.trace import trace_from_bytes

UID, APP = 7000, "/apps/ckpt"
ELSEWHERE = "/apps/other"  # the application of the "post elsewhere" runs


def template() -> dict:
    """One categorized run of a writer that checkpoints every 600 s."""
    scenario = Scenario(
        "bench_profiles", ranks=4, run_time=None, periodic=(Periodic("write", 600.0, 0.1, 2e9, 10),)
    )
    made = next(
        generate_runs(scenario, np.random.default_rng(1), Identity(UID, "u", APP), "b", 0, 1, Config())
    )
    config = Config()
    return categorize_trace(trace_from_bytes(made.data, made.name, config), config)


def variant(base: dict, i: int, rng: np.random.Generator, app: str = APP) -> dict:
    result = copy.deepcopy(base)
    result["job"]["application"] = app
    result.pop("group", None)  # the store groups it by uid and application
    result["file"] = f"run-{app.rsplit('/', 1)[-1]}-{i:07d}.darshan"
    result["job"]["job_id"] = str(i)
    result["job"]["start"] = f"2019-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00Z"
    result["write"]["bytes"] *= float(rng.uniform(0.3, 1.0))
    return result


def timed(call: Callable[[Any], object], arguments: list) -> list[float]:
    """Seconds of each ``call(argument)``, one after another."""
    seconds = []
    for argument in arguments:
        started = time.perf_counter()
        call(argument)
        seconds.append(time.perf_counter() - started)
    return seconds


def median_ms(samples: list[float]) -> float:
    return 1e3 * float(np.median(samples))


def measure(folder: Path, base: dict, size: int, posts: int) -> dict:
    rng = np.random.default_rng(size)
    path = folder / f"store-{size}.sqlite"
    with Store(path) as store:
        started = time.perf_counter()
        for i in range(size):
            store.record(variant(base, i, rng))
        fill = time.perf_counter() - started
        post = timed(store.record, [variant(base, i, rng) for i in range(size, size + posts)])
        elsewhere = timed(store.record, [variant(base, i, rng, ELSEWHERE) for i in range(posts)])
        lookup = timed(lambda app: store.application(UID, app), [APP] * posts)
        interleaved = timed(
            lambda result: (store.record(result), store.application(UID, APP)),
            [variant(base, i, rng) for i in range(size + posts, size + 2 * posts)],
        )
        answer = store.application(UID, APP)
        assert answer is not None and answer["profile"]["runs"] == size + 2 * posts
    db = sqlite3.connect(path, isolation_level=None)
    rescan = []
    for _ in range(max(posts // 10, 3)):
        db.execute("BEGIN IMMEDIATE")
        started = time.perf_counter()
        profiles.rebuild(db, "SELECT ?", (f"{UID}:{APP}",))
        rescan.append(time.perf_counter() - started)
        db.execute("ROLLBACK")
    db.close()
    return {
        "runs": size,
        "fill_seconds": fill,
        "post_ms": median_ms(post),
        "post_elsewhere_ms": median_ms(elsewhere),
        "post_and_lookup_ms": median_ms(interleaved),
        "lookup_ms": median_ms(lookup),
        "rescan_ms": median_ms(rescan),
        "store_mb": path.stat().st_size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 20000])
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    base = template()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        rows = [measure(Path(tmp), base, size, args.posts) for size in args.sizes]
    print(
        f"{'runs in group':>14} {'post ms':>9} {'elsewhere':>10} {'lookup ms':>10} {'post+lookup':>12} "
        f"{'rescan ms':>10} {'store MB':>9}"
    )
    for row in rows:
        print(
            f"{row['runs']:>14,} {row['post_ms']:>9.3f} {row['post_elsewhere_ms']:>10.3f} "
            f"{row['lookup_ms']:>10.3f} {row['post_and_lookup_ms']:>12.3f} {row['rescan_ms']:>10.3f} "
            f"{row['store_mb']:>9.1f}"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
