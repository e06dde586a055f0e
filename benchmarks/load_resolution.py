"""How a run's concurrent load ranks with its I/O time at each resolution (SPEC 3.10).

    .venv/bin/python -m benchmarks.load_resolution [--out D]

Runs ``mosaic run`` over tests/data/darshan-logs-interference (real IOR jobs on one
60 MB/s throttled file system), then sets the 18 victims' POSIX ``agg_time_by_slowest``
(darshan-parser --perf) against the other runs' bytes per second during their I/O:
exactly (``run_load``: interval against interval), and on grids of 60, 10, 1 and 0.1 s
with the bin edges at multiples of the bin and shifted by half a bin (a grid's load is
the others' bytes in the bins this run moved bytes in, over those bins' seconds).
Prints Spearman's rho for each.
"""

from __future__ import annotations

import argparse
import csv
import json
import sqlite3
import tempfile
from pathlib import Path

from scipy.stats import spearmanr

from mosaic.activity import unpack
from mosaic.config import Config
from mosaic.corpus.pipeline import run
from mosaic.corpus.timeline import spread

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "darshan-logs-interference"
IFS = "/mnt/mosaic-ifs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    truth = {
        json.loads(line)["file"]: json.loads(line) for line in (DATA / "truth.jsonl").read_text().splitlines()
    }
    with open(DATA / "darshan-parser-perf.tsv") as fh:
        io_time = {
            r["file"]: float(r["agg_time_by_slowest_s"])
            for r in csv.DictReader(fh, delimiter="\t")
            if r["module"] == "POSIX"
        }
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        run([DATA / "logs"], out, Config(shared_file_systems=(IFS,)), workers=0)
        db = sqlite3.connect(out / "store.sqlite")
        rows = db.execute(
            "SELECT l.file, a.parts, r.read_rate + r.write_rate FROM logs l "
            "JOIN run_activity a ON a.run = l.run JOIN run_load r ON r.run = l.run"
        ).fetchall()
        db.close()
    victims = sorted(f for f, _, _ in rows if truth[f]["group"] == "sensitive")
    exact = {f: rate for f, _, rate in rows}
    rho = spearmanr([exact[f] for f in victims], [io_time[f] for f in victims]).statistic
    print(f"exact intervals: rho {rho:.3f}")
    activities = {f: unpack(parts) for f, parts, _ in rows}
    for width in (60.0, 10.0, 1.0, 0.1):
        found = []
        for shift in (0.0, width / 2):
            own: dict[str, dict[int, float]] = {}
            total: dict[int, float] = {}
            for f, activity in activities.items():
                fs = activity.by_fs.get(IFS)
                if fs is None:
                    continue
                t0 = activity.start_epoch + shift
                bins, (moved,) = spread(fs.start + t0, fs.end + t0, [fs.read + fs.write], width)
                per: dict[int, float] = {}
                for b, x in zip(bins.tolist(), moved.tolist()):
                    per[b] = per.get(b, 0.0) + x
                own[f] = per
                for b, x in per.items():
                    total[b] = total.get(b, 0.0) + x
            loads = []
            for f in victims:
                busy = [b for b, x in own[f].items() if x > 0]
                loads.append(sum(total[b] - own[f][b] for b in busy) / (len(busy) * width))
            found.append(spearmanr(loads, [io_time[f] for f in victims]).statistic)
        print(
            f"{width:g} s grid: rho {found[0]:.3f} (edges at multiples), {found[1]:.3f} (shifted half a bin)"
        )


if __name__ == "__main__":
    main()
