"""Logs darshan-runtime wrote get the labels their programs' known I/O must get.

Each log of ``tests/data/darshan-logs-runtime/`` comes from a program whose I/O
we scripted (its README); ``expected.jsonl`` beside the logs holds, per log
and family, the labels the method's rules (docs/method.md) must give (``must``) and must not give
(``must_not``), in the truth format of ``mosaic synth``. A family is right
as ``mosaic eval`` scores it (:func:`mosaic.synth.evaluate.family_right`).
"""

from __future__ import annotations

import json

import pytest

import mosaic
from mosaic.analysis.labels import FAMILIES
from mosaic.synth.evaluate import family_right
from mosaic_testing.parser_text import RUNTIME_LOGS


def cases() -> list:
    out = []
    for truth_file in sorted(RUNTIME_LOGS.glob("*/expected.jsonl")):
        for line in truth_file.read_text().splitlines():
            truth = json.loads(line)
            name = f"{truth_file.parent.name}/{truth['file']}"
            out.append(pytest.param(name, truth, id=name))
    return out


CASES = cases()


def test_every_runtime_log_has_a_truth_line():
    """Each log in the folders has exactly one truth line, and each line its log."""
    logs = {f"{p.parent.name}/{p.name}" for p in RUNTIME_LOGS.glob("*/*.darshan*")}
    named = [name for name, _ in (case.values for case in CASES)]
    assert logs and sorted(named) == sorted(logs)


@pytest.mark.parametrize("name, truth", CASES)
def test_runtime_log_gets_its_expected_labels(name, truth):
    assert truth["valid"]
    result = mosaic.categorize(RUNTIME_LOGS / name)
    assert result["status"] == "ok", result
    assert result["partial"] == truth["partial"]
    categories = set(result["categories"])
    wrong = {
        family: {
            "missing": sorted(set(expected["must"]) - categories),
            "unwanted": sorted(set(expected["must_not"]) & categories),
        }
        for family, expected in truth["expected"].items()
        if not family_right(expected, categories)
    }
    assert set(truth["expected"]) == set(FAMILIES)
    assert not wrong, wrong
