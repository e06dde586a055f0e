"""Per-log cost of categorizing against reading alone (target: at most 3x).

    .venv/bin/python -m benchmarks.bench_categorize [CORPUS ...] [--light SEEDS YEAR] [--heavy N]
                                                    [--limit N] [--sklearn]

Corpora: ``--light SEEDS YEAR`` (default 3 3000) writes the scenario catalog
(``SEEDS`` seeds) and a sample year of ``YEAR`` logs (light logs: a handful
of records each, the most common kind); ``--heavy N`` (default 30) heavy logs
of ``mosaic.synth.heavy`` (512 to 16,384 ranks, hundreds to thousands of
records); positional folders are read in place (the real logs of
tests/data/darshan-logs when none is given and ``--light 0 0 --heavy 0``).
For each valid log, one core, best of three, side by side on the same log:
``read_log`` alone and ``mosaic.categorize(path)`` (the public API: read,
trace, analysis, result object). Printed: median and p99 of each, the ratio
of the distributions and per log (target: at most 3x), and the split of the
API's cost by stage, each stage timed alone: read, trace, merging, mean
shift (with the heatmap bursts), FFT on the operations, FFT on the heatmap,
temporality, metadata, result building. Beside them, the floor of the FFT
stages: the bare ``scipy.fft.rfft`` transform of the size behind each reported
FFT result (zero buffers, oversampled as in ``spectrum``; a lower bound: the
score's ``irfft`` and a heatmap's rival transform are left out), against
``categorize_trace`` and ``read_log``. ``--sklearn`` also times the mean
shift stage with ``meanshift_implementation = "sklearn"``. The process keeps its
heap between logs as every mosaic process does (``mosaic.limits.keep_heap``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.fft

import mosaic
from mosaic.analysis import bursts, merging, metadata, segments, spectrum, temporality
from mosaic.analysis.categorize import analyze, categorize_trace, result
from mosaic.config import Config
from mosaic.corpus.scan import scan
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic.limits import keep_heap
from mosaic.trace import READ, WRITE, Trace, build_trace

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "darshan-logs"
STAGES = (
    "read",
    "trace",
    "merging",
    "mean shift",
    "FFT operations",
    "FFT heatmap",
    "temporality",
    "metadata",
    "result",
)
REPEATS = 3  # best of: the machine is shared


def _timed(work):
    """(value, CPU seconds of the best of REPEATS calls)."""
    best = np.inf
    for _ in range(REPEATS):
        start = time.process_time()
        value = work()
        best = min(best, time.process_time() - start)
    return value, best


def stage_times(trace: Trace, config: Config) -> dict[str, float]:
    """Seconds of each analysis stage on one trace, in the order and on the data analyze() uses."""
    spent = dict.fromkeys(STAGES[2:], 0.0)
    clustering = segments.MeanShiftSettings.of(config)
    sampling, detection = spectrum.SamplingSettings.of(config), spectrum.SpectrumSettings.of(config)
    for code, name in ((READ, "read"), (WRITE, "write")):
        ops = trace.direction(code)
        starts, ends, nbytes = ops["start"], ops["end"], ops["bytes"]
        merged, took = _timed(
            lambda: merging.merge(
                starts,
                ends,
                nbytes,
                ops["ranks"],
                trace.run_time,
                minor_rate_fraction=config.minor_rate_fraction,
                neighbor_gap_runtime_fraction=config.neighbor_gap_runtime_fraction,
                neighbor_gap_duration_fraction=config.neighbor_gap_duration_fraction,
            )
        )
        spent["merging"] += took
        spent["temporality"] += _timed(lambda: temporality.chunk_bytes(starts, ends, nbytes, trace.run_time))[
            1
        ]
        if nbytes.sum() < config.significant_bytes:
            continue
        found, took = _timed(
            lambda: segments.meanshift_periodicity(merged.starts, merged.ends, merged.bytes, clustering)
        )
        spent["mean shift"] += took
        heatmap = trace.heatmap
        if heatmap is not None:
            bins = getattr(heatmap, name)
            if not found["periodic"]:
                spent["mean shift"] += _timed(
                    lambda: bursts.burst_periodicity(
                        bins, heatmap.bin_seconds, clustering, minor_rate_fraction=config.minor_rate_fraction
                    )
                )[1]
            spent["FFT heatmap"] += _timed(
                lambda: spectrum.heatmap_periodicity(bins, heatmap.bin_seconds, detection)
            )[1]
        spent["FFT operations"] += _timed(
            lambda: spectrum.fft_periodicity(starts, ends, nbytes, trace.run_time, sampling, detection)
        )[1]
    spent["metadata"] = _timed(lambda: _metadata_labels(trace, config))[1]
    analysis = analyze(trace, config)
    spent["result"] = _timed(lambda: result(analysis, config))[1]
    spent["categorize_trace"] = _timed(lambda: categorize_trace(trace, config))[1]
    spent["transforms"] = _transforms_floor(analysis, config)
    return spent


def _transforms_floor(analysis, config: Config) -> float:
    """CPU seconds of the bare transforms behind the analysis's FFT results: what
    the FFT stages cost at least, whatever their code around the transform."""
    sizes = [
        config.fft_oversampling * found["samples"]
        for direction in (analysis.read, analysis.write)
        if (found := direction.fft) is not None
    ]
    if not sizes:
        return 0.0
    buffers = [np.zeros(size, np.float32) for size in sizes]
    return _timed(lambda: [scipy.fft.rfft(buffer) for buffer in buffers])[1]


def _metadata_labels(trace: Trace, config: Config) -> list[str]:
    """The metadata stage as analyze() runs it: requests per second, statistics, labels."""
    per_second = metadata.requests_per_second(
        trace.meta, trace.run_time, metadata_seeks=config.metadata_seeks
    )
    summary = metadata.statistics(per_second, metadata_spike_level=config.metadata_spike_level)
    return metadata.summary_labels(
        summary,
        metadata_high_spike=config.metadata_high_spike,
        metadata_min_spikes=config.metadata_min_spikes,
        metadata_density_mean=config.metadata_density_mean,
    )


def measure(locations: list[str], config: Config) -> dict[str, np.ndarray]:
    """Per valid log, CPU seconds: read_log alone, mosaic.categorize, and each stage."""
    rows = []
    for location in locations:
        try:
            log, read = _timed(lambda: read_log(location))
            trace, build = _timed(lambda: build_trace(log, location, config))
        except LogError:
            continue
        _, whole = _timed(lambda: mosaic.categorize(location, config))
        rows.append(
            {
                "read_log": read,
                "categorize": whole,
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


def light_corpus(seeds: int, year_logs: int, folder: Path) -> list[str]:
    """The scenario catalog and a sample year: what most of a center's logs look like."""
    from mosaic.synth.corpus import write_scenarios
    from mosaic.synth.year import generate_year

    write_scenarios(folder / "scenarios", seeds=seeds)
    generate_year(folder / "year", year_logs, seed=2019)
    return [ref.location for ref in scan([str(folder / "scenarios"), str(folder / "year")])]


def report(name: str, times: dict[str, np.ndarray]) -> None:
    if not times:
        print(f"{name}: no categorized log")
        return
    ms = {key: 1e3 * value for key, value in times.items()}
    ratio = times["categorize"] / times["read_log"]
    print(
        f"{name}: {len(ratio)} valid logs, records per trace median {np.median(times['records']):.0f}, "
        f"max {times['records'].max()}"
    )
    for key in ("read_log", "categorize"):
        print(f"  {key:12s} median {np.median(ms[key]):8.3f} ms   p99 {np.percentile(ms[key], 99):8.3f} ms")
    print(
        "  categorize / read_log by distribution: median "
        f"{np.median(times['categorize']) / np.median(times['read_log']):.2f}x, p99 "
        f"{np.percentile(times['categorize'], 99) / np.percentile(times['read_log'], 99):.2f}x (target <= 3x)"
    )
    print(
        f"  per log: median {np.median(ratio):.2f}x, p99 {np.percentile(ratio, 99):.2f}x,"
        f" total {times['categorize'].sum() / times['read_log'].sum():.2f}x"
    )
    print("  stage, median per log and share of the total (each timed alone):")
    total = sum(times[stage].sum() for stage in STAGES)
    for stage in STAGES:
        print(
            f"    {stage:15s} median {np.median(ms[stage]):7.3f} ms"
            f"  p99 {np.percentile(ms[stage], 99):7.3f} ms  {times[stage].sum() / total:4.0%}"
        )
    transforms = times["transforms"].sum()
    print(
        f"  floor of the FFT stages: bare rfft transforms {transforms:.3f} s = "
        f"{transforms / times['categorize_trace'].sum():.0%} of categorize_trace, "
        f"{transforms / times['read_log'].sum():.2f}x read_log (totals)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="*")
    parser.add_argument("--limit", type=int, default=None, help="at most this many logs per corpus")
    parser.add_argument(
        "--light", nargs=2, type=int, default=[3, 3000], metavar=("SEEDS", "YEAR"), help="0 0: none"
    )
    parser.add_argument("--heavy", type=int, default=30, help="heavy logs to write (0: none)")
    parser.add_argument("--sklearn", action="store_true", help="also time scikit-learn's mean shift")
    args = parser.parse_args()
    keep_heap()  # as in every mosaic process (the command line, batch and service workers)
    configs = {"numpy": Config()}
    if args.sklearn:
        configs["sklearn"] = Config(meanshift_implementation="sklearn")
    with tempfile.TemporaryDirectory() as folder:
        corpora = {}
        seeds, year_logs = args.light
        if seeds or year_logs:
            name = f"light (catalog {seeds} seeds + year {year_logs})"
            corpora[name] = light_corpus(seeds, year_logs, Path(folder) / "light")
        if args.heavy:
            corpora["heavy (mosaic.synth.heavy)"] = heavy_corpus(args.heavy, Path(folder) / "heavy")
        if args.corpus or not corpora:
            roots = args.corpus or [str(DEFAULT_CORPUS)]
            corpora[", ".join(roots)] = [ref.location for ref in scan(roots)]
        for name, locations in corpora.items():
            locations = locations[: args.limit]
            for label, config in configs.items():
                measure(locations[:5], config)  # warm-up: imports, caches
                report(f"{name} [mean shift: {label}]", measure(locations, config))


if __name__ == "__main__":
    main()
