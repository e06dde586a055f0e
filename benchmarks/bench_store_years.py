"""Ten years of a center in one store: posts, lookups, listings, size and the server's memory.

    .venv/bin/python -m benchmarks.bench_store_years [--runs 5000000] [--groups 250000]
                                                     [--dir D] [--reuse] [--samples 2000]

The store is generated straight into its tables (no log is read: what is measured is
the store): ``--groups`` (uid, application) groups whose sizes are log-normal (sigma
1.6) around runs / groups, the largest capped at 2.5 % of the runs (ten years of the
paper's LAMMPS group of ~12,000 a year is 120,000); each run a label set drawn from
eight of the calibrated year's common ones (a third periodic, with a period of
60 s - 3 h), log-normal bytes, run time and metadata peak, a start uniform over ten
years and a Darshan-like file name; then every counter and applications row recounted
from the rows (benchmarks.bench_profiles' bulk writer, in transactions of 100,000 runs).

Then, on the finished store, side by side in one run:

* post: ``Store.record`` of a run into a random group, median and p99, with the
  service's ``synchronous=FULL`` and with NORMAL;
* lookup: ``Store.application`` of random groups and of the largest, median and p99;
* ``mosaic apps`` pages: ``Store.applications`` first page by runs, a page at offset
  half the groups, a name filter, sorted by period class (every group's window read);
* the report's applications table: one profile per group
  (``mosaic.html.applications.applications``, what ``mosaic report`` computes before it
  writes the table), timed over the first ``--report-groups`` groups and scaled;
* ``mosaic serve`` on the store: its RSS (server and workers) after ``--samples``
  lookups and 20 listing pages over HTTP;
* store bytes per run.

The machine is shared: compare figures within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

import httpx
import numpy as np

from benchmarks.bench_profiles import bulk_runs, finish_bulk, ms, template, timed, variant
from mosaic.config import Config
from mosaic.corpus import profiles
from mosaic.corpus.listing import Filters
from mosaic.corpus.store import Store

LABEL_SETS = (  # common sets of the calibrated year (per execution); periodic ones first
    [
        "metadata_insignificant_load",
        "read_insignificant",
        "write_periodic",
        "write_periodic_minute",
        "write_steady",
    ],
    ["metadata_insignificant_load", "read_on_start", "write_periodic", "write_periodic_hour", "write_steady"],
    ["metadata_high_spike", "read_on_start", "write_periodic", "write_periodic_minute"],
    ["metadata_insignificant_load", "read_insignificant", "write_on_end"],
    ["metadata_insignificant_load", "read_on_start", "write_insignificant"],
    ["metadata_high_density", "metadata_multiple_spikes", "read_steady", "write_steady"],
    ["metadata_insignificant_load", "read_insignificant", "write_insignificant"],
    ["metadata_high_spike", "read_on_start", "write_on_end"],
)
PERIODIC_SETS = 3
LARGEST_SHARE = 0.025
CHUNK_RUNS = 200_000  # runs generated at a time (memory stays flat)


def group_sizes(runs: int, groups: int, rng: np.random.Generator) -> np.ndarray:
    sizes = rng.lognormal(0.0, 1.6, groups)
    sizes = np.minimum(sizes / sizes.sum() * runs, LARGEST_SHARE * runs)
    sizes = np.maximum(1, np.floor(sizes)).astype(np.int64)
    sizes[np.argmax(sizes)] += max(0, runs - int(sizes.sum()))  # the total is the one asked
    return sizes


def run_numbers(count: int, periodic: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One row of profiles.NUMBERS per run (NaN: not measured or not periodic)."""
    numbers = np.full((count, len(profiles.NUMBERS)), np.nan)
    column = {name: i for i, name in enumerate(profiles.NUMBERS)}
    run_time = rng.lognormal(7.5, 1.2, count)
    numbers[:, column["run_time"]] = run_time
    numbers[:, column["read_bytes"]] = rng.lognormal(18, 3, count)
    numbers[:, column["write_bytes"]] = rng.lognormal(20, 3, count)
    numbers[:, column["metadata_peak_per_second"]] = rng.lognormal(3, 1.5, count)
    period = rng.uniform(60, 10_800, count)
    numbers[periodic, column["write_period"]] = period[periodic]
    numbers[periodic, column["write_busy_fraction"]] = rng.uniform(0.02, 0.5, count)[periodic]
    numbers[periodic, column["write_bytes_per_occurrence"]] = (
        numbers[:, column["write_bytes"]] * period / run_time
    )[periodic]
    return numbers


def generate(path: Path, runs: int, groups: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    Store(path).close()
    sizes = group_sizes(runs, groups, rng)
    uids = rng.integers(1000, 3000, groups)
    keys = np.array([f"{uid}:/apps/code{i:06d}/bin/run" for i, uid in enumerate(uids)], dtype=object)
    usual = rng.integers(0, len(LABEL_SETS), groups)  # each group mostly does one thing
    texts = [profiles.label_set(labels) for labels in LABEL_SETS]
    db = sqlite3.connect(path, isolation_level=None)
    started = time.perf_counter()
    first = 0
    ends = np.cumsum(sizes)
    for low in range(0, runs, CHUNK_RUNS):
        high = min(low + CHUNK_RUNS, runs)
        group = np.searchsorted(ends, np.arange(low, high), side="right")
        drawn = np.where(
            rng.random(high - low) < 0.8, usual[group], rng.integers(0, len(LABEL_SETS), high - low)
        )
        numbers = run_numbers(high - low, drawn < PERIODIC_SETS, rng)
        bulk_runs(db, keys[group], [texts[i] for i in drawn], numbers, rng, first=first)
        first += high - low
    rows_seconds = time.perf_counter() - started
    finish_bulk(db)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return {
        "runs": runs,
        "groups": groups,
        "largest_group": int(sizes.max()),
        "median_group": float(np.median(sizes)),
        "rows_seconds": rows_seconds,
        "total_seconds": time.perf_counter() - started,
    }


def listing_pages(store: Store, groups: int) -> dict:
    share = Config().profile_min_periodic_share
    pages = {
        "first page by runs": Filters(),
        "page at offset groups/2": Filters(offset=groups // 2),
        "name filter 'code0001'": Filters(match="code0001", sort="app"),
        "sorted by period class": Filters(sort="period_class"),
    }
    out = {}
    for name, filters in pages.items():
        started = time.perf_counter()
        listed = store.applications(filters, share)
        out[name] = {"ms": 1e3 * (time.perf_counter() - started), "total": listed["total"]}
    return out


def report_table_seconds(path: Path, groups: int, sample: int) -> dict:
    from mosaic.html.applications import applications

    db = sqlite3.connect(path)
    started = time.perf_counter()
    done = sum(1 for _ in islice(applications(db, Config()), sample))
    seconds = time.perf_counter() - started
    db.close()
    return {"groups_timed": done, "seconds": seconds, "scaled_to_all_groups_seconds": seconds * groups / done}


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (the server and its workers), MB."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    total = 0
    for each in [str(pid), *children]:
        with open(f"/proc/{each}/status") as fh:
            total += next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
    return total / 1024


def served(path: Path, keys: list[str], samples: int) -> dict:
    """`mosaic serve` on the store: lookups and listing pages over HTTP, then its RSS."""
    port = free_port()
    mosaic = Path(sys.executable).with_name("mosaic")
    server = subprocess.Popen(
        [str(mosaic), "serve", "--store", str(path), "--port", str(port), "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        started_rss = rss_mb(server.pid)
        with httpx.Client(base_url=url, timeout=60) as client:
            lookups = []
            for key in keys[:samples]:
                uid, app = key.split(":", 1)
                begun = time.perf_counter()
                assert client.get("/v1/applications", params={"uid": uid, "app": app}).status_code == 200
                lookups.append(time.perf_counter() - begun)
            pages, statuses = [], []
            for page in range(20):
                begun = time.perf_counter()
                answer = client.get("/v1/applications", params={"offset": page * 1000, "limit": 1000})
                statuses.append(answer.status_code)  # 503: past store_listing_seconds
                pages.append(time.perf_counter() - begun)
        return {
            "rss_mb_started": started_rss,
            "rss_mb_after": rss_mb(server.pid),
            "http_lookup_ms": ms(lookups),
            "http_page_of_1000_ms": ms(pages),
            "http_page_statuses": {str(code): statuses.count(code) for code in sorted(set(statuses))},
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def free_port() -> int:
    """A free loopback port (bound, then released for the server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5_000_000)
    parser.add_argument("--groups", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=2016)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="Keep and reuse D/store-RUNS-GROUPS.sqlite.")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--report-groups", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="mosaic-store-years-") as tmp:
        folder = args.dir if args.reuse and args.dir else Path(tmp)
        path = folder / f"store-{args.runs}-{args.groups}.sqlite"
        made = None if path.exists() else generate(path, args.runs, args.groups, args.seed)
        size = path.stat().st_size
        rng = np.random.default_rng(7)
        base = template()
        with Store(path) as store, Store(path, durable=True) as durable:
            keys = [row[0] for row in store._db.execute("SELECT group_key FROM applications")]
            largest = store._db.execute(
                "SELECT group_key, runs FROM applications ORDER BY runs DESC LIMIT 1"
            ).fetchone()
            chosen = [keys[i] for i in rng.integers(0, len(keys), args.samples)]
            lookups = timed(
                lambda key: store.application(int(key.split(":")[0]), key.split(":", 1)[1]), chosen
            )
            uid, app = largest[0].split(":", 1)
            largest_lookup = timed(lambda _: store.application(int(uid), app), range(200))
            posts = [
                variant(base, 9_000_000 + i, rng, key.split(":", 1)[1]) for i, key in enumerate(chosen[:400])
            ]
            for post, key in zip(posts, chosen, strict=False):
                post["job"]["uid"] = int(key.split(":")[0])
            half = len(posts) // 2  # 200 each, fewer with --samples below 400
            post_normal = timed(store.record, posts[:half])
            post_full = timed(durable.record, posts[half:])
            pages = listing_pages(store, len(keys))
            info = store.info()
        print(json.dumps({"generated": made}), flush=True)
        result = {
            "generated": made,
            "store_bytes": size,
            "bytes_per_run": size / args.runs,
            "info": info,
            "lookup_ms": ms(lookups),
            "largest_group": {"runs": largest[1], "lookup_ms": ms(largest_lookup)},
            "post_normal_ms": ms(post_normal),
            "post_full_ms": ms(post_full),
            "apps_pages": pages,
            "report_table": report_table_seconds(path, len(keys), args.report_groups),
            "served": served(path, chosen, args.samples),
            "load_average": os.getloadavg(),
        }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
