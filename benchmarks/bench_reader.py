"""Our Darshan reader against pydarshan on the same real logs, in one run.

    .venv/bin/python -m benchmarks.bench_reader [--min-time SECONDS]

Times, per log: ``read_log`` (records decoded), ``read_trace`` (records
decoded, filtered, cleaned, operations built) and
``darshan.DarshanReport(path, read_all=True)``. pydarshan runs in this
process only on logs that a subprocess first read without crashing.
Prints per-log mean and median CPU times and the ratios, then the totals.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from mosaic.config import Config
from mosaic.darshan.reader import read_log
from mosaic.errors import LogError
from mosaic.trace import read_trace

SHARED_LOGS = Path(__file__).resolve().parents[1] / "tests" / "data" / "darshan-logs"


def logs_to_read() -> list[Path]:
    """The real logs of tests/data/darshan-logs, then the examples in pydarshan's wheel."""
    import darshan

    return sorted(SHARED_LOGS.rglob("*.darshan")) + sorted(Path(darshan.__file__).parent.rglob("*.darshan"))


PROBE = "import sys, darshan\nfor p in sys.argv[1:]:\n    darshan.DarshanReport(p, read_all=True)\n"


def safe_for_pydarshan(paths: list[str]) -> list[str]:
    """Logs pydarshan reads without killing its process (probed one by one on a crash)."""
    if subprocess.run([sys.executable, "-c", PROBE, *paths], capture_output=True).returncode == 0:
        return paths
    return [
        p
        for p in paths
        if subprocess.run([sys.executable, "-c", PROBE, p], capture_output=True).returncode == 0
    ]


def call_times(fns, min_time: float) -> list[np.ndarray]:
    """CPU seconds per call of each function, called in turn (at least 5 rounds).

    On a shared, busy machine wall time mostly measures waiting for a core:
    CPU time of this (single-threaded) process does not, and interleaving
    the readers round by round exposes them to the same cache pressure.
    """
    spent: list[list[float]] = [[] for _ in fns]
    rounds, start = 0, time.perf_counter()
    while rounds < 5 or time.perf_counter() - start < min_time:
        for i, fn in enumerate(fns):
            t = time.process_time()
            fn()
            spent[i].append(time.process_time() - t)
        rounds += 1
    return [np.array(s) for s in spent]


def quietly(fn):
    def call():
        try:
            fn()
        except LogError:
            pass  # evicted logs (the empty one) are timed too: eviction is work

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--min-time", type=float, default=0.3, help="seconds of repetitions per log (all readers)"
    )
    args = parser.parse_args()
    import darshan
    import darshan.backend.cffi_backend  # noqa: F401  (import cost out of the timings)

    paths = safe_for_pydarshan([str(p) for p in logs_to_read()])
    config = Config()
    means, medians, ratios = np.zeros(3), np.zeros(3), []
    print(
        f"{'CPU time per call':40s} {'size':>7s} | mean ms: {'log':>6s} {'trace':>6s} "
        f"{'pyd':>6s} {'ratio':>6s} | median ms: {'log':>6s} {'trace':>6s} {'pyd':>6s} "
        f"{'ratio':>6s}"
    )
    for path in paths:
        times = call_times(
            [
                quietly(lambda: read_log(path)),
                quietly(lambda: read_trace(path, config)),
                lambda: darshan.DarshanReport(path, read_all=True),
            ],
            args.min_time,
        )
        mean = np.array([t.mean() for t in times])
        median = np.array([np.median(t) for t in times])
        means += mean
        medians += median
        ratios.append(median[2] / median[0])
        print(
            f"{Path(path).name[:40]:40s} {Path(path).stat().st_size:7d} | "
            f"{mean[0] * 1e3:15.2f} {mean[1] * 1e3:6.2f} {mean[2] * 1e3:6.2f} "
            f"{mean[2] / mean[0]:5.1f}x | {median[0] * 1e3:17.2f} {median[1] * 1e3:6.2f} "
            f"{median[2] * 1e3:6.2f} {median[2] / median[0]:5.1f}x"
        )
    ratios.sort()
    for label, total in (("mean", means), ("median", medians)):
        print(
            f"\n{len(paths)} logs, sum of per-log {label}s: read_log {total[0] * 1e3:.1f} ms, "
            f"read_trace {total[1] * 1e3:.1f} ms, pydarshan {total[2] * 1e3:.1f} ms; "
            f"pydarshan / read_log {total[2] / total[0]:.1f}x, "
            f"pydarshan / read_trace {total[2] / total[1]:.1f}x"
        )
    print(
        f"per-log median ratio pydarshan / read_log: median {ratios[len(ratios) // 2]:.1f}x, "
        f"lowest {ratios[0]:.1f}x, highest {ratios[-1]:.1f}x"
    )


if __name__ == "__main__":
    main()
