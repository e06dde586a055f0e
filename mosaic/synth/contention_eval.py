"""What ``mosaic eval`` reports of a contention year's truth, and the per-log I/O time check.

:func:`contention_figures` streams truth.jsonl (one line at a time: memory
flat) and summarizes its ``contention`` objects: share of runs slowed, the
slowdown distribution, per designed sensitivity and per designed effect.
:func:`io_scores` checks each categorized log's darshan-util figures (the
result object's ``performance["darshan_util"]``, when the results carry it)
against the truth's ``io`` totals: I/O time and bandwidth per log.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

IO_TOLERANCE = 1e-6  # relative: the truth's figures are computed from the bytes written


def _quantiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p90": None, "p99": None, "max": None}
    a = np.asarray(values)
    return {
        "p50": float(np.quantile(a, 0.5)),
        "p90": float(np.quantile(a, 0.9)),
        "p99": float(np.quantile(a, 0.99)),
        "max": float(a.max()),
    }


def contention_figures(truth_path: str | Path) -> dict[str, Any] | None:
    """Summary of the truth's ``contention`` objects, or None when it has none."""
    runs = slowed = 0
    slowdowns: list[float] = []
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    kind_slowdowns: dict[str, list[float]] = defaultdict(list)
    by_effect: dict[float, list[int]] = defaultdict(lambda: [0, 0])
    effect_slowdowns: dict[float, list[float]] = defaultdict(list)
    with open(truth_path) as fh:
        for line in fh:
            if '"contention"' not in line:
                continue
            c = json.loads(line).get("contention")
            if not isinstance(c, dict):
                continue
            runs += 1
            kind = str(c.get("group_sensitivity", "none"))
            by_kind[kind][0] += 1
            if kind == "sensitive":
                by_effect[float(c.get("effect", 0.0))][0] += 1
            if c.get("slowed"):
                slowed += 1
                s = float(c.get("slowdown", 1.0))
                slowdowns.append(s)
                by_kind[kind][1] += 1
                kind_slowdowns[kind].append(s)
                if kind == "sensitive":
                    by_effect[float(c.get("effect", 0.0))][1] += 1
                    effect_slowdowns[float(c.get("effect", 0.0))].append(s)
    if not runs:
        return None
    return {
        "runs": runs,
        "slowed": slowed,
        "slowed_share": slowed / runs,
        "slowdown_of_slowed": _quantiles(slowdowns),
        "by_sensitivity": {
            k: {"runs": n, "slowed_share": s / n, "slowdown_p50": _quantiles(kind_slowdowns[k])["p50"]}
            for k, (n, s) in sorted(by_kind.items())
        },
        "sensitive_by_effect": {
            f"{e:g}": {
                "runs": n,
                "slowed_share": s / n,
                "slowdown_p50": _quantiles(effect_slowdowns[e])["p50"],
            }
            for e, (n, s) in sorted(by_effect.items())
        },
    }


def io_scores(
    results_dir: str | Path, truth_path: str | Path, match: Callable[[str], str | None]
) -> dict[str, Any] | None:
    """Per log and module, the results' darshan-util I/O time and bandwidth against the truth's
    ``io``; None when the truth has no ``io``. ``checked`` 0 when the results carry none."""
    truth: dict[str, dict[str, Any]] = {}
    with open(truth_path) as fh:
        for line in fh:
            if '"io"' in line:
                t = json.loads(line)
                if isinstance(t.get("io"), dict):
                    truth[t["file"]] = t["io"]
    if not truth:
        return None
    checked = right = 0
    wrong: list[str] = []
    traces = Path(results_dir) / "traces.jsonl"
    if traces.is_file():
        with open(traces) as fh:
            for line in fh:
                if '"darshan_util"' not in line:
                    continue
                obj = json.loads(line)
                name = match(obj.get("file", ""))
                util = (obj.get("performance") or {}).get("darshan_util") or {}
                if name is None or name not in truth:
                    continue
                for module, expected in truth[name].items():
                    got = util.get(module)
                    if not isinstance(got, dict):
                        continue
                    checked += 1
                    ok = all(
                        _close(got.get(key), expected.get(key))
                        for key in ("total_bytes", "agg_time_by_slowest", "agg_perf_by_slowest")
                    )
                    right += ok
                    if not ok and len(wrong) < 5:
                        wrong.append(f"{name} {module}")
    return {"checked": checked, "accuracy": right / checked if checked else None, "wrong_examples": wrong}


def _close(got: Any, expected: Any) -> bool:
    if expected is None or got is None:
        return expected is None and got is None
    return bool(abs(float(got) - float(expected)) <= IO_TOLERANCE * max(abs(float(expected)), 1e-9))


def format_contention(figures: dict[str, Any]) -> list[str]:
    """Lines of the plain-text report."""
    q = figures["slowdown_of_slowed"]

    def f(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    lines = [
        "",
        f"contention (truth)  {100 * figures['slowed_share']:5.1f}% of {figures['runs']} runs slowed; "
        f"slowdown of the slowed p50 {f(q['p50'])}, p90 {f(q['p90'])}, p99 {f(q['p99'])}, max {f(q['max'])}",
    ]
    lines += [
        f"  {k:<22}{100 * v['slowed_share']:5.1f}% slowed of {v['runs']}, "
        f"median slowdown {f(v['slowdown_p50'])}"
        for k, v in figures["by_sensitivity"].items()
    ]
    lines += [
        f"  sensitive, effect {e:<4}{100 * v['slowed_share']:5.1f}% slowed of {v['runs']}, "
        f"median slowdown {f(v['slowdown_p50'])}"
        for e, v in figures["sensitive_by_effect"].items()
    ]
    return lines
