"""Year-profile generation speed and memory at two corpus sizes, in one run.

    .venv/bin/python -m benchmarks.bench_synth [--counts 10000 100000] [--where DIR ...]

Each (size, folder) runs ``mosaic.synth.year.generate_year`` in a fresh
process (so peak RSS is its own) and prints logs per wall-clock second, logs
per CPU second (the machine may be shared), peak RSS, the ratio of peak RSS
between the largest and smallest size (flat memory: ~1) and the projected
time for the paper's 462,502 logs. Folders: the default temporary folder
(disk) and ``/dev/shm`` (memory) side by side, to separate generation cost
from file-system cost. Generated corpora are deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PAPER_YEAR = 462_502
TARGET_RATE = 1_000  # logs/s the issue asks for
CHILD = """
import json, resource, sys
from mosaic.synth.year import generate_year
summary = generate_year(sys.argv[1], int(sys.argv[2]), seed=2019).as_dict()
summary["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(summary))
"""


def measure(folder: Path, count: int) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench_synth_", dir=folder))
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(out), str(count)], capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--where",
        nargs="+",
        default=[tempfile.gettempdir()] + (["/dev/shm"] if Path("/dev/shm").is_dir() else []),
    )
    args = parser.parse_args()
    print(f"{'folder':<12}{'logs':>9}{'logs/s':>9}{'logs/cpu-s':>12}{'peak MB':>9}{'462,502 logs':>14}")
    for where in args.where:
        rows = []
        for count in args.counts:
            r = measure(Path(where), count)
            rows.append(r)
            projected = PAPER_YEAR / r["logs_per_second"] / 60
            print(
                f"{where:<12}{r['logs']:>9}{r['logs_per_second']:>9.0f}"
                f"{r['logs_per_cpu_second']:>12.0f}{r['peak_rss_mb']:>9.0f}"
                f"{projected:>11.1f} min",
                flush=True,
            )
        print(
            f"  peak RSS {args.counts[-1]:,} / {args.counts[0]:,} logs: "
            f"{rows[-1]['peak_rss_mb'] / rows[0]['peak_rss_mb']:.2f}x; "
            f"CPU rate / target {TARGET_RATE} logs/s: "
            f"{rows[-1]['logs_per_cpu_second'] / TARGET_RATE:.2f}x"
        )


if __name__ == "__main__":
    main()
