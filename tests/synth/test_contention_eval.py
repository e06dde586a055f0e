"""`mosaic eval`'s contention figures and per-log I/O check, on hand-written truth."""

from __future__ import annotations

import json
from pathlib import Path

from mosaic.synth.contention_eval import contention_figures, format_contention, io_scores


def _c(kind: str, slowed: bool, slowdown: float, effect: float = 0.0) -> dict:
    return {
        "slowed": slowed,
        "slowdown": slowdown,
        "by": [],
        "demand_bps": 1.0,
        "got_bps": 1.0,
        "group_sensitivity": kind,
        "effect": effect,
    }


def test_figures_by_hand(tmp_path: Path) -> None:
    lines = [
        {"file": "a", "contention": _c("sensitive", True, 1.5, 0.6)},
        {"file": "b", "contention": _c("sensitive", False, 1.0, 0.6)},
        {"file": "c", "contention": _c("sensitive", True, 2.0, 1.0)},
        {"file": "d", "contention": _c("aggressor", False, 1.0)},
        {"file": "e"},  # a plain year's line: not counted
    ]
    path = tmp_path / "truth.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    f = contention_figures(path)
    assert f is not None
    assert (f["runs"], f["slowed"], f["slowed_share"]) == (4, 2, 0.5)
    assert f["slowdown_of_slowed"]["p50"] == 1.75 and f["slowdown_of_slowed"]["max"] == 2.0
    assert f["by_sensitivity"]["sensitive"] == {"runs": 3, "slowed_share": 2 / 3, "slowdown_p50": 1.75}
    assert f["sensitive_by_effect"]["0.6"]["slowed_share"] == 0.5
    assert f["sensitive_by_effect"]["1"]["slowdown_p50"] == 2.0
    assert any("50.0% of 4 runs slowed" in line for line in format_contention(f))
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"file": "e"}) + "\n")
    assert contention_figures(plain) is None


def test_io_check_against_results(tmp_path: Path) -> None:
    io = {
        "POSIX": {"total_bytes": 100.0, "agg_time_by_slowest": 2.0, "agg_perf_by_slowest": 100 / 1048576 / 2}
    }
    (tmp_path / "truth.jsonl").write_text(
        json.dumps({"file": "x.darshan", "io": io})
        + "\n"
        + json.dumps({"file": "y.darshan", "io": io})
        + "\n"
    )
    results = tmp_path / "r"
    results.mkdir()
    off = {"POSIX": {**io["POSIX"], "agg_time_by_slowest": 2.1}}
    (results / "traces.jsonl").write_text(
        json.dumps({"file": "/in/x.darshan", "performance": {"darshan_util": io}})
        + "\n"
        + json.dumps({"file": "/in/y.darshan", "performance": {"darshan_util": off}})
        + "\n"
    )
    names = {"x.darshan", "y.darshan"}

    def match(name: str) -> str | None:
        return Path(name).name if Path(name).name in names else None

    got = io_scores(results, tmp_path / "truth.jsonl", match)
    assert got == {"checked": 2, "accuracy": 0.5, "wrong_examples": ["y.darshan POSIX"]}
    (results / "traces.jsonl").write_text(json.dumps({"file": "/in/x.darshan"}) + "\n")
    assert io_scores(results, tmp_path / "truth.jsonl", match) == {
        "checked": 0,
        "accuracy": None,
        "wrong_examples": [],
    }
    (tmp_path / "t2.jsonl").write_text(json.dumps({"file": "x.darshan"}) + "\n")
    assert io_scores(results, tmp_path / "t2.jsonl", match) is None
