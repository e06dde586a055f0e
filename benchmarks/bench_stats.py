"""Corpus statistics (SPEC 3.8) and `mosaic figures`, against the hold-everything way.

    .venv/bin/python -m benchmarks.bench_stats [--traces N] [--distinct K]

Both sides see the same generated corpus: N traces whose label sets are drawn
(Zipf-like) from K distinct sets, each with a group run count. Ours streams
them through `CorpusStats`; the baseline keeps every trace as a row of a
pandas one-hot table and computes each pair's Jaccard index and P(B | A)
column by column, as a script over a results table would. Prints time per
trace, peak Python memory (tracemalloc), the largest difference between the
two Jaccard matrices, and the time `mosaic figures` takes on the summary.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from mosaic.analysis.labels import ALL_LABELS
from mosaic.corpus.stats import CorpusStats, stability_summary


def corpus(traces: int, distinct: int, seed: int = 2019):
    rng = np.random.default_rng(seed)
    labels = np.array(ALL_LABELS)
    sets = [list(labels[rng.random(len(labels)) < 0.12]) for _ in range(distinct)]
    popularity = 1.0 / np.arange(1, distinct + 1)
    picks = rng.choice(distinct, size=traces, p=popularity / popularity.sum())
    runs = rng.geometric(0.05, size=traces)
    return [sets[i] for i in picks], runs


def measured(function, *args):
    """(result, seconds, peak bytes): timed alone, then re-run under tracemalloc
    (which slows allocation-heavy code, so it must not be in the timing)."""
    start = time.perf_counter()
    result = function(*args)
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    function(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, elapsed, peak


def streamed(label_sets, runs):
    stats = CorpusStats()
    for labels, weight in zip(label_sets, runs.tolist()):
        stats.add(labels, 1, weight)
    return stats.to_dict()


def held_in_memory(label_sets, runs):
    """All traces as one-hot rows, then pairwise column statistics (single run view)."""
    table = (
        pd.DataFrame([{label: True for label in labels} for labels in label_sets], columns=list(ALL_LABELS))
        .fillna(False)
        .astype(bool)
    )
    table["runs"] = runs
    present = [label for label in ALL_LABELS if table[label].any()]
    jaccard = pd.DataFrame(0.0, index=present, columns=present)
    conditional = jaccard.copy()
    for a in present:
        for b in present:
            both = (table[a] & table[b]).sum()
            jaccard.loc[a, b] = both / (table[a] | table[b]).sum()
            conditional.loc[a, b] = both / table[a].sum()
    return jaccard, conditional


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--distinct", type=int, default=500)
    args = parser.parse_args()
    label_sets, runs = corpus(args.traces, args.distinct)

    ours, ours_time, ours_peak = measured(streamed, label_sets, runs)
    (jaccard, _), base_time, base_peak = measured(held_in_memory, label_sets, runs)
    view = ours["jaccard"]["single_run"]
    difference = np.abs(
        np.asarray(view["matrix"]) - jaccard.loc[view["labels"], view["labels"]].to_numpy()
    ).max()

    print(f"{args.traces:,} traces, {args.distinct} distinct label sets")
    print(f"{'':28s}{'time/trace':>12s}{'peak memory':>14s}")
    print(
        f"{'CorpusStats (streamed)':28s}{ours_time / args.traces * 1e6:10.1f} us{ours_peak / 2**20:11.1f} MiB"
    )
    print(f"{'pandas table (held)':28s}{base_time / args.traces * 1e6:10.1f} us{base_peak / 2**20:11.1f} MiB")
    print(
        f"speed-up x{base_time / ours_time:.1f}, memory /{base_peak / ours_peak:.0f}, "
        f"max |Jaccard difference| {difference:.2e}"
    )

    from mosaic.report.figures import render_figures
    from mosaic.report.markdown import write_report

    summary = {
        "funnel": {
            "files_seen": args.traces,
            "non_log_files": 0,
            "logs": args.traces,
            "evicted": {},
            "evicted_total": 0,
            "valid": args.traces,
            "partial": 0,
            "groups": args.traces,
            "categorized": args.traces,
        },
        **ours,
        "stability": stability_summary(np.random.default_rng(1).random(500)),
    }
    with tempfile.TemporaryDirectory() as out:
        (Path(out) / "summary.json").write_text(json.dumps(summary))
        start, cpu = time.perf_counter(), time.process_time()
        drawn = render_figures(Path(out))
        write_report(Path(out))
        print(
            f"mosaic figures: {sum(d is not None for d in drawn.values())} figures (PNG + SVG) "
            f"and report.md in {time.perf_counter() - start:.1f} s "
            f"({time.process_time() - cpu:.1f} s CPU), every label present"
        )


if __name__ == "__main__":
    main()
