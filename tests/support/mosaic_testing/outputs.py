"""Read a run's outputs and the generator's truth; compare runs (all but timings)."""

import json
from pathlib import Path


def comparable(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("timings")
    return {
        "traces": (out / "traces.jsonl").read_text(),
        "evicted": (out / "evicted.jsonl").read_text(),
        "summary": summary,
    }


def lines(out: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (out / name).read_text().splitlines()]


def truth(corpus: Path) -> list[dict]:
    """The generator's ground truth: file, valid, reason, group, heaviest..."""
    return [json.loads(line) for line in (corpus / "truth.jsonl").read_text().splitlines()]
