"""Per-trace cost of read + categorize against reading alone (issue 13 item 3).

    .venv/bin/python -m benchmarks.bench_categorize [CORPUS ...] [--limit N] [--heavy N]

Default corpus: ``--heavy N`` (default 30) heavy logs written by
``mosaic.synth.heavy`` into a temporary folder (512 to 16,384 ranks, hundreds
to thousands of records), plus the real logs in ../shared/darshan-logs. For
each log, one core, CPU time of this process (the machine is shared; wall
time would count other jobs): ``read_log`` alone, then the whole path
(``read_log`` + ``build_trace`` + ``analyze`` + ``result``), side by side on
the same log, after one warm-up pass. Printed: median and p99 of each, the
per-log ratio whole / ``read_log`` (target: at most 3x), the ratio of the
distributions (median whole / median ``read_log``, p99 / p99: the issue's
words allow both readings; the per-log one is the stricter), and the split by
stage (read, trace, merging, mean shift, FFT, temporality, metadata), each
stage timed alone on the trace's own operations. ``--sklearn`` also times
the mean-shift stage with ``meanshift_implementation = "sklearn"``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from mosaic.analysis import merging, metadata, segments, spectrum, temporality
from mosaic.analysis.categorize import analyze, result
from mosaic.config import Config
from mosaic.corpus.scan import scan
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic.trace import DIRECTIONS, build_trace

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "darshan-logs"
STAGES = ("read", "trace", "merging", "mean shift", "FFT", "temporality", "metadata")


def _timed(work):
    start = time.process_time()
    value = work()
    return value, time.process_time() - start


def stage_times(trace, config: Config) -> dict[str, float]:
    """Seconds of each analysis stage on one trace (significant directions only, as analyze)."""
    spent = dict.fromkeys(STAGES[2:], 0.0)
    for code in DIRECTIONS:
        ops = trace.direction(code)
        starts, ends, nbytes = ops["start"], ops["end"], ops["bytes"]
        merged, spent["merging"] = _timed(
            lambda: merging.merge(starts, ends, nbytes, ops["ranks"], trace.run_time, config)
        )
        spent["temporality"] += _timed(lambda: temporality.chunk_bytes(starts, ends, nbytes, trace.run_time))[
            1
        ]
        if nbytes.sum() >= config.significant_bytes:
            spent["mean shift"] += _timed(
                lambda: segments.meanshift_periodicity(merged.starts, merged.ends, merged.bytes, config)
            )[1]
            spent["FFT"] += _timed(
                lambda: spectrum.fft_periodicity(starts, ends, nbytes, trace.run_time, config)
            )[1]
    spent["metadata"] = _timed(
        lambda: metadata.labels(
            metadata.requests_per_second(trace.meta, trace.run_time), trace.run_time, config
        )
    )[1]
    return spent


def measure(locations: list[str], config: Config) -> dict[str, np.ndarray]:
    """Per-log seconds: read_log alone, the whole path, and each stage."""
    rows = []
    for location in locations:
        try:
            _, alone = _timed(lambda: read_log(location))
            log, read = _timed(lambda: read_log(location))
            trace, build = _timed(lambda: build_trace(log, location, config))
        except LogError:
            continue
        _, categorize = _timed(lambda: result(analyze(trace, config), config))
        rows.append(
            {
                "read_log": alone,
                "whole": read + build + categorize,
                "read": read,
                "trace": build,
                "records": int(len(trace.ops)),
                **stage_times(trace, config),
            }
        )
    return {key: np.array([row[key] for row in rows]) for key in rows[0]} if rows else {}


def heavy_corpus(count: int, folder: Path) -> list[str]:
    from mosaic.synth.heavy import generate_heavy

    generate_heavy(folder, count, seed=13)
    return [ref.location for ref in scan([str(folder)])]


def report(name: str, times: dict[str, np.ndarray]) -> None:
    if not times:
        print(f"{name}: no categorized log")
        return
    ms = {key: 1e3 * value for key, value in times.items()}
    ratio = times["whole"] / times["read_log"]
    print(
        f"{name}: {len(ratio)} logs, records per trace median {np.median(times['records']):.0f}, "
        f"max {times['records'].max()}"
    )
    for key in ("read_log", "whole"):
        print(f"  {key:12s} median {np.median(ms[key]):8.2f} ms   p99 {np.percentile(ms[key], 99):8.2f} ms")
    print(
        f"  whole / read_log per log: median {np.median(ratio):.2f}x, p99 {np.percentile(ratio, 99):.2f}x,"
        f" total {times['whole'].sum() / times['read_log'].sum():.2f}x (target <= 3x)"
    )
    print(
        "  whole / read_log by distribution: median "
        f"{np.median(times['whole']) / np.median(times['read_log']):.2f}x, p99 "
        f"{np.percentile(times['whole'], 99) / np.percentile(times['read_log'], 99):.2f}x"
    )
    total = sum(times[stage].sum() for stage in STAGES)
    print("  split: " + ", ".join(f"{stage} {times[stage].sum() / total:.0%}" for stage in STAGES))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="*", default=[str(DEFAULT_CORPUS)])
    parser.add_argument("--limit", type=int, default=None, help="at most this many logs per corpus")
    parser.add_argument("--heavy", type=int, default=30, help="heavy logs to write (0: none)")
    parser.add_argument("--sklearn", action="store_true", help="also time scikit-learn's mean shift")
    args = parser.parse_args()
    configs = {"numpy": Config()}
    if args.sklearn:
        configs["sklearn"] = Config(meanshift_implementation="sklearn")
    with tempfile.TemporaryDirectory() as folder:
        corpora = {"heavy (mosaic.synth.heavy)": heavy_corpus(args.heavy, Path(folder))} if args.heavy else {}
        corpora.update({", ".join(args.corpus): [ref.location for ref in scan(args.corpus)]})
        for name, locations in corpora.items():
            locations = locations[: args.limit]
            for label, config in configs.items():
                measure(locations[:5], config)  # warm-up: imports, caches
                report(f"{name} [mean shift: {label}]", measure(locations, config))


if __name__ == "__main__":
    main()
