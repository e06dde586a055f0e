"""The contention year against the plain year, side by side (``python -m benchmarks.bench_contention``).

Generates ``--count`` logs with ``mosaic synth year`` and ``mosaic synth contention`` (and its
null year) in turn, interleaved ``--repeat`` times, and prints CPU seconds, logs per CPU
second, peak RSS growth and the ratio; the full year (462,502 logs) is extrapolated linearly
(both generators are linear in the logs; the simulation is O(P log P) in phases).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from mosaic.synth.contention_year import generate_contention
from mosaic.synth.year import generate_year

FULL_YEAR = 462_502


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=2019)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {"year": [], "contention": [], "null": []}
    peaks: dict[str, float] = {}
    summaries: dict[str, dict[str, object]] = {}
    for _ in range(args.repeat):
        for kind in rows:
            out = Path(tempfile.mkdtemp(prefix=f"bench_{kind}_"))
            before = _peak_mb()
            cpu = time.process_time()
            if kind == "year":
                generate_year(out, args.count, args.seed)
            else:
                made = generate_contention(out, args.count, args.seed, null=kind == "null")
                summaries[kind] = {
                    k: made[k]
                    for k in (
                        "slowed_share",
                        "slowed_share_nontrivial_io",
                        "slowed_over_10pct_share",
                        "hours_bound_share",
                        "jobs_without_darshan",
                        "phases",
                        "simulation_cpu_seconds",
                    )
                }
            rows[kind].append(time.process_time() - cpu)
            peaks[kind] = max(peaks.get(kind, 0.0), _peak_mb() - before)
            shutil.rmtree(out)
    best = {k: min(v) for k, v in rows.items()}
    report = {
        "count": args.count,
        "cpu_seconds": best,
        "logs_per_cpu_second": {k: args.count / v for k, v in best.items()},
        "ratio_contention_to_year": best["contention"] / best["year"],
        "full_year_cpu_seconds_extrapolated": {k: v * FULL_YEAR / args.count for k, v in best.items()},
        "peak_rss_growth_mb": peaks,
        "contention_years": summaries,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
