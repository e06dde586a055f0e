"""Our Darshan reader against pydarshan on the same real logs, in one run.

    .venv/bin/python -m benchmarks.bench_reader [--min-time SECONDS]

Times, per log: ``read_log`` (records decoded), ``read_trace`` (records
decoded, filtered, cleaned, operations built) and
``darshan.DarshanReport(path, read_all=True)``. pydarshan runs in this
process only on logs that a subprocess first read without crashing.
Prints per-log mean times and the ratios, then the totals.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers import pydarshan_example_logs, real_logs  # noqa: E402

from mosaic.config import Config  # noqa: E402
from mosaic.darshan.formats import LogError  # noqa: E402
from mosaic.darshan.reader import read_log  # noqa: E402
from mosaic.trace import read_trace  # noqa: E402

PROBE = "import sys, darshan\nfor p in sys.argv[1:]:\n    darshan.DarshanReport(p, read_all=True)\n"


def safe_for_pydarshan(paths: list[str]) -> list[str]:
    """Logs pydarshan reads without killing its process (probed one by one on a crash)."""
    if subprocess.run([sys.executable, "-c", PROBE, *paths], capture_output=True).returncode == 0:
        return paths
    return [p for p in paths
            if subprocess.run([sys.executable, "-c", PROBE, p], capture_output=True).returncode == 0]


def mean_times(fns, min_time: float) -> list[float]:
    """Mean seconds per call of each function, called in turn (at least 3 rounds).

    Interleaving the readers round by round exposes them to the same load
    on a shared machine.
    """
    spent = [0.0] * len(fns)
    rounds, start = 0, time.perf_counter()
    while rounds < 3 or time.perf_counter() - start < min_time:
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            spent[i] += time.perf_counter() - t
        rounds += 1
    return [s / rounds for s in spent]


def quietly(fn):
    def call():
        try:
            fn()
        except LogError:
            pass  # evicted logs (the empty one) are timed too: eviction is work
    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.3,
                        help="seconds of repetitions per log (all readers)")
    args = parser.parse_args()
    import darshan
    import darshan.backend.cffi_backend  # noqa: F401  (import cost out of the timings)

    paths = safe_for_pydarshan([str(p) for p in real_logs() + pydarshan_example_logs()])
    config = Config()
    totals = [0.0, 0.0, 0.0]
    ratios = []
    print(f"{'log':44s} {'size':>8s} {'read_log':>10s} {'read_trace':>10s} "
          f"{'pydarshan':>10s} {'ratio':>7s}")
    for path in paths:
        ours, trace, ref = mean_times([quietly(lambda: read_log(path)),
                                       quietly(lambda: read_trace(path, config)),
                                       lambda: darshan.DarshanReport(path, read_all=True)],
                                      args.min_time)
        for i, t in enumerate((ours, trace, ref)):
            totals[i] += t
        ratios.append(ref / ours)
        print(f"{Path(path).name[:44]:44s} {Path(path).stat().st_size:8d} {ours * 1e3:8.2f}ms "
              f"{trace * 1e3:8.2f}ms {ref * 1e3:8.2f}ms {ref / ours:6.1f}x")
    ratios.sort()
    print(f"\n{len(paths)} logs; total per pass: read_log {totals[0] * 1e3:.1f} ms, "
          f"read_trace {totals[1] * 1e3:.1f} ms, pydarshan {totals[2] * 1e3:.1f} ms")
    print(f"pydarshan / read_log: {totals[2] / totals[0]:.1f}x over the set, "
          f"median per log {ratios[len(ratios) // 2]:.1f}x, lowest {ratios[0]:.1f}x")
    print(f"pydarshan / read_trace: {totals[2] / totals[1]:.1f}x over the set")


if __name__ == "__main__":
    main()
