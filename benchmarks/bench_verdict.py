"""Trace accuracy of every periodicity verdict rule on ground-truth corpora (SPEC 3.5).

    .venv/bin/python -m benchmarks.bench_verdict OUT [--seeds 20] [--year 3000]

Writes four synthetic corpora under OUT (skipped when already there), reads
each valid log once, categorizes it once per ``verdict.RULES`` entry and
scores the results with :func:`mosaic.synth.evaluate.evaluate`:

- ``scenarios``: the scenario catalog (``mosaic synth scenarios``), ``--seeds`` seeds;
- ``year``: a Blue-Waters-like year (``mosaic synth year``), ``--year`` logs;
- ``random``: hard negatives, bursts at random times (no period), 3 seeds of
  60 layouts; the catalog has no aperiodic bursty I/O, where an FFT is most
  easily fooled;
- ``heldout``: the catalog's periodic scenarios under new names (new random
  draws) plus a second random-burst set, to check thresholds chosen on the
  others;
- ``holdout``: the independent generator written from SPEC alone
  (``mosaic.holdout``), ``--seeds`` / 4 seeds.

Every valid log is scored (not only group representatives). Prints one
Markdown table: trace accuracy and the two periodicity families per corpus.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

RANDOM_LAYOUTS = 60  # scenarios of random bursts per hard-negative set
RANDOM_SEEDS = 3


def random_bursts(rng_seed: int, tag: str):
    """Scenarios whose bursts fall at uniform random times: never periodic."""
    from mosaic.synth.scenarios import Phase, Range, Scenario

    rng = np.random.default_rng(rng_seed)
    rows = []
    for i in range(RANDOM_LAYOUTS):
        direction = ("read", "write")[i % 2]
        starts = np.sort(rng.uniform(0, 0.98, int(rng.integers(6, 40))))
        phases = tuple(
            Phase(direction, float(s), float(rng.uniform(0.001, 0.015)), Range(3e8, 1e10), shared=True)
            for s in starts
        )
        rows.append(
            Scenario(
                f"random_bursts_{tag}_{direction}_{i:02d}",
                ranks=Range(4, 64, integer=True),
                run_time=Range(900, 43200),
                phases=phases,
            )
        )
    return tuple(rows)


def write_corpora(out: Path, seeds: int, year_logs: int) -> dict[str, Path]:
    from mosaic.holdout.writing import generate
    from mosaic.synth.catalog import SCENARIOS
    from mosaic.synth.corpus import write_scenarios
    from mosaic.synth.year import generate_year

    periodic = tuple(dataclasses.replace(s, name=f"{s.name}_heldout") for s in SCENARIOS if s.periodic)
    makers = {
        "scenarios": lambda path: write_scenarios(path, seeds=seeds),
        "year": lambda path: generate_year(path, year_logs),
        "random": lambda path: write_scenarios(path, RANDOM_SEEDS, scenarios=random_bursts(11, "a")),
        "heldout": lambda path: write_scenarios(
            path, max(seeds // 2, 1), scenarios=periodic + random_bursts(12, "b")
        ),
        "holdout": lambda path: generate(path, max(seeds // 4, 1)),
    }
    corpora = {}
    for name, make in makers.items():
        corpora[name] = out / name
        if not (corpora[name] / "truth.jsonl").exists():
            make(corpora[name])
    return corpora


def score_rules(corpus: Path, results: Path) -> dict[str, dict]:
    """Trace scores of every rule on one corpus."""
    from mosaic.analysis.categorize import categorize_trace
    from mosaic.analysis.verdict import RULES
    from mosaic.config import Config
    from mosaic.errors import LogError
    from mosaic.synth.evaluate import evaluate
    from mosaic.trace import read_trace

    base = Config()
    traces = []
    with open(corpus / "truth.jsonl") as fh:
        for line in fh:
            truth = json.loads(line)
            if truth["valid"]:
                try:
                    traces.append(read_trace(corpus / truth["file"], base))
                except (LogError, OSError):  # archive members: read by `mosaic run` only
                    continue
    scores = {}
    for rule in RULES:
        folder = results / corpus.name / rule
        folder.mkdir(parents=True, exist_ok=True)
        config = base.replace(verdict_rule=rule)
        with open(folder / "traces.jsonl", "w") as fh:
            for trace in traces:
                fh.write(json.dumps(categorize_trace(trace, config)) + "\n")
        scores[rule] = evaluate(folder, corpus / "truth.jsonl")["traces"]
    return scores


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--year", type=int, default=3000)
    options = parser.parse_args(argv)
    corpora = write_corpora(options.out, options.seeds, options.year)
    table = {name: score_rules(path, options.out / "results") for name, path in corpora.items()}
    (options.out / "scores.json").write_text(json.dumps(table, indent=1))
    names = list(corpora)
    print(
        "| rule | "
        + " | ".join(
            f"{n} ({table[n]['meanshift']['scored']} logs): all / read per. / write per." for n in names
        )
        + " |"
    )
    print("|---" * (len(names) + 1) + "|")
    for rule in table[names[0]]:
        cells = []
        for name in names:
            s = table[name][rule]
            cells.append(
                f"{s['accuracy']:.2%} / {s['families']['read_periodicity']:.2%}"
                f" / {s['families']['write_periodicity']:.2%}"
            )
        print(f"| `{rule}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
