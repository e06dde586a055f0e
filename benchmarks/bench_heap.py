"""glibc's default heap against the kept heap (``mosaic.limits.keep_heap``), per log.

    .venv/bin/python -m benchmarks.bench_heap [LOG ...] [--heavy 3] [--calls 100]

For each log, two fresh processes in turn (a process's allocator history
decides its thresholds, so neither inherits the other's): one with glibc's
defaults, one after ``keep_heap()``. Each reads the log's bytes once, warms
up, then times ``CALLS`` calls of ``read_log`` and of ``mosaic.categorize``
and counts their page faults (``getrusage``). Printed side by side: wall,
user and system time per call, faults per call, and the ratio of the two.
Without LOGs, ``--heavy N`` logs of ``mosaic.synth.heavy`` (hundreds to
thousands of records: the logs whose buffers the default heap gives back).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from mosaic.synth.heavy import generate_heavy

# Run in a fresh interpreter: argv = path, calls, "keep" or "default".
MEASURE = """
import json, resource, sys, time
import mosaic
from mosaic.darshan.reader import read_log
from mosaic.limits import keep_heap

path, calls, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "keep":
    keep_heap()
figures = {}
calls_of = {"read_log": lambda: read_log(path), "mosaic.categorize": lambda: mosaic.categorize(path)}
for name, call in calls_of.items():
    for _ in range(10):
        call()
    before, began = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(calls):
        call()
    after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - began
    figures[name] = {
        "wall": wall / calls,
        "user": (after.ru_utime - before.ru_utime) / calls,
        "sys": (after.ru_stime - before.ru_stime) / calls,
        "faults": (after.ru_minflt - before.ru_minflt) / calls,
    }
print(json.dumps(figures))
"""


def measure(path: Path, calls: int, mode: str) -> dict[str, dict[str, float]]:
    command = [sys.executable, "-c", MEASURE, str(path), str(calls), mode]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    figures: dict[str, dict[str, float]] = json.loads(done.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path, nargs="*")
    parser.add_argument("--heavy", type=int, default=3, help="heavy logs generated when no LOG is given")
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        logs = args.logs
        if not logs:
            generate_heavy(folder, args.heavy)
            logs = sorted(p for p in Path(folder).rglob("*.darshan*"))
        for path in logs:
            report(path, args.calls)


def report(path: Path, calls: int) -> None:
    """One log's two fresh processes, side by side."""
    default, kept = (measure(path, calls, mode) for mode in ("default", "keep"))
    print(f"{path.name} ({path.stat().st_size / 1000:.0f} kB), {calls} calls each")
    for name in default:
        cells = []
        for label, fig in (("default", default[name]), ("kept", kept[name])):
            cells.append(
                f"{label} {fig['wall'] * 1e3:6.3f} ms (user {fig['user'] * 1e3:.3f}, "
                f"sys {fig['sys'] * 1e3:.3f}, {fig['faults']:.0f} faults)"
            )
        ratio = default[name]["wall"] / kept[name]["wall"]
        print(f"  {name:17s} " + "  |  ".join(cells) + f"  ->  {ratio:.2f}x")


if __name__ == "__main__":
    main()
