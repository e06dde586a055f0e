"""Accuracy and where periodic verdicts come from, on every corpus (SPEC 3.4, 3.5).

    .venv/bin/python -m benchmarks.periodicity_sources OUT [--seeds 10] [--year 3000]

Writes the scenario catalog (``mosaic synth scenarios``, ``--seeds`` seeds),
the held-out corpus (``mosaic.holdout``, ``--seeds`` seeds) and the sample
year (``mosaic synth year``, ``--year`` logs) under OUT, categorizes them
in-process (the year once per group and once with ``--all-runs``), then
the real logs of ``tests/data/darshan-logs`` and
``tests/data/darshan-logs-runtime`` with ``--all-runs`` (no truth), and prints
one Markdown row per corpus: trace accuracy, periodicity and metadata
families, and the significant directions' periodic verdicts by what found
them: mean shift on the records' operations, mean shift on the heatmap's
bursts (and of those, how many the FFT alone would not have made periodic
under the verdict rule), or the FFT alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter
from pathlib import Path

from mosaic.analysis.verdict import RULES, VerdictSettings
from mosaic.config import Config

SHARED = Path(__file__).resolve().parents[1] / "tests" / "data"
SOURCES = ("meanshift_operations", "meanshift_heatmap", "by_bursts_only", "fft_alone")


def verdict_sources(results: Path, config: Config) -> Counter:
    """Significant and periodic directions of ``results/traces.jsonl``, periodic ones by source."""
    counts: Counter = Counter()
    with open(results / "traces.jsonl") as fh:
        for trace in map(json.loads, fh):
            for direction in ("read", "write"):
                periodicity = trace[direction]["periodicity"]
                if periodicity:
                    counts["significant"] += 1
                    source = _source(periodicity, config)
                    if source:
                        counts["periodic"] += 1
                        counts[source] += 1
                        counts["by_bursts_only"] += source == "meanshift_heatmap" and not _fft_alone(
                            periodicity["fft"], config
                        )
    return counts


def _fft_alone(fft: dict, config: Config) -> bool:
    """Periodic by the FFT alone under the configured verdict rule (mean shift saying no)."""
    return RULES[config.verdict_rule](False, fft, VerdictSettings.of(config))


def _source(periodicity: dict, config: Config) -> str | None:
    if not periodicity["verdict"]["periodic"]:
        return None
    meanshift = periodicity["meanshift"]
    if not meanshift["periodic"]:
        return "fft_alone"
    return "meanshift_heatmap" if meanshift["source"] == "heatmap" else "meanshift_operations"


def write_corpora(out: Path, seeds: int, year_logs: int) -> dict[str, tuple[Path, Path | None, bool]]:
    """{corpus: (logs folder, truth.jsonl or None, all runs)}; synthetic corpora written once."""
    from mosaic.holdout.writing import generate
    from mosaic.synth.corpus import write_scenarios
    from mosaic.synth.year import generate_year

    makers = {
        "scenario catalog": lambda path: write_scenarios(path, seeds),
        "held-out generator": lambda path: generate(path, seeds),
        "sample year": lambda path: generate_year(path, year_logs),
    }
    corpora = {}
    for name, make in makers.items():
        path = out / name.replace(" ", "_")
        if not (path / "truth.jsonl").exists():
            make(path)
        corpora[name] = (path, path / "truth.jsonl", False)
    corpora["sample year, all runs"] = (corpora["sample year"][0], corpora["sample year"][1], True)
    for folder in ("darshan-logs", "darshan-logs-runtime"):
        if (SHARED / folder).is_dir():
            corpora[f"real logs {folder}/, all runs"] = (SHARED / folder, None, True)
    return corpora


def measure(logs: Path, truth: Path | None, results: Path, config: Config) -> dict:
    """Categorize ``logs`` into ``results`` and score them; one table row's numbers."""
    from mosaic.corpus.pipeline import run
    from mosaic.synth.evaluate import evaluate

    run([str(logs)], results, config, workers=0)
    row = dict(verdict_sources(results, config))
    if truth is not None:
        traces = evaluate(results, truth)["traces"]
        row.update(scored=traces["scored"], accuracy=traces["accuracy"], families=traces["families"])
    return row


def markdown(rows: dict[str, dict]) -> str:
    def pct(value) -> str:
        return "—" if value is None else f"{100 * value:.2f} %"

    lines = [
        "| corpus | logs scored | trace accuracy | read / write periodicity | metadata "
        "| significant directions | periodic: mean shift on operations / on heatmap bursts "
        "(by bursts only) / FFT alone |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        families = row.get("families", {})
        lines.append(
            f"| {name} | {row.get('scored', '—')} | {pct(row.get('accuracy'))} "
            f"| {pct(families.get('read_periodicity'))} / {pct(families.get('write_periodicity'))} "
            f"| {pct(families.get('metadata'))} | {row.get('significant', 0)} "
            f"| {row.get('meanshift_operations', 0)} / {row.get('meanshift_heatmap', 0)} "
            f"({row.get('by_bursts_only', 0)}) / {row.get('fft_alone', 0)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the corpora and results")
    parser.add_argument("--seeds", type=int, default=10, help="seeds of the catalog and held-out corpora")
    parser.add_argument("--year", type=int, default=3000, help="logs of the sample year")
    args = parser.parse_args(argv)
    rows = {}
    for name, (logs, truth, all_runs) in write_corpora(args.out, args.seeds, args.year).items():
        config = dataclasses.replace(Config(), all_runs=all_runs)
        results = args.out / "results" / name.replace(" ", "_").replace("/", "").replace(",", "")
        rows[name] = measure(logs, truth, results, config)
    print(markdown(rows))


if __name__ == "__main__":
    main()
