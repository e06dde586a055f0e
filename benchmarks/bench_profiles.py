"""Cost of the application profiles in the store: a post, a lookup, a rescan.

    .venv/bin/python -m benchmarks.bench_profiles [--sizes 10 1000 20000 1000000] [--posts 200]
                                                  [--dir D]

For each group size N: a real SQLite store whose group holds N runs (real
SPEC 4 objects: one periodic writer's log categorized; the group's first N
runs written into the tables in bulk, as N posts of it under new names with
other byte counts and starts over ten years would leave them; the checks
below confirm the counters), then, side by side in this process:

* post: ``Store.record`` of one more run (a transaction: jobs, applications,
  the run's summary row and its counters), median and p99 of ``--posts``;
  once with WAL's ``synchronous=NORMAL`` (``mosaic run``) and once with
  ``FULL`` (the service's: synced before the 200);
* lookup: ``Store.application`` (counters, then the group's
  ``profile_window_runs`` most recent rows in one range scan), median and
  p99; alone, then with another thread posting to another group the whole
  time (the service's other work: its posts take the write lock and the GIL);
* post elsewhere: the same, for a run of another application of the same
  store (a group growing from nothing): what the store's size alone adds;
* rescan: recounting that group's counters from its rows (``profiles.rebuild``),
  what each post would cost if it rebuilt its group instead of moving counters.

Claims: a post costs the same whatever its group's size (incremental); a
lookup costs the same too (a bounded window), p99 <= 5 ms at 1,000,000 runs
with posts going on. The machine is shared: compare sizes within one run.
"""

from __future__ import annotations

import argparse
import copy
import json
import sqlite3
import tempfile
import threading
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
    result["job"]["exe"] = f"{app} -in run.in"  # the job record: with the job id, the run's identity
    result.pop("group", None)  # the store groups it by uid and application
    result["file"] = f"run-{app.rsplit('/', 1)[-1]}-{i:07d}.darshan"
    result["job"]["job_id"] = str(i)
    result["job"]["start"] = f"2019-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00Z"
    result["write"]["bytes"] *= float(rng.uniform(0.3, 1.0))
    return result


TEN_YEARS = (np.datetime64("2016-01-01T00:00:00"), np.datetime64("2026-01-01T00:00:00"))
BULK_ROWS = 100_000  # rows a bulk transaction writes


def bulk_runs(
    db: sqlite3.Connection,
    keys: np.ndarray,
    label_sets: list[str],
    numbers: np.ndarray,
    rng: np.random.Generator,
    first: int = 0,
) -> None:
    """Runs written straight into the lookup tables, as that many posts would leave their rows
    (``keys[i]``, ``label_sets[i]``, ``numbers[i]`` for run ``i``; starts uniform over ten
    years; identities random, names made up); :func:`finish_bulk` then sets the counters."""
    count = len(keys)
    span = (TEN_YEARS[1] - TEN_YEARS[0]).astype("timedelta64[s]").astype(np.int64)
    seconds = rng.integers(0, span, count)
    starts = [f"{s}Z" for s in (TEN_YEARS[0] + seconds.astype("timedelta64[s]")).astype(str)]
    identities = rng.integers(-(1 << 63), (1 << 63) - 1, count, dtype=np.int64).tolist()
    packed = numbers.astype(profiles.PACKED)
    width = packed.shape[1] * packed.itemsize
    blob = packed.tobytes()
    total_bytes = (
        packed[:, profiles.NUMBERS.index("read_bytes")] + packed[:, profiles.NUMBERS.index("write_bytes")]
    ).tolist()
    run_time = packed[:, profiles.NUMBERS.index("run_time")].tolist()
    for low in range(0, count, BULK_ROWS):
        rows = range(low, min(low + BULK_ROWS, count))
        files = [
            f"{starts[i][:10].replace('-', '/')}/u_app_id{first + i}_{i % 97}-{seconds[i] % 86400}.darshan"
            for i in rows
        ]
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO jobs (run, file, job_id, group_key, start, total_bytes, run_time, categories) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    identities[i],
                    files[i - low],
                    str(first + i),
                    keys[i],
                    starts[i],
                    total_bytes[i],
                    run_time[i],
                    label_sets[i],
                )
                for i in rows
            ],
        )
        db.executemany(
            "INSERT INTO profile_runs (group_key, start, run, file, label_set, numbers) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    keys[i],
                    starts[i],
                    identities[i],
                    files[i - low],
                    label_sets[i],
                    blob[i * width : (i + 1) * width],
                )
                for i in rows
            ],
        )
        db.execute("COMMIT")


def finish_bulk(db: sqlite3.Connection) -> None:
    """Every group's counters recounted from its rows, its applications row from its runs."""
    db.execute("BEGIN")
    profiles.rebuild_all(db)
    db.execute(
        "INSERT OR REPLACE INTO applications SELECT g.group_key, CAST(substr(g.group_key, 1, "
        "instr(g.group_key, ':') - 1) AS INTEGER), substr(g.group_key, instr(g.group_key, ':') + 1), "
        "g.runs, g.last, j.file, j.total_bytes, j.run_time, j.categories FROM (SELECT group_key, "
        "count(*) AS runs, max(start) AS last, (SELECT run FROM jobs k WHERE k.group_key = jobs.group_key "
        "ORDER BY total_bytes DESC, run_time DESC, file LIMIT 1) AS heaviest FROM jobs "
        "GROUP BY group_key) AS g JOIN jobs j ON j.run = g.heaviest"
    )
    db.execute("COMMIT")


def one_group(path: Path, base: dict, size: int, rng: np.random.Generator) -> None:
    """A store whose group (UID, APP) holds ``size`` runs of ``base``, write bytes 0.3-1x."""
    Store(path).close()
    labels, packed = profiles.run_summary(base)
    numbers = np.tile(np.frombuffer(packed, profiles.PACKED), (size, 1))
    numbers[:, profiles.NUMBERS.index("write_bytes")] *= rng.uniform(0.3, 1.0, size)
    db = sqlite3.connect(path, isolation_level=None)
    bulk_runs(db, np.full(size, f"{UID}:{APP}", dtype=object), [labels] * size, numbers, rng, first=1 << 40)
    finish_bulk(db)
    db.close()


def timed(
    call: Callable[[Any], object], arguments: list, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Seconds of each ``call(argument)``, one after another (wall, or the clock given)."""
    seconds = []
    for argument in arguments:
        started = clock()
        call(argument)
        seconds.append(clock() - started)
    return seconds


def ms(samples: list[float]) -> dict[str, float]:
    """Median and p99 in milliseconds."""
    return {"p50": 1e3 * float(np.median(samples)), "p99": 1e3 * float(np.quantile(samples, 0.99))}


class Busy:
    """Another thread posting to another group of the same store until stopped: the
    service's other work beside a lookup (the write lock, the GIL, the page cache)."""

    def __init__(self, path: Path, base: dict) -> None:
        self.store = Store(path, durable=True)
        self.stop = threading.Event()
        self.posts = 0
        self.thread = threading.Thread(target=self._post, args=(base,), daemon=True)

    def _post(self, base: dict) -> None:
        rng = np.random.default_rng(99)
        while not self.stop.is_set():
            self.store.record(variant(base, 5_000_000 + self.posts, rng, "/apps/busy"))
            self.posts += 1

    def __enter__(self) -> Busy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.store.close()


def measure(folder: Path, base: dict, size: int, posts: int) -> dict:
    rng = np.random.default_rng(size)
    path = folder / f"store-{size}.sqlite"
    started = time.perf_counter()
    one_group(path, base, size, rng)
    fill = time.perf_counter() - started
    with Store(path) as store, Store(path, durable=True) as durable:
        answer = store.application(UID, APP)
        assert answer is not None and answer["runs"] == answer["profile"]["runs"] == size
        post = timed(store.record, [variant(base, i, rng) for i in range(size, size + posts)])
        post_full = timed(
            durable.record, [variant(base, i, rng) for i in range(size + posts, size + 2 * posts)]
        )
        elsewhere = timed(store.record, [variant(base, i, rng, ELSEWHERE) for i in range(posts)])
        lookup = timed(lambda app: store.application(UID, app), [APP] * posts)
        # this thread's CPU: what the lookup costs, without the waits of a shared machine
        lookup_cpu = timed(lambda app: store.application(UID, app), [APP] * posts, time.thread_time)
        with Busy(path, base) as busy:
            loaded = timed(lambda app: store.application(UID, app), [APP] * posts)
        answer = store.application(UID, APP)
        assert answer is not None and answer["profile"]["runs"] == size + 2 * posts
    db = sqlite3.connect(path, isolation_level=None)
    rescan = []
    for _ in range(3):
        db.execute("BEGIN IMMEDIATE")
        started = time.perf_counter()
        profiles.rebuild(db, "SELECT ?", (f"{UID}:{APP}",))
        rescan.append(time.perf_counter() - started)
        db.execute("ROLLBACK")
    db.close()
    return {
        "runs": size,
        "fill_seconds": fill,
        "post_ms": ms(post),
        "post_full_ms": ms(post_full),
        "post_elsewhere_ms": ms(elsewhere),
        "lookup_ms": ms(lookup),
        "lookup_busy_ms": ms(loaded),
        "lookup_cpu_ms": ms(lookup_cpu),
        "busy_posts": busy.posts,
        "rescan_ms": 1e3 * float(np.median(rescan)),
        "store_mb": path.stat().st_size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 20000, 1000000])
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    base = template()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        rows = [measure(Path(tmp), base, size, args.posts) for size in args.sizes]
    print(
        f"{'runs in group':>14} {'post p50/p99':>14} {'FULL p50/p99':>14} {'elsewhere':>10} "
        f"{'lookup p50/p99':>15} {'busy lookup p50/p99':>20} {'lookup CPU p50/p99':>19} {'rescan ms':>10} "
        f"{'store MB':>9}"
    )
    for row in rows:
        pair = "{0[p50]:.3f}/{0[p99]:.3f}".format
        print(
            f"{row['runs']:>14,} {pair(row['post_ms']):>14} {pair(row['post_full_ms']):>14} "
            f"{row['post_elsewhere_ms']['p50']:>10.3f} {pair(row['lookup_ms']):>15} "
            f"{pair(row['lookup_busy_ms']):>20} {pair(row['lookup_cpu_ms']):>19} {row['rescan_ms']:>10.1f} "
            f"{row['store_mb']:>9.1f}"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
