"""Throughput and memory of `mosaic run` on the year-profile corpus, 1 and 2 workers side by side.

    .venv/bin/python -m benchmarks.bench_pipeline [--sizes 10000 100000] [--workers 1 2]
    .venv/bin/python -m benchmarks.bench_pipeline --isolation [--sizes 2000]
    .venv/bin/python -m benchmarks.bench_pipeline --rerun [--sizes 600]
    .venv/bin/python -m benchmarks.bench_pipeline --heavy 600 --scenarios 20  (each against pydarshan)

For each corpus size, generates (once, not timed) a Blue-Waters-like year with
``mosaic.synth.year.generate_year`` under ``--data`` and runs the whole
pipeline on a local dispy node with each worker count. Prints, per run: logs/s
through the whole pipeline, validation + dedup logs/s per worker (target:
>= 1,000), and the peak resident memory of the whole process tree (this
process, the dispynode, its setup and job processes), sampled with psutil.
RSS is summed over processes, so pages shared after fork count several
times: an upper bound. "Flat in corpus size" is the target.

Wall-clock rates depend on what else runs on the machine, so the load
average is printed beside each run, and the validation work itself is also
timed in CPU seconds in this process (scan + validate every log, then dedup):
the rate one worker sustains when it has a core to itself. "logs/CPU s" is
the whole run's logs per CPU second of the whole process tree (parent, node,
workers; read from os.times() once the node has stopped).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import psutil

from mosaic.config import Config
from mosaic.corpus import dedup
from mosaic.corpus.dedup import Run
from mosaic.corpus.engine import run_batch
from mosaic.corpus.pipeline import VALIDATE, engine_settings, run, validate_log
from mosaic.corpus.scan import scan
from mosaic.synth.year import generate_year

SAMPLE_SECONDS = 0.1


class TreeMemory:
    """Peak summed RSS of this process and all its descendants, sampled in a thread."""

    def __init__(self, interval: float = SAMPLE_SECONDS) -> None:
        self.interval = interval  # a walk of the process tree costs CPU: runs of minutes sample less
        self.peak = 0
        self.parent_peak = 0  # this process alone: what holds the pipeline's state
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(self.interval):
            total = 0
            for proc in [me, *me.children(recursive=True)]:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    pass  # ended between listing and reading
            self.peak = max(self.peak, total)
            try:
                self.parent_peak = max(self.parent_peak, me.memory_info().rss)
            except psutil.Error:
                pass


def corpus(data: Path, size: int) -> Path:
    root = data / f"year-{size}"
    if not (root / "truth.jsonl").exists():
        started = time.perf_counter()
        generate_year(root, size, seed=2019)
        print(f"generated {size} logs in {time.perf_counter() - started:.0f} s -> {root}")
    return root


def measure(root: Path, workers: int, config: Config) -> dict:
    out = Path(tempfile.mkdtemp(prefix="mosaic-bench-out-"))
    cpu_before = _tree_cpu_seconds()
    try:
        with TreeMemory() as memory:
            summary = run([root], out, config, workers=workers, quiet=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    cpu = _tree_cpu_seconds() - cpu_before
    timings, funnel = summary["timings"], summary["funnel"]
    validate_dedup = timings["scan_validate"] + timings["dedup"]
    return {
        "logs": funnel["logs"],
        "categorized": funnel["categorized"],
        "seconds": timings["total"],
        "logs_per_s": timings["logs_per_second"],
        "validate_per_worker": funnel["logs"] / validate_dedup / workers,
        "categorize_s": timings["categorize"],
        "start_s": timings["start"],
        "peak_mb": memory.peak / 2**20,
        "parent_mb": memory.parent_peak / 2**20,
        "logs_per_cpu_s": funnel["logs"] / cpu,
    }


def _tree_cpu_seconds() -> float:
    """CPU seconds of this process plus its finished (waited-for) descendants: once run()
    has stopped its dispynode, that is every job process of the run."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def validation_cpu_rate(root: Path, config: Config) -> float:
    """Logs per CPU second of scan + validation + dedup in this process (no engine)."""
    started = time.process_time()
    facts = [validate_log(ref, config) for ref in scan([root])]
    runs = sorted(
        (
            Run(f["file"], f["group_key"], f["total_bytes"], f["run_time"])
            for f in facts
            if f["status"] == "ok"
        ),
        key=lambda r: r.group_key,
    )
    for _ in dedup.groups(runs):
        pass
    return len(facts) / (time.process_time() - started)


def isolation_overhead(root: Path, config: Config, batch: int = 256) -> dict[str, float]:
    """Wall seconds to validate every log of `root` with one worker: in this process,
    in the engine's supervised child (one fork per batch, results over a pipe), and
    in a pebble process pool (one scheduled task per log, as the service does)."""
    import pebble

    refs = list(scan([root]))
    task = VALIDATE
    limits = engine_settings(config, None).limits
    run_batch(task, refs[:batch], config, limits, isolate=False)  # imports and caches warm
    started = time.perf_counter()
    run_batch(task, refs, config, limits, isolate=False)
    seconds = {"in process": time.perf_counter() - started}
    started = time.perf_counter()
    for i in range(0, len(refs), batch):
        run_batch(task, refs[i : i + batch], config, limits, isolate=True)
    seconds["engine: fork per batch"] = time.perf_counter() - started
    with pebble.ProcessPool(max_workers=1) as pool:
        pool.schedule(validate_log, (refs[0], config)).result()  # worker started and warm
        started = time.perf_counter()
        for ref in refs:
            pool.schedule(validate_log, (ref, config), timeout=config.trace_timeout_seconds).result()
        seconds["pebble: task per log"] = time.perf_counter() - started
        started = time.perf_counter()
        futures = [
            pool.schedule(validate_log, (ref, config), timeout=config.trace_timeout_seconds) for ref in refs
        ]
        for future in futures:
            future.result()
        seconds["pebble: all queued"] = time.perf_counter() - started
    return {"logs": len(refs), **seconds}


def print_rerun(root: Path, config: Config, workers: int = 2) -> None:
    """A first run, then a rerun of the finished folder: wall seconds side by side."""
    out = Path(tempfile.mkdtemp(prefix="mosaic-bench-out-"))
    try:
        seconds = []
        for _ in range(2):
            started = time.perf_counter()
            summary = run([root], out, config, workers=workers, quiet=True)
            seconds.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(
        f"{summary['funnel']['logs']} logs, --workers {workers}: first run {seconds[0]:.2f} s, "
        f"rerun {seconds[1]:.2f} s (x{seconds[0] / seconds[1]:.1f} faster; engine started: "
        f"{summary['timings']['engine_started']})"
    )


def heavy_corpus(data: Path, count: int) -> Path:
    from mosaic.synth.heavy import generate_heavy

    root = data / f"heavy-{count}"
    if not (root / "truth.jsonl").exists():
        generate_heavy(root, count, seed=2019)
    return root


def _zlib_v3(path: str) -> bool:
    """A plain Darshan 3.x log with zlib regions (what pydarshan reads; on 2.x logs,
    bzip2 or gzip-wrapped ones it errs or segfaults)."""
    from mosaic.darshan.formats import COMP_ZLIB

    with open(path, "rb") as fh:
        head = fh.read(17)
    return path.endswith(".darshan") and head[:2] == b"3." and len(head) == 17 and (head[16] == COMP_ZLIB)


def scenario_corpus(data: Path, seeds: int) -> Path:
    """The scenario catalog: most logs are their own group (the light case against pydarshan)."""
    from mosaic.synth.corpus import write_scenarios

    root = data / f"scenarios-{seeds}"
    if not (root / "truth.jsonl").exists():
        write_scenarios(root, seeds=seeds)
    return root


def print_against_pydarshan(root: Path, config: Config, workers: int = 2) -> None:
    """`mosaic run --workers 2` against pydarshan reading the same logs in one process
    (target: at least 2x): wall seconds side by side, in one run."""
    import warnings

    import darshan

    out = Path(tempfile.mkdtemp(prefix="mosaic-bench-out-"))
    try:
        started, cpu_before = time.perf_counter(), _tree_cpu_seconds()
        summary = run([root], out, config, workers=workers, quiet=True)
        ours = time.perf_counter() - started
        our_cpu = _tree_cpu_seconds() - cpu_before
        evicted = {json.loads(line)["file"] for line in (out / "evicted.jsonl").open()}
    finally:
        shutil.rmtree(out, ignore_errors=True)
    valid = [ref.location for ref in scan([root]) if ref.name not in evicted and _zlib_v3(ref.location)]
    read, seconds, cpu = 0, 0.0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in valid:
            started, cpu_started = time.perf_counter(), time.process_time()
            try:
                darshan.DarshanReport(path, read_all=True)
            except Exception:  # noqa: BLE001 - a log pydarshan cannot read: not timed
                continue
            seconds += time.perf_counter() - started
            cpu += time.process_time() - cpu_started
            read += 1
    timings = summary["timings"]
    print(
        f"{root.name}: {summary['funnel']['logs']} logs ({len(valid)} valid): mosaic run "
        f"--workers {workers} {ours:.2f} s (scan+validate {timings['scan_validate']:.2f}, "
        f"categorize {timings['categorize']:.2f}, start {timings['start']:.2f}); pydarshan "
        f"read_all over the {read} it reads, one process: {seconds:.2f} s; ratio "
        f"x{seconds / ours:.2f} (pydarshan time / mosaic time; target >= 2). CPU seconds "
        f"(all processes): mosaic {our_cpu:.2f}, pydarshan {cpu:.2f}; on {workers} idle "
        f"cores mosaic needs at least {our_cpu / workers:.2f} s: ratio at most "
        f"x{seconds / (our_cpu / workers):.2f}"
    )


def print_isolation(root: Path, config: Config) -> None:
    figures = isolation_overhead(root, config)
    logs, base = figures.pop("logs"), figures["in process"]
    print(f"{logs} logs, validation, one worker: wall s, per-log overhead over in-process")
    for name, seconds in figures.items():
        print(
            f"  {name:<24} {seconds:7.2f} s  {(seconds - base) / logs * 1e3:+7.3f} ms/log "
            f"(x{seconds / base:.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "mosaic-bench")
    parser.add_argument(
        "--heavy", type=int, metavar="COUNT", help="mosaic run against pydarshan on COUNT heavy logs"
    )
    parser.add_argument(
        "--scenarios",
        type=int,
        metavar="SEEDS",
        help="mosaic run against pydarshan on the scenario catalog written with SEEDS seeds",
    )
    parser.add_argument(
        "--rerun", action="store_true", help="first run against a rerun of the finished output folder"
    )
    parser.add_argument(
        "--isolation", action="store_true", help="per-log overhead of the engine's supervision against pebble"
    )
    args = parser.parse_args()
    config = Config()
    if args.heavy or args.scenarios:
        if args.scenarios:
            print_against_pydarshan(scenario_corpus(args.data, args.scenarios), config)
        if args.heavy:
            print_against_pydarshan(heavy_corpus(args.data, args.heavy), config)
        return
    if args.rerun:
        for size in args.sizes:
            print_rerun(corpus(args.data, size), config)
        return
    if args.isolation:
        for size in args.sizes:
            print_isolation(corpus(args.data, size), config)
        return
    header = (
        f"{'logs':>7} {'workers':>7} {'total s':>8} {'logs/s':>7} "
        f"{'valid+dedup logs/s/worker':>26} {'categorize s':>12} {'start s':>7} "
        f"{'peak tree RSS MB':>16} {'parent MB':>9} {'load':>5} {'logs/CPU s':>10}"
    )
    rows = []
    for size in args.sizes:
        root = corpus(args.data, size)
        for workers in args.workers:
            r = measure(root, workers, config)
            rows.append(
                f"{r['logs']:>7} {workers:>7} {r['seconds']:>8.1f} {r['logs_per_s']:>7.0f} "
                f"{r['validate_per_worker']:>26.0f} {r['categorize_s']:>12.1f} "
                f"{r['start_s']:>7.1f} {r['peak_mb']:>16.0f} {r['parent_mb']:>9.0f} "
                f"{os.getloadavg()[0]:>5.1f} "
                f"{r['logs_per_cpu_s']:>10.0f}"
            )
            print(rows[-1], flush=True)
        # after the runs: its list of facts must not inflate their parent RSS
        rate = validation_cpu_rate(root, config)
        rows.append(f"{size:>7} logs: scan + validation + dedup, one process: {rate:.0f} logs per CPU second")
        print(rows[-1], flush=True)
    print("\n" + header + "\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
