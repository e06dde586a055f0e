"""Categorize a held-out corpus, score it, and explain misses (``python -m mosaic.holdout``)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mosaic.config import Config
from mosaic.holdout.design import MB
from mosaic.holdout.scenarios import SCENARIOS
from mosaic.holdout.writing import generate


def run_and_score(
    logs: str | Path, results: str | Path, config: Config | None = None, workers: int = 0
) -> dict[str, Any]:
    """Categorize ``logs`` (in-process with ``workers`` 0, else in that many bounded
    workers, as ``mosaic run`` does) and score them against their truth."""
    from mosaic.corpus import pipeline
    from mosaic.synth.evaluate import evaluate

    pipeline.run([str(logs)], results, config or Config(), workers=workers)
    return evaluate(results, Path(logs) / "truth.jsonl")


def matched_results(logs: str | Path, results: str | Path) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(truth line, result object) of every categorized log of the corpus."""
    truth = {t["file"]: t for t in map(json.loads, open(Path(logs) / "truth.jsonl"))}
    for obj in map(json.loads, open(Path(results) / "traces.jsonl")):
        name = "/".join(Path(obj["file"]).parts[-2:])  # truth names are SCENARIO/FILE
        if name in truth:
            yield truth[name], obj


def wrong_families(expected: dict[str, Any], got: set[Any]) -> dict[str, tuple[list[Any], list[Any]]]:
    """Per wrong family: (missing must labels, present must_not labels)."""
    return {
        fam: (sorted(set(e["must"]) - got), sorted(set(e["must_not"]) & got))
        for fam, e in expected["families"].items()
        if not set(e["must"]) <= got or set(e["must_not"]) & got
    }


BREAKDOWN_KEYS = ("format", "big_endian", "compression", "streams", "mpiio", "broken", "partial")


def accuracy_by_log_shape(logs: str | Path, results: str | Path) -> str:
    """Trace accuracy per format and per adversarial extra: the reader must not matter."""
    tally: dict[tuple[Any, ...], list[int]] = {}
    for expected, obj in matched_results(logs, results):
        right = not wrong_families(expected, set(obj["categories"]))
        for key in BREAKDOWN_KEYS:
            cell = tally.setdefault((key, str(expected["params"].get(key))), [0, 0])
            cell[0] += right
            cell[1] += 1
    return "\n".join(
        f"  {key + '=' + value:<24}{100 * r / n:6.1f}%  ({n})"
        for (key, value), (r, n) in sorted(tally.items())
    )


def explain_wrong(logs: str | Path, results: str | Path, limit: int = 3) -> str:
    """Per scenario, up to ``limit`` wrong logs: what was expected, got, and why.

    Shows the numbers behind each wrong family (chunk bytes, both
    periodicity detectors, metadata statistics) so a miss can be traced to
    the categorizer, to a SPEC rule or to this generator's truth.
    """
    shown: dict[str, int] = {}
    lines = []
    for expected, obj in matched_results(logs, results):
        wrong = wrong_families(expected, set(obj["categories"]))
        if not wrong or shown.get(expected["scenario"], 0) >= limit:
            continue
        shown[expected["scenario"]] = shown.get(expected["scenario"], 0) + 1
        lines.append(f"{expected['file']}  params={json.dumps(expected['params'])}")
        for fam, (missing, extra) in wrong.items():
            lines.append(f"  {fam}: missing {missing} unexpected {extra}")
            direction = fam.split("_")[0]
            if direction in ("read", "write"):
                d = obj[direction]
                per = d.get("periodicity") or {}
                ms, fft, verdict = (per.get(k) or {} for k in ("meanshift", "fft", "verdict"))
                lines.append(
                    f"    chunks={[round(x / MB, 1) for x in d['chunks_bytes']]} MB "
                    f"ops={d['operations']} merged={d['merged_operations']} "
                    f"minor={d.get('minor_operations')}"
                )
                lines.append(
                    f"    meanshift periodic={ms.get('periodic')} "
                    f"share={ms.get('share')} segments={ms.get('segments')} ops="
                    + json.dumps(
                        [
                            {k: round(v, 3) if isinstance(v, float) else v for k, v in op.items()}
                            for op in ms.get("operations", [])
                        ][:4]
                    )
                )
                lines.append(
                    f"    fft periodic={fft.get('periodic')} period={fft.get('period')} "
                    f"score={fft.get('score')} conf={fft.get('confidence')} "
                    f"signif={fft.get('significance')}  verdict={verdict}"
                )
            else:
                lines.append(f"    metadata={obj['metadata']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    from mosaic.synth.evaluate import format_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder for the logs, truth.jsonl and results/")
    parser.add_argument("--seeds", type=int, default=20, help="logs per scenario")
    parser.add_argument(
        "--scenario", action="append", choices=sorted(SCENARIOS), help="only these scenarios (repeatable)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="batch workers, under their memory bound as in `mosaic run` [default: every CPU; "
        "0: in this process, without that bound]",
    )
    args = parser.parse_args(argv)
    logs = Path(args.out) / "logs"
    generate(logs, args.seeds, args.scenario)
    scores = run_and_score(logs, Path(args.out) / "results", workers=args.workers)
    print(format_table(scores))
    results = Path(args.out) / "results"
    print("\naccuracy by log format and adversarial extra\n" + accuracy_by_log_shape(logs, results))
    print("\nwrong logs (up to 3 per scenario)\n" + explain_wrong(logs, results))


if __name__ == "__main__":
    main()
